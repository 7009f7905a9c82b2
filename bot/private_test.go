package bot_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// privateLink returns the address of the button of card m that opens the
// private chat.
func privateLink(t *testing.T, m tgfake.Message) string {
	t.Helper()
	for _, row := range m.Keyboard {
		for _, b := range row {
			if b.URL != nil && strings.HasPrefix(b.Text, "🔒 Open private chat") {
				return *b.URL
			}
		}
	}
	t.Fatalf("no Open private chat button on %q: %v", m.Plain, m.Buttons())
	return ""
}

// startPayload is the /start message a deep link sends.
func startPayload(t *testing.T, link string) string {
	t.Helper()
	payload, ok := strings.CutPrefix(link, "https://t.me/mcpgram_bot?start=")
	if !ok {
		t.Fatalf("the link %q does not open the bot's private chat", link)
	}
	return "/start " + payload
}

// In a group, a form with fields is answered in the member's private
// chat: the group's card names the member and what asks, shows neither
// the server's message nor the fields, and leads to the private chat;
// what the member types in the group is not taken; another member's
// press and deep link change nothing; the member's own link opens the
// form there, once; answered there, the call in the group's turn gets the
// answer and the group's card says so.
func TestFormAnsweredInPrivateChat(t *testing.T) {
	const group = -88
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: `@mcpgram_bot tool ask {"message": "Your PIN, please."}`})
	c := card(t, f, group, "f asks you something, during ask")
	for _, want := range []string{"user2: f asks you something", "Answer it in our private chat, where nobody else sees it"} {
		if !strings.Contains(c.Plain, want) {
			t.Errorf("the group's card lacks %q:\n%s", want, c.Plain)
		}
	}
	if !strings.Contains(c.Text, fmt.Sprintf(`<a href="tg://user?id=%d">`, alice)) {
		t.Errorf("the group's card does not mention the member: %s", c.Text)
	}
	for _, never := range []string{"Your PIN", "answer", "Type"} {
		if strings.Contains(c.Plain, never) {
			t.Errorf("the group's card shows %q:\n%s", never, c.Plain)
		}
	}
	open := startPayload(t, privateLink(t, c))

	if ans := press(t, f, group, bob, c, "✖️ Cancel"); !ans.ShowAlert || !strings.Contains(ans.Text, "only they can answer") {
		t.Errorf("Bob's press: %+v", ans)
	}
	typed := f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "1234", ReplyTo: c.ID})
	f.WaitFor(t, 30*time.Second, "the note to alice's reply in the group", func() bool {
		for _, m := range f.Messages(group) {
			if m.ReplyTo == typed && strings.Contains(m.Plain, "answered in your own chat with me, not here") {
				return true
			}
		}
		return false
	})
	f.Text(bob, bob, open)
	waitText(t, f, bob, "That link belongs to another member's request, and only they can open it, so nothing was done.")

	f.Text(alice, alice, open)
	own := card(t, f, alice, "f asks you, during ask")
	if !strings.Contains(own.Plain, "Your PIN, please.") || !strings.Contains(own.Plain, "▶️ answer") {
		t.Errorf("the private card:\n%s", own.Plain)
	}
	f.Text(alice, alice, open)
	waitText(t, f, alice, "You opened that request here already (its card is above), so nothing was done.")
	f.Text(alice, alice, "forty-two")
	own = edited(t, f, alice, own, "✔️ answer: forty-two")
	press(t, f, alice, alice, own, "✅ Submit")
	waitText(t, f, group, `Tool said: {"action":"accept","content":{"answer":"forty-two"}}`)
	closed := edited(t, f, group, c, "Sent to f.")
	if len(closed.Keyboard) != 0 {
		t.Errorf("the group's closed card keeps buttons: %v", closed.Buttons())
	}
	f.Text(alice, alice, open)
	waitText(t, f, alice, "That request is over or has expired, so nothing was done.")
}

// A deep link's payload is hostile: one that is none of the bot's, and one
// sent in a group, change nothing and say so; /start without one greets.
func TestStartPayloads(t *testing.T) {
	const group = -88
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	for _, c := range []struct {
		name, text string
		chat       int64
		want       string
	}{
		{"no payload", "/start", alice, "Hi! I am an assistant that acts through tools."},
		{"a form that does not exist", "/start f999999", alice, "That request is over or has expired, so nothing was done."},
		{"a leading zero", "/start f012", alice, "That link is not one of mine, so nothing was done."},
		{"characters Telegram never sends", "/start f1<b>", alice, "That link is not one of mine, so nothing was done."},
		{"too long", "/start f" + strings.Repeat("1", 70), alice, "That link is not one of mine, so nothing was done."},
		{"in a group", "/start@mcpgram_bot f1", group, "That link opens in a private chat with me, not here, so nothing was done."},
	} {
		t.Run(c.name, func(t *testing.T) {
			waitAfterID(t, f, c.chat, f.Text(c.chat, alice, c.text), c.want)
		})
	}
}

// waitAfterID waits for a message of chat after message id that holds want.
func waitAfterID(t *testing.T, fake *tgfake.Server, chat int64, id int, want string) {
	t.Helper()
	fake.WaitFor(t, 30*time.Second, want, func() bool {
		for _, m := range fake.Messages(chat) {
			if m.ID > id && strings.Contains(m.Plain, want) {
				return true
			}
		}
		return false
	})
}
