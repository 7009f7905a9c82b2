package metrics_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/metrics"
)

// Every family, once each method has counted something, is in the table of
// docs/operations.md ("Metrics and health"), under its full name.
func TestEveryFamilyDocumented(t *testing.T) {
	readme, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	m.Turn("answer")
	m.ModelCall("model", "ok", time.Second, time.Millisecond)
	m.Tokens("model", 1, 1, false)
	m.Format("model", "first_try", "")
	m.ToolCall("server", "tool", "ok", time.Millisecond)
	m.ResourceRead("server", "ok")
	m.ServerStarted("server", time.Millisecond)
	m.ServerRestart("server")
	m.Updates(1)
	m.TelegramRequest("sendMessage", "429", true)
	m.Search("model", true)
	m.SearchFound("server", "tool")
	m.SearchCalled("server", "tool")
	m.TaskStarted("server")
	m.TaskFinished("server", "completed", time.Minute)
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fams {
		name := f.GetName()
		if !strings.HasPrefix(name, "mcpgram_") {
			continue
		}
		n++
		if !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("docs/operations.md does not document %s", name)
		}
	}
	if n != 20 {
		t.Errorf("%d mcpgram_ families, want 20: a new one needs a line in docs/operations.md, and here", n)
	}
}
