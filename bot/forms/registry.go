package forms

import (
	"slices"
	"sync"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// A Card is a form's message in a chat, for the user whose call asks. A
// form has one card, or two when asked in a group and answered in the
// user's private chat (agent.Form.Private): the group's, which Who names
// the user on, and the private chat's.
type Card struct {
	ChatID int64
	Key    string // the conversation it was sent for (a chat, or a topic)
	MsgID  int    // 0 while the card is being sent
	User   int64
	Who    string
	// Shown is the version of the form last shown on it (agent.Form's).
	Shown int64
}

// A Registry holds the cards this instance sent, by form id. The zero
// value is empty and ready.
type Registry struct {
	mu sync.Mutex
	m  map[int64][]Card
}

// Put records c, in place of the form's card in the same chat (keeping
// the later of the versions they show).
func (r *Registry) Put(id int64, c Card) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[int64][]Card{}
	}
	cards := r.m[id]
	for i := range cards {
		if cards[i].ChatID == c.ChatID {
			c.Shown = max(c.Shown, cards[i].Shown)
			cards[i] = c
			return
		}
	}
	r.m[id] = append(cards, c)
}

// Get returns the form's card in chatID.
func (r *Registry) Get(id, chatID int64) (Card, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.m[id] {
		if c.ChatID == chatID {
			return c, true
		}
	}
	return Card{}, false
}

// Show records that the form's card in chatID is to show version, and
// reports whether it may: not when it shows a later one already.
func (r *Registry) Show(id, chatID, version int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range r.m[id] {
		if c.ChatID == chatID {
			if version < c.Shown {
				return false
			}
			r.m[id][i].Shown = version
		}
	}
	return true
}

// All returns the form's cards.
func (r *Registry) All(id int64) []Card {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Card(nil), r.m[id]...)
}

// Drop forgets the form's cards.
func (r *Registry) Drop(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, id)
}

// DropIn forgets the form's card in chatID.
func (r *Registry) DropIn(id, chatID int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[id] = slices.DeleteFunc(r.m[id], func(c Card) bool { return c.ChatID == chatID })
	if len(r.m[id]) == 0 {
		delete(r.m, id)
	}
}

// Answered finds the form a message m of user, in the conversation key,
// answers: the one whose card m replies to, or else the oldest card of
// user in the conversation sent before m, or else one being sent as m
// came (the user answers what Telegram showed before the send returned
// here). A message older than every card (the one that started the call,
// run again after a restart) answers none; nor does one in another of the
// chat's topics, unless the forum shares one conversation.
func (r *Registry) Answered(key string, user int64, m *tgbotapi.Message) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best, sending int64
	bestMsg := 0
	for id, cards := range r.m {
		for _, c := range cards {
			if c.ChatID != m.Chat.ID || c.Key != key || c.User != user {
				continue
			}
			if m.ReplyToMessage != nil && c.MsgID != 0 && m.ReplyToMessage.MessageID == c.MsgID {
				return id, true
			}
			switch {
			case c.MsgID == 0:
				sending = id
			case c.MsgID < m.MessageID && (bestMsg == 0 || c.MsgID < bestMsg):
				best, bestMsg = id, c.MsgID
			}
		}
	}
	if bestMsg == 0 && sending != 0 {
		return sending, true
	}
	return best, bestMsg != 0
}
