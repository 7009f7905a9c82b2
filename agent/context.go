package agent

import (
	"strings"

	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// estimate guesses the tokens of s: about 4 bytes a token for English and
// code, plus a little for the message's framing. A guess is enough: the
// budget leaves room, and counting exactly needs the model's tokenizer.
func estimate(s string) int { return (len(s)+3)/4 + 4 }

// startsTurn reports whether m begins a turn: a message the user typed. An
// <answer> to a follow-up question continues the turn that asked it, which
// it would make no sense without.
func startsTurn(m store.Message) bool {
	return m.Role == RoleUser && !strings.HasPrefix(m.Content, "<answer>")
}

// fit returns the tail of history that fits budget tokens next to a
// system prompt of sys tokens, dropping whole turns (see startsTurn),
// oldest first. The current turn is always kept, even alone over budget: without it there is
// nothing to answer.
func fit(history []store.Message, budget, sys int) []store.Message {
	if budget <= 0 {
		return history
	}
	total := sys
	for _, m := range history {
		total += estimate(m.Content)
	}
	current := len(history)
	for i := len(history) - 1; i >= 0; i-- {
		if startsTurn(history[i]) {
			current = i
			break
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
			total -= estimate(m.Content)
		}
		start = end
	}
	return history[start:]
}

// modelMessages turns the stored history into what the model reads. Tool
// results go as user messages, and messages of one role in a row are
// joined: some chat templates insist that roles alternate, and a history
// may hold two user messages in a row after a failed or cancelled turn.
func modelMessages(system string, history []store.Message) []llm.Message {
	msgs := make([]llm.Message, 1, len(history)+1)
	msgs[0] = llm.Message{Role: llm.RoleSystem, Content: system}
	for _, m := range history {
		role := llm.RoleUser
		if m.Role == RoleAssistant {
			role = llm.RoleAssistant
		}
		if last := &msgs[len(msgs)-1]; len(msgs) > 1 && last.Role == role {
			last.Content = strings.Join([]string{last.Content, m.Content}, "\n\n")
			continue
		}
		msgs = append(msgs, llm.Message{Role: role, Content: m.Content})
	}
	return msgs
}
