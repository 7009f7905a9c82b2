package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// A form that asks for a password warns that the server, not mcpgram,
// asks for it; what the user types into it, valid or not, is deleted from
// the chat, and the card shows the field as hidden, never its value; the
// server gets it.
func TestSecretFormInTelegram(t *testing.T) {
	const secret = "hunter2-correct-horse"
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, "tool secret")
	c := card(t, f, alice, "f asks you, during secret")
	if !strings.Contains(c.Plain, "f, not mcpgram, asks you for a password, token or PIN") {
		t.Errorf("the card does not warn:\n%s", c.Plain)
	}
	short := f.Text(alice, alice, "abc")
	waitText(t, f, alice, "⚠️ at least 4 characters, please (this has 3). Try again.")
	typed := f.Text(alice, alice, secret)
	c = edited(t, f, alice, c, "✔️ password: ••••")
	press(t, f, alice, alice, c, "✅ Submit")
	waitText(t, f, alice, fmt.Sprintf("Tool said: accept: a password of %d characters", len(secret)))
	deleted := map[string]bool{}
	for _, call := range f.Calls("deleteMessage") {
		deleted[call.Params["message_id"]] = true
	}
	for _, id := range []int{short, typed} {
		if !deleted[fmt.Sprint(id)] {
			t.Errorf("the typed message %d was not deleted (deleted: %v)", id, deleted)
		}
	}
	for _, m := range f.Messages(alice) {
		if m.FromID != alice && (strings.Contains(m.Text, secret) || strings.Contains(m.Text, ">abc<")) {
			t.Errorf("the bot's message %d shows what was typed: %q", m.ID, m.Text)
		}
	}
}

// In a group, a form that asks for a password is answered in the
// member's private chat: the password typed in the group by mistake is
// not taken and is deleted; typed in the private chat it is, and the
// group's turn goes on with it.
func TestSecretFormInAGroup(t *testing.T) {
	const group, secret = -88, "hunter2-correct-horse"
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "@mcpgram_bot tool secret"})
	c := card(t, f, group, "f asks you something, during secret")
	typed := f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: secret, ReplyTo: c.ID})
	waitAfterID(t, f, group, typed, "This is answered in your own chat with me, not here")
	f.WaitFor(t, 30*time.Second, "the password typed in the group to be deleted", func() bool {
		for _, call := range f.Calls("deleteMessage") {
			if call.Params["chat_id"] == fmt.Sprint(group) && call.Params["message_id"] == fmt.Sprint(typed) {
				return true
			}
		}
		return false
	})
	f.Text(alice, alice, startPayload(t, privateLink(t, c)))
	own := card(t, f, alice, "f asks you, during secret")
	if !strings.Contains(own.Plain, "f, not mcpgram, asks you for a password, token or PIN") {
		t.Errorf("the private card does not warn:\n%s", own.Plain)
	}
	f.Text(alice, alice, secret)
	own = edited(t, f, alice, own, "✔️ password: ••••")
	press(t, f, alice, alice, own, "✅ Submit")
	waitText(t, f, group, fmt.Sprintf("Tool said: accept: a password of %d characters", len(secret)))
}
