package agent

import (
	"container/list"
	"context"
	"sync"

	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// DefaultHistoryCache is how many bytes of conversations an Agent keeps
// between turns by default (Options.HistoryCache).
const DefaultHistoryCache = 32 << 20

// keptMinBytes is the least history a conversation's read must hold to
// be kept: a shorter one costs its turn little to read again.
const keptMinBytes = 16 << 10

// messageOverhead is what a kept message costs beside its contents: its
// store.Message and its llm.Message in the calls' slice, about.
const messageOverhead = 256

// sinceLimit caps the messages a kept conversation reads as new: more
// than that came while it was kept (the chat served elsewhere a while),
// and it is read anew instead.
const sinceLimit = 500

// keptHistories is what each long conversation's last turn read of its
// history, so that its next turn reads only what came since
// (Store.MessagesSince) instead of all of it again: one writer per chat
// (the chat's lease, over several instances) makes what came since all
// that changed, and its first message says whether what was kept still
// stands (a retry replaces messages from one on to the end, the kept
// last one among them).
//
// A kept history is read and extended only by a turn that holds its
// chat's lock (Agent.lock), as every turn does: the turn may append to
// the slice it was given in place, and the chat's next turn, which cannot
// start before, writes over what it appended. It is bounded: at most
// max bytes in all, the least recently read conversations leaving first.
type keptHistories struct {
	max int

	mu    sync.Mutex
	bytes int
	order list.List // of *keptHistory, most recently read first
	convs map[int64]*list.Element
}

// A keptHistory is the newest messages of a conversation as stored,
// oldest first.
type keptHistory struct {
	conv int64
	msgs []store.Message
	// whole says msgs begin with the conversation's first message.
	whole bool
	// dropped counts the messages before msgs in its array, no longer
	// kept but not let go of either.
	dropped int
	// calls is the slice its turns' model calls build their messages in
	// (see turn.callBuf).
	calls *[]llm.Message
	bytes int
}

func newKeptHistories(max int) *keptHistories {
	return &keptHistories{max: max, convs: map[int64]*list.Element{}}
}

// take removes conv's kept history and returns it brought up to date from
// s, or nil when none is kept or it no longer stands.
func (k *keptHistories) take(ctx context.Context, s store.Conversations, conv int64) *keptHistory {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	el := k.convs[conv]
	if el != nil {
		k.remove(el)
	}
	k.mu.Unlock()
	if el == nil {
		return nil
	}
	h := el.Value.(*keptHistory)
	last := h.msgs[len(h.msgs)-1].ID
	since, err := s.MessagesSince(ctx, conv, last, sinceLimit)
	if err != nil || len(since) == 0 || since[0].ID != last || len(since) == sinceLimit {
		return nil // read anew: an error there is the caller's to meet
	}
	h.msgs = append(h.msgs, since[1:]...)
	return h
}

// recent is what RecentMessages(want) would read, when h holds it: the
// newest messages whose contents hold at least want bytes, or all when
// the conversation holds fewer.
func (h *keptHistory) recent(want int) (*keptHistory, bool) {
	if h == nil {
		return nil, false
	}
	after := 0 // the bytes of the messages after i
	for i := len(h.msgs) - 1; i >= 0; i-- {
		if after >= want {
			return &keptHistory{conv: h.conv, msgs: h.msgs[i+1:], dropped: h.dropped + i + 1, calls: h.calls}, true
		}
		after += len(h.msgs[i].Content)
	}
	if after >= want || h.whole {
		return h, true
	}
	return nil, false
}

// keep keeps h, the newest messages of a conversation that a turn read,
// for the conversation's next turn, if they are long enough to be worth
// it.
func (k *keptHistories) keep(h *keptHistory) {
	if k == nil || h == nil || len(h.msgs) == 0 {
		return
	}
	h.bytes = 0
	for _, m := range h.msgs {
		h.bytes += len(m.Content) + len(m.Shared) + messageOverhead
	}
	if h.bytes < keptMinBytes || h.bytes > k.max/4 {
		return
	}
	if h.dropped > len(h.msgs) {
		// Let go of the messages read before these: the slice grows at
		// its end turn after turn, and its start would be kept for good.
		h.msgs, h.dropped = append(make([]store.Message, 0, len(h.msgs)+64), h.msgs...), 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if el := k.convs[h.conv]; el != nil {
		k.remove(el) // a turn that read it anew meanwhile
	}
	k.convs[h.conv] = k.order.PushFront(h)
	k.bytes += h.bytes
	for k.bytes > k.max {
		k.remove(k.order.Back())
	}
}

// remove forgets el's history; k.mu is held.
func (k *keptHistories) remove(el *list.Element) {
	h := el.Value.(*keptHistory)
	k.order.Remove(el)
	delete(k.convs, h.conv)
	k.bytes -= h.bytes
}

// size is how many bytes of how many conversations are kept.
func (k *keptHistories) size() (bytes, convs int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.bytes, len(k.convs)
}
