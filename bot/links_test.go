package bot_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/llmfake"
	"github.com/mcpgram/mcpgram/internal/testenv"
	"github.com/mcpgram/mcpgram/internal/tgfake"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// The resource links a tool returns are buttons for the turn's user
// alone: one the server auto-approves opens at a press, as a photo; one
// it does not asks first on an approval card, then comes as a document.
// The model is told the links exist.
func TestResourceLinksInTelegram(t *testing.T) {
	dir := t.TempDir()
	s := &stack{t: t, fake: tgfake.New(t)}
	s.settings = testenv.WriteSettings(t, dir, map[string]any{
		"f": testenv.FeaturesEntry(t, false, "report", "resource:features://report/chart.png"),
	})
	s.hub = testenv.StartHub(t, s.settings, hub.Options{NoWatch: true})
	testenv.Running(t, s.hub)
	var err error
	if s.db, err = sqlite.Open(context.Background(), filepath.Join(dir, "mcpgram.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.db.Close() })
	s.model = llmfake.New(t, formModel)
	s.agent = newAgent(t, s.db, s.hub, s.model, nil)
	s.start(nil)
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
	// A button this instance does not know (a restart's) says so.
	if ans := press(t, f, group, alice, links, "🖼 chart.png"); ans.ShowAlert {
		t.Errorf("a second press on a known link was refused: %+v", ans)
	}
	cb := f.Press(group, alice, links.ID, "r:0123456789ab")
	f.WaitFor(t, 30*time.Second, "the answer to an unknown link", func() bool {
		ans, ok := f.Answer(cb)
		return ok && strings.Contains(ans.Text, "no longer available")
	})
}
