// Package album gathers an album's items from the inbox, for the bot to
// answer them as one turn.
//
// An album (a media group) reaches the bot as updates of their own that
// share a media_group_id, usually in one getUpdates batch or in quick
// webhook posts, not always; the caption is on one of them. It is
// answered as one turn, gathered from the inbox rather than from memory,
// so that its guarantees hold: the first of its updates to run in the
// chat's lane reads the chat's queued updates for the others (Gather),
// waiting while more arrive (Wait after the last one, so at most about
// MaxItems times that); the bot runs the turn, and then marks them all
// done at once with dispatch's Absorb. A crash before that mark replays
// the whole album as one turn; the others' jobs, dropped from the lane or finding
// their update already done, do nothing. The inbox is the same for every
// instance sharing it, and the chat's lease keeps its updates on one, so
// webhook mode and PostgreSQL gather the same way.
package album

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strconv"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/updates"
	"github.com/mcpgram/mcpgram/store"
)

// MaxItems is the most items Telegram puts in an album. More updates of
// one media group (which Telegram does not send) are answered ten at a
// time.
const MaxItems = 10

// DefaultWait is how long a Gatherer waits for more of an album's items
// after the last one arrived, unless told otherwise.
const DefaultWait = time.Second

// An Inbox holds the updates received and not yet handled (see
// store.Inbox); *sqlite.DB and *postgres.DB are Inboxes.
type Inbox interface {
	InboxQueuedChat(ctx context.Context, chatID string, limit int) ([]store.InboxItem, error)
}

// Options are a Gatherer's optional settings.
type Options struct {
	// Wait is how long to wait for more items after the last one
	// arrived; default DefaultWait.
	Wait   time.Duration
	Logger *slog.Logger
}

// A Gatherer reads albums from an inbox.
type Gatherer struct {
	inbox  Inbox
	wait   time.Duration
	logger *slog.Logger
}

// New returns a Gatherer reading the albums from inbox.
func New(inbox Inbox, opts Options) *Gatherer {
	if opts.Wait <= 0 {
		opts.Wait = DefaultWait
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gatherer{inbox: inbox, wait: opts.Wait, logger: opts.Logger}
}

// An albumItem is one queued update of an album.
type albumItem struct {
	id int64
	m  *tgbotapi.Message
}

// Gather returns the album of m, update own, and its update ids: the
// queued updates of m's chat from m's sender in m's media group, in
// message order, up to MaxItems of them (the ten own is among). It waits
// until none has arrived for Wait, or a later message of the sender
// is queued (an album's items come before it), or MaxItems are there.
// ok is false when own is no longer queued (its album was answered) or
// ctx ended.
func (g *Gatherer) Gather(ctx context.Context, own int64, m *tgbotapi.Message) (album []*tgbotapi.Message, ids []int64, ok bool) {
	chat := strconv.FormatInt(m.Chat.ID, 10)
	wait := g.wait
	poll := max(wait/10, 10*time.Millisecond)
	seen, quiet := 0, time.Now().Add(wait)
	for {
		queued, err := g.inbox.InboxQueuedChat(ctx, chat, 0)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, false
			}
			g.logger.Error("gather an album; answering this item alone", "chat", m.Chat.ID, "err", err)
			return []*tgbotapi.Message{m}, []int64{own}, true
		}
		items, later := albumOf(queued, m)
		if !slices.ContainsFunc(items, func(it albumItem) bool { return it.id == own }) {
			return nil, nil, false
		}
		if len(items) > seen {
			seen, quiet = len(items), time.Now().Add(wait)
		}
		if len(items) >= MaxItems || later || !time.Now().Before(quiet) {
			for _, it := range chunkOf(items, own) {
				album, ids = append(album, it.m), append(ids, it.id)
			}
			return album, ids, true
		}
		select {
		case <-ctx.Done():
			return nil, nil, false
		case <-time.After(poll):
		}
	}
}

// albumOf returns the items of m's album among a chat's queued updates,
// in message order: those of m's media group from m's sender. later
// reports a queued message of that sender after them all.
func albumOf(queued []store.InboxItem, m *tgbotapi.Message) (items []albumItem, later bool) {
	sender := senderOf(m)
	var others []int
	for _, p := range queued {
		u, err := updates.Decode(p.Payload)
		if err != nil || u.Message == nil || u.Message.Chat == nil ||
			u.Message.Chat.ID != m.Chat.ID || senderOf(u.Message) != sender {
			continue
		}
		if u.Message.MediaGroupID == m.MediaGroupID {
			items = append(items, albumItem{p.UpdateID, u.Message})
		} else {
			others = append(others, u.Message.MessageID)
		}
	}
	slices.SortFunc(items, func(a, b albumItem) int {
		return cmp.Or(cmp.Compare(a.m.MessageID, b.m.MessageID), cmp.Compare(a.id, b.id))
	})
	if len(items) > 0 {
		last := items[len(items)-1].m.MessageID
		later = slices.ContainsFunc(others, func(id int) bool { return id > last })
	}
	return items, later
}

func senderOf(m *tgbotapi.Message) int64 {
	if m.From == nil {
		return 0
	}
	return m.From.ID
}

// chunkOf returns the run of up to MaxItems items, counted from the first,
// that holds own.
func chunkOf(items []albumItem, own int64) []albumItem {
	i := slices.IndexFunc(items, func(it albumItem) bool { return it.id == own })
	start := i / MaxItems * MaxItems
	return items[start:min(start+MaxItems, len(items))]
}
