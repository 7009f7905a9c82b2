package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// formModel calls a tool of the test server "f" for the user's message
// ("tool NAME ARGS"), and says what the tool said.
func formModel(c llmfake.Call) llmfake.Reply {
	last := c.Request.Last()
	if _, after, ok := strings.Cut(last, "] Result:"); ok {
		return llmfake.Text(complete("Tool said: " + firstLineOf(after)))
	}
	if _, after, ok := strings.Cut(last, "] Error:"); ok {
		return llmfake.Text(complete("Tool failed: " + firstLineOf(after)))
	}
	if _, path, ok := strings.Cut(last, "read features://"); ok {
		return llmfake.Text("<access_mcp_resource>\n<server_name>f</server_name>\n<uri>features://" + path + "</uri>\n</access_mcp_resource>")
	}
	if _, rest, ok := strings.Cut(last, "tool "); ok {
		name, args, _ := strings.Cut(rest, " ")
		if args == "" {
			args = "{}"
		}
		return llmfake.Text(useTool("f", name, args))
	}
	return llmfake.Text(complete("Hello: " + last))
}

// newFormStack is the stack with the test server hub/testdata/features as
// "f", every tool auto-approved, and the agent asking what it asks.
func newFormStack(t testing.TB, legacy bool, editAgent func(*mcpgram.Profile, *agent.Options)) *stack {
	t.Helper()
	s := newUnstartedStack(t, map[string]any{
		"f": testenv.FeaturesEntry(t, legacy, "book", "secret", "ask", "visit", "loop"),
	}, formModel, hub.Options{})
	s.agent = newAgent(t, s.db, s.hub, s.model, func(p *mcpgram.Profile, o *agent.Options) {
		o.FormPoll = 20 * time.Millisecond
		if editAgent != nil {
			editAgent(p, o)
		}
	})
	s.startAsking()
	return s
}

// card waits until the bot's message in chat containing want has buttons
// and returns it as it then is.
func card(t testing.TB, fake *tgfake.Server, chat int64, want string) tgfake.Message {
	t.Helper()
	var got tgfake.Message
	fake.WaitFor(t, 30*time.Second, "a card with "+want, func() bool {
		m, ok := lastWith(fake, chat, want)
		got = m
		return ok && len(m.Keyboard) > 0
	})
	return got
}

// button returns the data of the button of m whose text starts with label.
func formButton(t testing.TB, m tgfake.Message, label string) string {
	t.Helper()
	for _, b := range m.Buttons() {
		text, data, _ := strings.Cut(b, "=")
		if strings.HasPrefix(text, label) {
			return data
		}
	}
	t.Fatalf("no button %q on %q (buttons %q)", label, m.Plain, m.Buttons())
	return ""
}

// press presses the button of the card with label and waits for the
// press to be answered.
func press(t testing.TB, fake *tgfake.Server, chat, user int64, m tgfake.Message, label string) tgfake.CallbackAnswer {
	t.Helper()
	cb := fake.Press(chat, user, m.ID, formButton(t, m, label))
	var ans tgfake.CallbackAnswer
	fake.WaitFor(t, 30*time.Second, "the answer to "+label, func() bool {
		var ok bool
		ans, ok = fake.Answer(cb)
		return ok
	})
	return ans
}

// edited waits until the card m shows want, and returns it.
func edited(t testing.TB, fake *tgfake.Server, chat int64, m tgfake.Message, want string) tgfake.Message {
	t.Helper()
	var got tgfake.Message
	fake.WaitFor(t, 30*time.Second, "the card to show "+want, func() bool {
		for _, x := range fake.Messages(chat) {
			if x.ID == m.ID {
				got = x
				return strings.Contains(x.Plain, want)
			}
		}
		return false
	})
	return got
}

// toggled waits until the card m has a button starting with label.
func toggled(t testing.TB, fake *tgfake.Server, chat int64, m tgfake.Message, label string) tgfake.Message {
	t.Helper()
	var got tgfake.Message
	fake.WaitFor(t, 30*time.Second, "a button "+label, func() bool {
		for _, x := range fake.Messages(chat) {
			if x.ID == m.ID {
				got = x
				for _, b := range x.Buttons() {
					if strings.HasPrefix(b, label) {
						return true
					}
				}
			}
		}
		return false
	})
	return got
}

// A server's form in Telegram: the card names the server and the tool
// and shows the server's message; choices and yes/no are buttons, a
// multi-choice toggles, a default takes one press, text is typed and
// checked; Submit sends exactly the answers, and the card says so.
func TestFormInTelegram(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(map[bool]string{false: "2026-07-28", true: "2025-11-25"}[legacy], func(t *testing.T) {
			s := newFormStack(t, legacy, nil)
			s.start(nil)
			f := s.fake
			f.Text(alice, alice, "tool book")
			c := card(t, f, alice, "f asks you, during book")
			for _, want := range []string{"Book a table at Chez Test", "Your answers go to f, not to the assistant", "▶️ Date (required)", "Type a date, YYYY-MM-DD"} {
				if !strings.Contains(c.Plain, want) {
					t.Errorf("card lacks %q:\n%s", want, c.Plain)
				}
			}
			f.Text(alice, alice, "christmas")
			waitText(t, f, alice, "that is not a date as YYYY-MM-DD")
			f.Text(alice, alice, "2026-12-24")
			c = edited(t, f, alice, c, "✔️ Date: 2026-12-24")
			press(t, f, alice, alice, c, "Use default: 2")
			c = edited(t, f, alice, c, "▶️ Seating (required)")
			press(t, f, alice, alice, c, "On the terrace")
			c = edited(t, f, alice, c, "▶️ Vegetarian menu")
			press(t, f, alice, alice, c, "Yes")
			c = edited(t, f, alice, c, "▶️ Extras")
			press(t, f, alice, alice, c, "☐ cake")
			c = toggled(t, f, alice, c, "☑ cake")
			press(t, f, alice, alice, c, "☐ candles")
			c = toggled(t, f, alice, c, "☑ candles")
			press(t, f, alice, alice, c, "Done")
			c = edited(t, f, alice, c, "▶️ Name")
			press(t, f, alice, alice, c, "✅ Submit")
			edited(t, f, alice, c, "Sent to f.")
			want := `Tool said: {"action":"accept","content":{"date":"2026-12-24","extras":["cake","candles"],"party":2,"seating":"outdoor","vegetarian":true}}`
			waitText(t, f, alice, want)
		})
	}
}

// In a group, a form without fields (a yes or no) is answered on the
// group's card, and only by the person whose request it is: another
// member's press is refused when pressed. (A form with fields is answered
// in the member's private chat: see TestFormAnsweredInPrivateChat.)
func TestFormInAGroup(t *testing.T) {
	const group = -88
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: `@mcpgram_bot tool ask {"message": "Go on?", "schema": {"type": "object", "properties": {}}}`})
	c := card(t, f, group, "f asks you, during ask")
	if !strings.Contains(c.Plain, "Go on?") {
		t.Errorf("the group's card does not ask:\n%s", c.Plain)
	}
	if ans := press(t, f, group, bob, c, "✅ Submit"); !ans.ShowAlert || !strings.Contains(ans.Text, "only they can answer") {
		t.Errorf("Bob's press: %+v", ans)
	}
	press(t, f, group, alice, c, "✅ Submit")
	waitText(t, f, group, `Tool said: {"action":"accept","content":{}}`)
}

// URL mode: the card shows the full domain the server sends the user to,
// whatever the server's message says, with a button to it; nothing is
// opened, and Done tells the server.
func TestFormURLInTelegram(t *testing.T) {
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, `tool visit {"url": "https://login.evil.example/bank?session=1", "message": "Sign in at https://bank.example to go on."}`)
	c := card(t, f, alice, "f asks you, during visit")
	for _, want := range []string{"It is f, not this bot, that asks you to open a page on:\nlogin.evil.example", "https://login.evil.example/bank?session=1", "Nothing is opened for you"} {
		if !strings.Contains(c.Plain, want) {
			t.Errorf("card lacks %q:\n%s", want, c.Plain)
		}
	}
	open := c.Keyboard[0][0]
	if open.URL == nil || *open.URL != "https://login.evil.example/bank?session=1" || open.Text != "Open login.evil.example" {
		t.Errorf("the URL button is %q to %v, want Open login.evil.example to the URL", open.Text, open.URL)
	}
	press(t, f, alice, alice, c, "✅ Done")
	waitText(t, f, alice, `Tool said: {"action":"accept","content":null}`)

	// A host too long for a button keeps its registrable domain, cut
	// before it; the card's text shows it whole.
	const long = "https://accounts.google.com.signin.session-verify.evil.com./login"
	f.Text(alice, alice, `tool visit {"url": "`+long+`"}`)
	c = card(t, f, alice, "accounts.google.com.signin.session-verify.evil.com")
	if open := c.Keyboard[0][0]; open.URL == nil || *open.URL != long || open.Text != "Open …signin.session-verify.evil.com" {
		t.Errorf("the URL button is %q to %v, want Open …signin.session-verify.evil.com to the URL", open.Text, open.URL)
	}
	press(t, f, alice, alice, c, "✖️ Cancel")
	waitText(t, f, alice, `Tool said: {"action":"cancel","content":null}`)
}

// What cannot be shown is refused with a word to the user, and the server
// gets cancel; a 10,000-character message is cut on a card that fits.
func TestFormHostileInTelegram(t *testing.T) {
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, `tool ask {"fields": 200}`)
	waitText(t, f, alice, "f asked you something that cannot be shown here (more than 50 fields (200))")
	waitText(t, f, alice, `Tool said: {"action":"cancel","content":null}`)

	f.Text(alice, alice, `tool ask {"message": "Pay \u202Eexe.pdf", "schema": {"type": "object", "properties": {"who": {"type": "string", "title": "invoice\u202Efdp.exe", "enum": ["a\u200Bb"]}}}}`)
	c := card(t, f, alice, "f asks you, during ask")
	for _, want := range []string{`Pay \u202Eexe.pdf`, `invoice\u202Efdp.exe`} {
		if !strings.Contains(c.Plain, want) {
			t.Errorf("card lacks %q, the direction override made visible:\n%s", want, c.Plain)
		}
	}
	if b := formButton(t, c, `a\u200Bb`); b == "" {
		t.Error("the option's zero-width space is not shown")
	}
	press(t, f, alice, alice, c, "✖️ Cancel")
	waitText(t, f, alice, `Tool said: {"action":"cancel","content":null}`)

	f.Text(alice, alice, `tool ask {"message": "0123456789", "repeat": 1000}`)
	c = card(t, f, alice, "0123456789")
	if n := len([]rune(c.Plain)); n > 4096 || !strings.Contains(c.Plain, "0123456789") || !strings.Contains(c.Plain, "…") {
		t.Errorf("card of %d characters; want the message cut", n)
	}
	press(t, f, alice, alice, c, "✖️ Cancel")
	waitText(t, f, alice, `Tool said: {"action":"cancel","content":null}`)
}

// A server that asks in a loop gets at most ten questions to the user in
// one call; then the call fails, and the model is told.
func TestFormLoopInTelegram(t *testing.T) {
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, `tool loop {"n": 50}`)
	for i := range mcpgram.MaxElicitations {
		f.WaitFor(t, 30*time.Second, "card of question "+string(rune('0'+i)), func() bool {
			return countText(f, alice, "Again?") == i+1
		})
		c := card(t, f, alice, "Again?")
		press(t, f, alice, alice, c, "✅ Submit")
	}
	waitText(t, f, alice, "Tool failed:")
	if n := countText(f, alice, "Again?"); n != mcpgram.MaxElicitations {
		t.Errorf("%d questions reached the user, want %d", n, mcpgram.MaxElicitations)
	}
}

// A form nobody answers expires after the approval timeout as cancel; its
// card says so; meanwhile another chat is served.
func TestFormExpiresInTelegram(t *testing.T) {
	s := newFormStack(t, false, func(_ *mcpgram.Profile, o *agent.Options) { o.ApprovalTimeout = 2 * time.Second })
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, "tool book")
	c := card(t, f, alice, "f asks you, during book")
	f.Text(bob, bob, "hello there")
	waitText(t, f, bob, "Hello: hello there")
	if _, ok := lastWith(f, alice, "Tool said"); ok {
		t.Fatal("alice's call ended before her form expired")
	}
	edited(t, f, alice, c, "Nobody answered in time; f was told so.")
	waitText(t, f, alice, `Tool said: {"action":"cancel","content":null}`)
}

// /cancel stops a call that waits for a form: the card says so.
func TestFormStoppedInTelegram(t *testing.T) {
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, "tool book")
	c := card(t, f, alice, "f asks you, during book")
	f.Text(alice, alice, "/cancel")
	edited(t, f, alice, c, "The call ended before the form was answered.")
	waitText(t, f, alice, "Stopped.")
}
