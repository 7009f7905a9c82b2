package bot_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// The user sees what they approve: every argument's key and the start of
// its value are on the card, however long the other arguments are, and
// the arguments in full are on the card or attached to it.
func TestApprovalCardShowsEveryArgument(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	h := startBot(t, fake, t.TempDir(), a, newFakeHub(1), nil)
	user := int64(alice)

	// card asks for an approval of args and returns the messages the card
	// took, the last one holding the buttons, and any attachment.
	card := func(t *testing.T, args string) (parts []tgfake.Message, doc *tgfake.Message) {
		t.Helper()
		a.approveArgs(args)
		before := len(fake.Messages(user))
		fake.Text(user, user, "approve args")
		// The buttons come with the card's last part; a file the card
		// announces follows it.
		fake.WaitFor(t, 10*time.Second, "the approval card", func() bool {
			msgs := fake.Messages(user)[before:]
			for i, m := range msgs {
				if len(m.Buttons()) > 0 {
					return !strings.Contains(m.Plain, "arguments.json, below") || hasDoc(msgs[i:])
				}
			}
			return false
		})
		// The turn ends after its last part is sent; a stop before that
		// would cut it short.
		waitHandled(t, h)
		for _, m := range fake.Messages(user)[before:] {
			switch {
			case m.FromID != tgfake.BotUser.ID:
			case m.DocumentName != "":
				doc = &m
			default:
				parts = append(parts, m)
			}
		}
		return parts, doc
	}

	t.Run("a long value cannot hide a path", func(t *testing.T) {
		args := fmt.Sprintf(`{"content": %q, "path": "/etc/cron.d/evil"}`, strings.Repeat("harmless ", 450))
		parts, doc := card(t, args)
		if len(parts) != 1 {
			t.Fatalf("card took %d messages, want 1", len(parts))
		}
		plain := parts[0].Plain
		for _, want := range []string{"• path: \"/etc/cron.d/evil\"", "• content: \"harmless harmless", "more characters)", "Approve"} {
			if !strings.Contains(plain+strings.Join(parts[0].Buttons(), " "), want) {
				t.Errorf("card lacks %q:\n%s", want, plain)
			}
		}
		if strings.Contains(parts[0].Text, "<blockquote expandable>") {
			t.Error("4 KB of arguments are quoted on a card of 4096 characters")
		}
		if doc == nil || doc.DocumentName != "arguments.json" {
			t.Fatal("no arguments.json attached")
		}
		var got map[string]string
		if err := json.Unmarshal(doc.Document, &got); err != nil || got["path"] != "/etc/cron.d/evil" || got["content"] != strings.Repeat("harmless ", 450) {
			t.Errorf("attached arguments = %.200q (%v), want them whole", doc.Document, err)
		}
		if doc.ReplyTo != parts[0].ID {
			t.Errorf("the file replies to message %d, want the card %d", doc.ReplyTo, parts[0].ID)
		}
	})

	t.Run("a shortened value is quoted in full when it fits", func(t *testing.T) {
		args := fmt.Sprintf(`{"content": %q, "path": "/tmp/x"}`, strings.Repeat("y", 1000))
		parts, doc := card(t, args)
		if doc != nil || len(parts) != 1 {
			t.Fatalf("%d messages and a document: %v, want one card", len(parts), doc != nil)
		}
		if !strings.Contains(parts[0].Text, "<blockquote expandable>") || !strings.Contains(parts[0].Plain, strings.Repeat("y", 1000)) {
			t.Errorf("card lacks the arguments in full:\n%s", parts[0].Text)
		}
	})

	t.Run("nested values are listed by path", func(t *testing.T) {
		args := fmt.Sprintf(`{"options": {"content": %q, "target": {"path": "/etc/passwd"}}, "list": [1, {"to": "mallory"}]}`, strings.Repeat("z", 3000))
		parts, _ := card(t, args)
		plain := parts[0].Plain
		for _, want := range []string{`• options.target.path: "/etc/passwd"`, `• list[1].to: "mallory"`, "• list[0]: 1", "• options.content: \"zzz"} {
			if !strings.Contains(plain, want) {
				t.Errorf("card lacks %q:\n%s", want, plain)
			}
		}
	})

	t.Run("hostile keys are quoted, values escaped", func(t *testing.T) {
		args := `{"a\n• path": "forged line", "<b>x</b>": "</code><i>", "ok": "line1\nline2 \u0007"}`
		parts, _ := card(t, args)
		plain, html := parts[0].Plain, parts[0].Text
		for _, want := range []string{`• "a\n• path": "forged line"`, `• "<b>x</b>": "</code><i>"`, "• ok:\nline1\nline2 \\u0007"} {
			if !strings.Contains(plain, want) {
				t.Errorf("card lacks %q:\n%s", want, plain)
			}
		}
		if strings.Contains(html, "<b>x</b>") || strings.Contains(html, "</code><i>") {
			t.Errorf("argument HTML reached the card unescaped:\n%s", html)
		}
	})

	t.Run("hidden characters are shown", func(t *testing.T) {
		args := `{"path": "invoice\u202Efdp.exe", "to\u200B": "a\u2066b", "note": "😀\uDB40\uDC41"}`
		parts, _ := card(t, args)
		plain := parts[0].Plain
		for _, want := range []string{`• path: "invoice\u202Efdp.exe"`, `• "to\u200B": "a\u2066b"`, `• note: "😀\uDB40\uDC41"`} {
			if !strings.Contains(plain, want) {
				t.Errorf("card lacks %q:\n%s", want, plain)
			}
		}
		if strings.ContainsAny(plain, "\u202E\u200B\u2066\U000E0041") {
			t.Errorf("the card shows hidden characters raw: %q", plain)
		}
		// In full, on the card or attached, they show too, and the JSON
		// still means what runs.
		long := fmt.Sprintf(`{"content": %q, "path": "invoice\u202Efdp.exe"}`, strings.Repeat("harmless ", 450))
		parts, doc := card(t, long)
		if doc == nil || strings.ContainsRune(string(doc.Document), '\u202E') || !strings.Contains(string(doc.Document), `invoice\u202Efdp.exe`) {
			t.Fatalf("attached arguments show the override raw, or lack it: %v", doc)
		}
		var got map[string]string
		if err := json.Unmarshal(doc.Document, &got); err != nil || got["path"] != "invoice\u202Efdp.exe" {
			t.Errorf("attached arguments = %q (%v), want the same value", got["path"], err)
		}
		_ = parts
	})

	t.Run("a thousand arguments all show their keys", func(t *testing.T) {
		m := map[string]string{}
		for i := range 1000 {
			m[fmt.Sprintf("key%04d", i)] = strings.Repeat("v", 100)
		}
		b, _ := json.Marshal(m)
		parts, _ := card(t, string(b))
		if len(parts) < 2 {
			t.Fatalf("a card of 1000 arguments took %d message(s)", len(parts))
		}
		var all strings.Builder
		for _, p := range parts {
			all.WriteString(p.Plain)
		}
		for i := range 1000 {
			if k := fmt.Sprintf("• key%04d: \"vvv", i); !strings.Contains(all.String(), k) {
				t.Fatalf("cards lack %q", k)
			}
		}
		if len(parts[len(parts)-1].Buttons()) == 0 {
			t.Error("the buttons are not on the last part")
		}
	})
}

// Resource reads and consent calls get cards of their own: the read names
// server and URI, and a consent card offers no "Always allow", even to an
// admin.
func TestApprovalCardKinds(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	startBot(t, fake, t.TempDir(), a, newFakeHub(1), func(c *bot.Options) { c.AdminUserIDs = []int64{alice} })
	card := func(args string) tgfake.Message {
		t.Helper()
		a.approveArgs(args)
		before := countText(fake, alice, "needed")
		fake.Text(alice, alice, "approve args")
		fake.WaitFor(t, 10*time.Second, "the card", func() bool { return countText(fake, alice, "needed") == before+1 })
		m, _ := lastWith(fake, alice, "needed")
		return m
	}
	m := card("resource:demo://resource/<secret>&x")
	if !strings.Contains(m.Plain, "Read demo://resource/<secret>&x from files.") {
		t.Errorf("resource card = %q", m.Plain)
	}
	if b := m.Buttons(); len(b) != 3 || !strings.HasPrefix(b[2], "♾ Always allow this resource=") {
		t.Errorf("admin's resource card buttons = %q", b)
	}
	m = card("resource:demo://x/invoice\u202Efdp.exe")
	if !strings.Contains(m.Plain, `Read demo://x/invoice\u202Efdp.exe from files.`) {
		t.Errorf("resource card = %q, want the override shown", m.Plain)
	}
	m = card(`consent:{"operation": "delete", "key": "wife"}`)
	for _, want := range []string{"Your consent is needed", "• key: \"wife\"", "• operation: \"delete\""} {
		if !strings.Contains(m.Plain, want) {
			t.Errorf("consent card lacks %q: %q", want, m.Plain)
		}
	}
	// A memory store asks the question it is.
	a.approveArgs(`consent:{"operation": "store", "content": "Anna is my wife.\nShe likes tea."}`)
	fake.Text(alice, alice, "approve args")
	m = waitText(t, fake, alice, "Remember this?")
	if want := "🧠 Remember this?\nAnna is my wife.\nShe likes tea.\nAsked by memory on memory, which stores it only if you agree."; !strings.Contains(m.Plain, want) {
		t.Errorf("memory card = %q, want it to say %q", m.Plain, want)
	}
	waitAnswer(t, fake, fake.Press(alice, alice, m.ID, strings.SplitN(m.Buttons()[0], "=", 2)[1]))
	fake.WaitFor(t, 10*time.Second, "the card says the user agreed", func() bool {
		for _, c := range fake.Messages(alice) {
			if c.ID == m.ID {
				return strings.HasSuffix(c.Plain, "✅ You agreed.")
			}
		}
		return false
	})
	if b := m.Buttons(); len(b) != 2 || !strings.HasPrefix(b[0], "✅ I agree=") {
		t.Errorf("admin's consent card buttons = %q, want I agree and No only", b)
	}
}

func hasDoc(msgs []tgfake.Message) bool {
	for _, m := range msgs {
		if m.DocumentName != "" {
			return true
		}
	}
	return false
}

// An approval card reads as what it asks, on the real stack: what the
// tool's server says of it (as its claim), a call without arguments says
// so; and an answered card keeps its outcome and loses its expiry line,
// however it was answered.
func TestE2EApprovalCardReadsAndCloses(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	s.start(nil)
	card := func(text string) tgfake.Message {
		t.Helper()
		before := countText(s.fake, alice, "Approval needed")
		s.fake.Text(alice, alice, text)
		s.fake.WaitFor(t, 30*time.Second, "the card for "+text, func() bool { return countText(s.fake, alice, "Approval needed") == before+1 })
		m, _ := lastWith(s.fake, alice, "Approval needed")
		return m
	}
	// closed waits until the card's buttons are gone and returns it.
	closed := func(m tgfake.Message) tgfake.Message {
		t.Helper()
		var got tgfake.Message
		s.fake.WaitFor(t, 30*time.Second, "the card closed", func() bool {
			for _, c := range s.fake.Messages(alice) {
				if c.ID == m.ID && len(c.Buttons()) == 0 {
					got = c
					return true
				}
			}
			return false
		})
		if strings.Contains(got.Plain, "Expires in") {
			t.Errorf("the answered card still says when it expires:\n%s", got.Plain)
		}
		return got
	}

	m := card("add numbers")
	for _, want := range []string{"Run add on echo with:\n• a: 2\n• b: 3\n", "Its server says this tool changes nothing; keeps to its own data (the server's claim, not checked).", "Expires in 10 min"} {
		if !strings.Contains(m.Plain, want) {
			t.Errorf("card lacks %q:\n%s", want, m.Plain)
		}
	}
	waitAnswer(t, s.fake, s.fake.Press(alice, alice, m.ID, strings.SplitN(m.Buttons()[0], "=", 2)[1]))
	if got := closed(m); !strings.HasSuffix(got.Plain, "• b: 3\nℹ️ Its server says this tool changes nothing; keeps to its own data (the server's claim, not checked).\n\n✅ Approved.") {
		t.Errorf("approved card:\n%s", got.Plain)
	}
	waitText(t, s.fake, alice, "Tool said: The sum of 2 and 3 is 5")

	m = card("which pid")
	for _, want := range []string{"Run pid on echo with no arguments.\n", "may delete or overwrite; each call acts again; reaches the outside world"} {
		if !strings.Contains(m.Plain, want) {
			t.Errorf("card lacks %q:\n%s", want, m.Plain)
		}
	}
	waitAnswer(t, s.fake, s.fake.Press(alice, alice, m.ID, strings.SplitN(m.Buttons()[1], "=", 2)[1]))
	if got := closed(m); !strings.HasSuffix(got.Plain, "\n\n❌ Denied.") {
		t.Errorf("denied card:\n%s", got.Plain)
	}

	// A typed message denies it: the card says so, and no more when it
	// expires.
	m = card("add numbers")
	s.fake.Text(alice, alice, "never mind")
	if got := closed(m); !strings.HasSuffix(got.Plain, "❌ Denied: a new message came first.") {
		t.Errorf("card denied by a message:\n%s", got.Plain)
	}
}

// A card pressed after a restart, whose text is all the new process has
// of it, loses its expiry line too.
func TestApprovalPressedAfterRestart(t *testing.T) {
	fake := tgfake.New(t)
	dir := t.TempDir()
	a := newFakeAgent()
	h1 := startBot(t, fake, dir, a, newFakeHub(1), nil)
	fake.Text(alice, alice, "approve")
	m := waitText(t, fake, alice, "Expires in 60 min")
	waitHandled(t, h1)
	h1.stop()
	startBot(t, fake, dir, a, newFakeHub(1), nil)
	waitAnswer(t, fake, fake.Press(alice, alice, m.ID, strings.SplitN(m.Buttons()[0], "=", 2)[1]))
	waitText(t, fake, alice, "approved (always=false)")
	for _, c := range fake.Messages(alice) {
		if c.ID == m.ID && (!strings.HasSuffix(c.Plain, "<hi> & bye\"\n\n✅ Approved.") || strings.Contains(c.Plain, "Expires")) {
			t.Errorf("card after the press:\n%s", c.Plain)
		}
	}
}
