package agent

import (
	"context"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// bytesPerToken is what estimate counts a token as at most: a message of
// n bytes is never less than n/bytesPerToken tokens.
const bytesPerToken = 4

// readHistory reads the part of conversation conv that a model call of
// the turn's profile can send: the newest messages whose contents hold
// bytesPerToken bytes per token of the budget, which fit would cut from
// even with nothing else beside them, reaching back further only to the
// start of the current turn, which fit always keeps whole. fit then
// keeps of it exactly what it keeps of the whole conversation (see fit),
// and a long conversation costs a turn no more than one that just fills
// the budget. It returns what is stored; the caller's view of it (see
// visibleTo) holds the bytes. Without a budget, all of it.
func (t *turn) readHistory(ctx context.Context, conv int64) ([]store.Message, error) {
	budget := t.profile.ContextTokens
	if budget <= 0 {
		return t.a.cfg.Store.Messages(ctx, conv)
	}
	want := budget * bytesPerToken
	kept := t.a.kept.take(ctx, t.a.cfg.Store, conv)
	for {
		h, err := t.readRecent(ctx, conv, want, kept)
		if err != nil {
			return nil, err
		}
		msgs := h.msgs
		// In a group, what the caller sees of it (visibleTo) must fill the
		// budget: other members' per-user results may be shorter for them.
		if seen := visibleTo(msgs, t.caller.UserID); size(msgs) < want || size(seen) >= want && slices.ContainsFunc(seen, startsTurn) {
			if h.calls == nil {
				h.calls = new([]llm.Message)
			}
			t.callBuf = h.calls
			t.a.kept.keep(h)
			return msgs, nil // all of it, or enough and the current turn's start
		}
		want *= 2
	}
}

// readRecent reads what RecentMessages(conv, want) reads, from kept when it
// holds that.
func (t *turn) readRecent(ctx context.Context, conv int64, want int, kept *keptHistory) (*keptHistory, error) {
	if h, ok := kept.recent(want); ok {
		return h, nil
	}
	msgs, err := t.a.cfg.Store.RecentMessages(ctx, conv, want)
	if err != nil {
		return nil, err
	}
	return &keptHistory{conv: conv, msgs: msgs, whole: size(msgs) < want}, nil
}

// size is the bytes of msgs' contents.
func size(msgs []store.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
	}
	return n
}

// estimate guesses the tokens of s: about 4 bytes a token for English and
// code, plus a little for the message's framing. A guess is enough: the
// budget leaves room, and counting exactly needs the model's tokenizer.
func estimate(s string) int { return (len(s)+3)/4 + 4 }

// ImageTokens is what one image counts for against the budget: about the
// most OpenAI (1,445 at high detail) or Anthropic (about 1,600) count an
// image as, after the resizing they do.
const ImageTokens = 1600

// startsTurn reports whether m begins a turn: a message the user typed. An
// <answer> to a follow-up question continues the turn that asked it, which
// it would make no sense without.
func startsTurn(m store.Message) bool {
	return m.Role == RoleUser && !strings.HasPrefix(m.Content, "<answer>")
}

// fit returns the tail of history that fits budget tokens next to a
// system prompt of sys tokens, counting ImageTokens for each image when
// images count (the model sees them). First the oldest whole turns (see
// startsTurn) that could not fit even without their images leave; then,
// still over budget, images leave, from the oldest messages on, each
// message's then carrying a note that says so; then more whole turns,
// oldest first. The current turn is always kept whole, even alone over
// budget: without it there is nothing to answer. history itself is not
// changed.
//
// What fit keeps depends only on the messages from the first turn that
// could fit without images on, so it keeps the same of the newest
// messages that readHistory reads as of the whole conversation.
func fit(history []store.Message, budget, sys int, images bool) []store.Message {
	if budget <= 0 {
		return history
	}
	text := func(m store.Message) int { return estimate(m.Content) }
	history = dropTurns(history, budget, sys, text)
	if !images {
		return history
	}
	cost := func(m store.Message) int { return estimate(m.Content) + ImageTokens*len(m.Media) }
	total := sys
	for _, m := range history {
		total += cost(m)
	}
	current := currentTurn(history)
	cloned := false
	for i := 0; i < current && total > budget; i++ {
		if len(history[i].Media) == 0 {
			continue
		}
		if !cloned {
			history, cloned = slices.Clone(history), true
		}
		m := &history[i]
		total -= cost(*m)
		m.Content = withNote(m.Content, noteImagesDropped(len(m.Media)))
		m.Media = nil
		total += cost(*m)
	}
	return dropTurns(history, budget, sys, cost)
}

// currentTurn returns where the last turn of history starts: its last
// message a user typed, or len(history) when there is none.
func currentTurn(history []store.Message) int {
	for i := len(history) - 1; i >= 0; i-- {
		if startsTurn(history[i]) {
			return i
		}
	}
	return len(history)
}

// dropTurns drops the oldest turns of history, each up to the next
// message a user typed (the first one may be the end of an older turn),
// while history costs more than budget beside a system prompt of sys
// tokens; never the current turn.
func dropTurns(history []store.Message, budget, sys int, cost func(store.Message) int) []store.Message {
	total := sys
	for _, m := range history {
		total += cost(m)
	}
	current := currentTurn(history)
	start := 0
	for total > budget && start < current {
		end := start + 1
		for end < current && !startsTurn(history[end]) {
			end++
		}
		for _, m := range history[start:end] {
			total -= cost(m)
		}
		start = end
	}
	return history[start:]
}

// modelMessages turns the stored history into what the model reads, in
// buf's place (see turn.callBuf), with
// images[i] (may be short or nil) the images of history[i]. Tool results
// go as user messages, and messages of one role in a row are joined: some
// chat templates insist that roles alternate, and a history may hold two
// user messages in a row after a failed or cancelled turn.
func modelMessages(buf []llm.Message, system string, history []store.Message, images [][]llm.Image) []llm.Message {
	msgs := append(buf[:0], llm.Message{Role: llm.RoleSystem, Content: system})
	for i, m := range history {
		role := llm.RoleUser
		if m.Role == RoleAssistant {
			role = llm.RoleAssistant
		}
		var imgs []llm.Image
		if i < len(images) {
			imgs = images[i]
		}
		if last := &msgs[len(msgs)-1]; len(msgs) > 1 && last.Role == role {
			last.Content = strings.Join([]string{last.Content, m.Content}, "\n\n")
			last.Images = append(last.Images[:len(last.Images):len(last.Images)], imgs...)
			continue
		}
		msgs = append(msgs, llm.Message{Role: role, Content: m.Content, Images: imgs})
	}
	return msgs
}
