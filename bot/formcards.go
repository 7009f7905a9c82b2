package bot

import (
	"slices"
	"sync"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// A formCard is a form's message in a chat, for the user whose call
// asks. A form has one card, or two when asked in a group and answered in
// the user's private chat (agent.Form.Private): the group's, which who
// names the user on, and the private chat's.
type formCard struct {
	chatID int64
	key    string // the conversation it was sent for (a chat, or a topic)
	msgID  int    // 0 while the card is being sent
	user   int64
	who    string
}

// formCards are the cards this instance sent, by form id.
type formCards struct {
	mu sync.Mutex
	m  map[int64][]formCard
}

// put records c, in place of the form's card in the same chat.
func (fc *formCards) put(id int64, c formCard) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.m == nil {
		fc.m = map[int64][]formCard{}
	}
	cards := fc.m[id]
	for i := range cards {
		if cards[i].chatID == c.chatID {
			cards[i] = c
			return
		}
	}
	fc.m[id] = append(cards, c)
}

// get returns the form's card in chatID.
func (fc *formCards) get(id, chatID int64) (formCard, bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for _, c := range fc.m[id] {
		if c.chatID == chatID {
			return c, true
		}
	}
	return formCard{}, false
}

// all returns the form's cards.
func (fc *formCards) all(id int64) []formCard {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]formCard(nil), fc.m[id]...)
}

// drop forgets the form's cards.
func (fc *formCards) drop(id int64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	delete(fc.m, id)
}

// dropIn forgets the form's card in chatID.
func (fc *formCards) dropIn(id, chatID int64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.m[id] = slices.DeleteFunc(fc.m[id], func(c formCard) bool { return c.chatID == chatID })
	if len(fc.m[id]) == 0 {
		delete(fc.m, id)
	}
}

// answered finds the form a message m of user, in the conversation key,
// answers: the one whose card m replies to, or else the oldest card of
// user in the conversation sent before m, or else one being sent as m
// came (the user answers what Telegram showed before the send returned
// here). A message older than every card (the one that started the call,
// run again after a restart) answers none; nor does one in another of the
// chat's topics, unless the forum shares one conversation.
func (fc *formCards) answered(key string, user int64, m *tgbotapi.Message) (int64, bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	var best, sending int64
	bestMsg := 0
	for id, cards := range fc.m {
		for _, c := range cards {
			if c.chatID != m.Chat.ID || c.key != key || c.user != user {
				continue
			}
			if m.ReplyToMessage != nil && c.msgID != 0 && m.ReplyToMessage.MessageID == c.msgID {
				return id, true
			}
			switch {
			case c.msgID == 0:
				sending = id
			case c.msgID < m.MessageID && (bestMsg == 0 || c.msgID < bestMsg):
				best, bestMsg = id, c.msgID
			}
		}
	}
	if bestMsg == 0 && sending != 0 {
		return sending, true
	}
	return best, bestMsg != 0
}
