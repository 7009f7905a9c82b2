// Audience: in a group, what a tool that acts for one user found (the
// memory server's search, say) is that member's alone. The conversation
// stays one for the group, but each message a turn stores from its first
// call of such a tool to its end is marked for the member whose turn it
// is (store.Message.OnlyFor). The other members' turns read, in place of
// that stretch, only what the group itself saw of it: the answer, or the
// question, the member got (store.Message.Shared). So no other member's
// model request ever holds the result, nor the model's words about it
// that the group did not see (its reasoning, its further calls).

package agent

import (
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/store"
)

// visibleTo returns what user's turns read of msgs: a message kept for
// another member as what it Shared, or not at all when it shared nothing.
func visibleTo(msgs []store.Message, user string) []store.Message {
	if !slices.ContainsFunc(msgs, func(m store.Message) bool { return m.OnlyFor != "" && m.OnlyFor != user }) {
		return msgs
	}
	out := make([]store.Message, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.OnlyFor == "" || m.OnlyFor == user:
			out = append(out, m)
		case m.Shared != "":
			out = append(out, store.Message{ID: m.ID, ConversationID: m.ConversationID, Role: m.Role, Content: m.Shared, CreatedAt: m.CreatedAt})
		}
	}
	return out
}

// perUser reports whether plan runs a call that acts for the calling user
// alone (see mcpgram.ServerInfo.ActsPerUser).
func perUser(cat mcpgram.Catalog, plan executor.Plan) bool {
	for _, s := range plan.Steps {
		if s.Err != nil {
			continue
		}
		if srv, ok := cat.Server(s.Call.Server); ok && srv.ActsPerUser(s.Call.Tool, s.Call.URI) {
			return true
		}
	}
	return false
}

// markAudience marks msgs, about to be stored in order, for the caller
// alone from a reply that calls a per-user tool (marked so by the loop)
// to the next message a user wrote; t.private carries the stretch across
// writes and turns. A message marked for another member already (the
// outcome of their calls a crash lost) keeps its mark. What a message
// shares is kept only where it is marked.
func (t *turn) markAudience(msgs []store.Message) {
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.Role == RoleUser:
			t.private = false
		case m.OnlyFor != "":
			t.private = m.OnlyFor == t.caller.UserID
		case t.private:
			m.OnlyFor = t.caller.UserID
		}
		if m.OnlyFor == "" {
			m.Shared = ""
		}
	}
}

// shareLast sets what the group saw of the turn's last reply, for the
// other members to read should the reply be marked for the caller alone.
func (t *turn) shareLast(shown string) {
	if n := len(t.unsaved); n > 0 && t.unsaved[n-1].Role == RoleAssistant {
		t.unsaved[n-1].Shared = strings.TrimSpace(shown)
	}
}

// questionShown is a question as the group saw it: the text before it,
// the question, and its options.
func questionShown(visible string, call executor.Call) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(visible))
	b.WriteString("\n\n" + call.Question)
	if len(call.Options) > 0 {
		b.WriteString("\n(" + strings.Join(call.Options, " / ") + ")")
	}
	return b.String()
}
