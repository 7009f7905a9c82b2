package agent

import (
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// estimate guesses the tokens of s: about 4 bytes a token for English and
// code, plus a little for the message's framing. A guess is enough: the
// budget leaves room, and counting exactly needs the model's tokenizer.
func estimate(s string) int { return (len(s)+3)/4 + 4 }

// imageTokens is what one image counts for against the budget: about the
// most OpenAI (1,445 at high detail) or Anthropic (about 1,600) count an
// image as, after the resizing they do.
const imageTokens = 1600

// startsTurn reports whether m begins a turn: a message the user typed. An
// <answer> to a follow-up question continues the turn that asked it, which
// it would make no sense without.
func startsTurn(m store.Message) bool {
	return m.Role == RoleUser && !strings.HasPrefix(m.Content, "<answer>")
}

// fit returns the tail of history that fits budget tokens next to a
// system prompt of sys tokens, counting imageTokens for each image when
// images count (the model sees them). Over budget, images leave first,
// from the oldest messages on, each message's then carrying a note that
// says so; then whole turns (see startsTurn), oldest first. The current
// turn is always kept whole, even alone over budget: without it there is
// nothing to answer. history itself is not changed.
func fit(history []store.Message, budget, sys int, images bool) []store.Message {
	if budget <= 0 {
		return history
	}
	cost := func(m store.Message) int {
		n := estimate(m.Content)
		if images {
			n += imageTokens * len(m.Media)
		}
		return n
	}
	total := sys
	for _, m := range history {
		total += cost(m)
	}
	current := len(history)
	for i := len(history) - 1; i >= 0; i-- {
		if startsTurn(history[i]) {
			current = i
			break
		}
	}
	if images {
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
	}
	start := 0
	for total > budget && start < current {
		// Drop the oldest turn: up to the next user message.
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

// modelMessages turns the stored history into what the model reads, with
// images[i] (may be short or nil) the images of history[i]. Tool results
// go as user messages, and messages of one role in a row are joined: some
// chat templates insist that roles alternate, and a history may hold two
// user messages in a row after a failed or cancelled turn.
func modelMessages(system string, history []store.Message, images [][]llm.Image) []llm.Message {
	msgs := make([]llm.Message, 1, len(history)+1)
	msgs[0] = llm.Message{Role: llm.RoleSystem, Content: system}
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
