package bot_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// The resource links a tool returns are buttons for the turn's user
// alone: one the server auto-approves opens at a press, as a photo; one
// it does not asks first on an approval card, then comes as a document.
// The model is told the links exist.
func TestResourceLinksInTelegram(t *testing.T) {
	s := newServersStack(t, map[string]any{
		"f": testenv.FeaturesEntry(t, false, "report", "resource:features://report/chart.png"),
	}, formModel, hub.Options{})
	s.agent = newAgent(t, s.db, s.hub, s.model, nil)
	first := s.start(nil)
	f := s.fake
	const group = -66
	f.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "@mcpgram_bot tool report"})
	waitText(t, f, group, "Tool said: The report is ready.")
	links := card(t, f, group, "returned 2 links to open")
	if got := links.Buttons(); len(got) != 2 || !strings.HasPrefix(got[0], "🖼 chart.png=r:") || !strings.HasPrefix(got[1], "📄 notes.txt=r:") {
		t.Fatalf("buttons %q", got)
	}
	told := false
	for _, m := range s.model.Calls()[1].Request.Messages {
		told = told || strings.Contains(m.Content, `[resource link "chart.png": features://report/chart.png, offered to the user to open]`)
	}
	if !told {
		t.Error("the model was not told of the links")
	}

	if ans := press(t, f, group, bob, links, "🖼 chart.png"); !ans.ShowAlert || !strings.Contains(ans.Text, "Only the person who asked") {
		t.Errorf("another member's press was answered %+v", ans)
	}
	press(t, f, group, alice, links, "🖼 chart.png")
	f.WaitFor(t, 30*time.Second, "the chart as a photo", func() bool {
		for _, m := range f.Messages(group) {
			if len(m.Photo) > 0 && strings.HasPrefix(m.Caption, "chart.png · f") {
				return true
			}
		}
		return false
	})

	press(t, f, group, alice, links, "📄 notes.txt")
	approval := card(t, f, group, "Read features://report/notes.txt on f?")
	if ans := press(t, f, group, bob, approval, "✅ Approve"); !ans.ShowAlert {
		t.Errorf("another member's approval was answered %+v", ans)
	}
	press(t, f, group, alice, approval, "❌ Deny")
	waitText(t, f, group, "Not read: features://report/notes.txt on f")
	press(t, f, group, alice, links, "📄 notes.txt")
	f.WaitFor(t, 30*time.Second, "a second approval card", func() bool {
		n := 0
		for _, m := range f.Messages(group) {
			if strings.Contains(m.Plain, "Read features://report/notes.txt on f?") && len(m.Keyboard) > 0 {
				n++
			}
		}
		return n == 1
	})
	approval, _ = lastWith(f, group, "Read features://report/notes.txt on f?")
	press(t, f, group, alice, approval, "✅ Approve")
	f.WaitFor(t, 30*time.Second, "the notes as a document", func() bool {
		for _, m := range f.Messages(group) {
			if m.DocumentName == "notes.txt" && string(m.Document) == "Notes of the report (features://report/notes.txt)." {
				return true
			}
		}
		return false
	})
	if ans := press(t, f, group, alice, links, "🖼 chart.png"); ans.ShowAlert {
		t.Errorf("a second press on a known link was refused: %+v", ans)
	}
	f.WaitFor(t, 30*time.Second, "the chart sent again", func() bool { return countPhotos(f, group, "chart.png · f") == 2 })

	// The links are stored: after a restart, the buttons still work, for
	// their user alone.
	first.stop()
	s.start(nil)
	if ans := press(t, f, group, bob, links, "🖼 chart.png"); !ans.ShowAlert || !strings.Contains(ans.Text, "Only the person who asked") {
		t.Errorf("after a restart, another member's press was answered %+v", ans)
	}
	press(t, f, group, alice, links, "🖼 chart.png")
	f.WaitFor(t, 30*time.Second, "the chart sent after a restart", func() bool { return countPhotos(f, group, "chart.png · f") == 3 })

	// A key that names nothing, a link of another chat, and an expired
	// link are all no longer available.
	if err := s.db.PutLink(context.Background(), store.Link{Key: "0123456789ac", ChatID: "-67", UserID: strconv.FormatInt(alice, 10),
		Server: "f", URI: "features://report/chart.png", ExpiresAt: time.Now().Add(time.Hour)}, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.db.PutLink(context.Background(), store.Link{Key: "0123456789ad", ChatID: strconv.Itoa(group), UserID: strconv.FormatInt(alice, 10),
		Server: "f", URI: "features://report/chart.png", CreatedAt: time.Now().Add(-2 * time.Hour), ExpiresAt: time.Now().Add(-time.Hour)}, 10); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"0123456789ab", "0123456789ac", "0123456789ad"} {
		cb := f.Press(group, alice, links.ID, "r:"+key)
		f.WaitFor(t, 30*time.Second, "the answer to link "+key, func() bool {
			ans, ok := f.Answer(cb)
			return ok && strings.Contains(ans.Text, "no longer available")
		})
	}
	if n := countPhotos(f, group, "chart.png · f"); n != 3 {
		t.Errorf("%d charts sent, want 3", n)
	}
}

// countPhotos counts the photos sent to chat whose caption starts with
// caption.
func countPhotos(f *tgfake.Server, chat int64, caption string) int {
	n := 0
	for _, m := range f.Messages(chat) {
		if len(m.Photo) > 0 && strings.HasPrefix(m.Caption, caption) {
			n++
		}
	}
	return n
}
