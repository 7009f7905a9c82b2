package bot_test

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"image/png"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/statsview"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// statsRequests are what the user of TestE2EStats types; statsModel
// answers each the way the test needs.
var statsRequests = []string{"hello", "echo ping", "fail now", "malformed", "deny me", "break"}

// statsModel reports 100 tokens in and 10 out for every reply, so the
// test knows the totals.
func statsModel(c llmfake.Call) llmfake.Reply {
	msgs := c.Request.Messages
	last := msgs[len(msgs)-1].Content
	var topic string
	for _, m := range slices.Backward(msgs) {
		if slices.Contains(statsRequests, m.Content) {
			topic = m.Content
			break
		}
	}
	text := complete("Done: " + topic)
	switch last {
	case "hello":
		text = "Hi there." // a plain answer: no tool block
	case "echo ping":
		text = useTool("echo", "echo", `{"message": "ping"}`)
	case "fail now":
		text = useTool("echo", "fail", `{}`)
	case "malformed":
		text = useTool("echo", "no_such_tool", `{}`) // fed back, then answered
	case "deny me":
		text = useTool("echo", "pid", `{}`) // not auto-approved
	case "break":
		return llmfake.Reply{Status: 400, Error: "the provider refuses"}
	}
	return llmfake.Reply{Content: text, Usage: &llmfake.Usage{PromptTokens: 100, CompletionTokens: 10}}
}

// newServersStack starts a stack of the servers (settings entries by
// name): a running hub (opts, not watching the file), a SQLite store in a
// folder of its own, and a model answering with h. The agent is the
// caller's to make.
func newServersStack(t testing.TB, servers map[string]any, h llmfake.Handler, opts hub.Options) *stack {
	t.Helper()
	s := newUnstartedStack(t, servers, h, opts)
	s.startHub()
	return s
}

// newUnstartedStack is newServersStack with the hub made but not started,
// for a test to make the agent the hub asks through first (startHub then
// starts it).
func newUnstartedStack(t testing.TB, servers map[string]any, h llmfake.Handler, opts hub.Options) *stack {
	t.Helper()
	dir := t.TempDir()
	s := &stack{t: t, fake: tgfake.New(t)}
	s.settings = testenv.WriteSettings(t, dir, servers)
	opts.NoWatch = true
	s.hub = testenv.NewHub(t, s.settings, opts)
	var err error
	if s.db, err = sqlite.Open(context.Background(), filepath.Join(dir, "mcpgram.db")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.db.Close() })
	s.model = llmfake.New(t, h)
	return s
}

// startHub starts the stack's hub and fails the test unless every server
// runs.
func (s *stack) startHub() {
	s.t.Helper()
	testenv.Start(s.t, s.hub)
	testenv.Running(s.t, s.hub)
}

// startAsking is startHub with the stack's agent as the hub's Elicitor,
// as the program wires them: the agent made first, the hub told, then
// started.
func (s *stack) startAsking() {
	s.t.Helper()
	if err := s.hub.AskThrough(hub.Askers{Elicitor: s.agent}); err != nil {
		s.t.Fatal(err)
	}
	s.startHub()
}

// newEchoStack is newStack on the test server hub/testdata/echo (echo and
// fail auto-approved), which needs no Node.
func newEchoStack(t *testing.T, h llmfake.Handler) *stack {
	t.Helper()
	s := newServersStack(t, map[string]any{"echo": testenv.EchoEntry(t, "echo", "fail")}, h, hub.Options{})
	s.agent = newAgent(t, s.db, s.hub, s.model, nil)
	return s
}

// /stats shows exactly the turns the test ran: answers, a tool call that
// worked, one that failed, a malformed call fed back, a denied approval
// and a failing model; a non-admin is refused. Records past the retention
// are swept.
func TestE2EStats(t *testing.T) {
	s := newEchoStack(t, statsModel)
	// A record past the retention, which the sweep deletes.
	old := time.Now().Add(-31 * 24 * time.Hour)
	if err := s.db.RecordTurn(context.Background(), store.TurnRecord{TurnID: "old", UserID: "9", ChatID: "9", Outcome: "answer", At: old}); err != nil {
		t.Fatal(err)
	}
	s.start(nil)

	say := func(text, want string) {
		t.Helper()
		before := countText(s.fake, alice, want)
		s.fake.Text(alice, alice, text)
		s.fake.WaitFor(t, 30*time.Second, "reply to "+text, func() bool { return countText(s.fake, alice, want) > before })
	}
	say("hello", "Hi there.")
	say("echo ping", "Done: echo ping")
	say("fail now", "Done: fail now")
	say("malformed", "Done: malformed")
	say("deny me", "Approval needed")
	card, _ := lastWith(s.fake, alice, "Approval needed")
	waitAnswer(t, s.fake, s.fake.Press(alice, alice, card.ID, strings.SplitN(card.Buttons()[1], "=", 2)[1]))
	waitText(t, s.fake, alice, "Done: deny me")
	say("break", "The model provider rejected the request")

	s.fake.Text(alice, alice, "/stats")
	waitText(t, s.fake, alice, "Sorry, only admins can see the statistics.")
	// /usage counts the same tokens: 9 replies of 100 in and 10 out.
	s.fake.Text(alice, alice, "/usage")
	if u := waitText(t, s.fake, alice, "Your token usage"); !strings.Contains(u.Plain, "Today: 990 tokens (900 in, 90 out)") {
		t.Errorf("/usage = %q, want the 990 tokens of the turns run", u.Plain)
	}

	s.fake.Text(admin, admin, "/stats")
	health := waitText(t, s.fake, admin, "Servers now")
	msgs := s.fake.Messages(admin)
	day, _ := lastWith(s.fake, admin, "Last 24 hours")
	week, _ := lastWith(s.fake, admin, "Last 7 days")
	if len(msgs) != 4 || msgs[2].Photo == nil {
		t.Fatalf("/stats sent %d messages, want 4 (24 hours, 7 days, a chart, servers):\n%s", len(msgs), s.fake.Dump())
	}
	checkChart(t, msgs[2], 6, 1) // 6 answered (or asking for approval), 1 failed

	t.Logf("/stats:\n%s\n\n%s\n\n%s", day.Text, week.Plain, health.Plain)
	// 7 turns: 5 answered (the denial's press is a turn of its own), one
	// approval request, one model failure. 10 model calls: hello 1, echo,
	// fail and malformed 2 each, deny 1 + 1 after the press, break 1. 8
	// tool blocks, all at the first try but the unknown tool.
	want := []string{
		"Turns: 7\nanswer 5 · approval 1 · error 1\n",
		"Errors: 1\nbad_request 1\n",
		"Model fake\n10 calls, 1 failed (bad_request 1)\nLatency p50 ",
		"Format at first try: 7 of 8 (88%)\n",
		"Tokens: 900 in · 90 out\n",
		"• echo/echo: 1 call, 0% failed\n  p50 ",
		"• echo/fail: 1 call, 100% failed\n  p50 ",
		"• echo/pid: 0 calls, 1 denied\n",
		"Top users by tokens\n1. 2: 990",
	}
	for _, m := range []tgfake.Message{day, week} {
		for _, w := range want {
			if !strings.Contains(m.Plain, w) {
				t.Errorf("/stats says:\n%s\nwant it to say %q", m.Plain, w)
			}
		}
		if strings.Count(m.Plain, "• ") != 3 {
			t.Errorf("/stats lists %d tools, want 3:\n%s", strings.Count(m.Plain, "• "), m.Plain)
		}
	}
	if !strings.Contains(health.Plain, "✅ echo: running, ") {
		t.Errorf("server health: %q", health.Plain)
	}

	// The sweep deleted the old record (the bot sweeps at its first beat).
	testenv.Eventually(t, 10*time.Second, "the old record swept", func() bool {
		st, err := s.db.Stats(context.Background(), old.Add(-time.Hour), old.Add(time.Hour), 0)
		return err == nil && len(st.Turns) == 0
	})

	// The admins' menu has it (TestAdminCommandMenu); everyone's does not.
	if slices.ContainsFunc(s.fake.Commands(0), func(c tgbotapi.BotCommand) bool { return c.Command == "stats" }) {
		t.Errorf("everyone's commands %+v have /stats", s.fake.Commands(0))
	}
}

// /stats of a busy window stays short: the tools beyond the tenth are
// counted, not listed; names are escaped; every message is one Telegram
// takes (tgfake refuses HTML it would refuse, and messages over 4096
// characters). An empty window says so.
func TestStatsRendering(t *testing.T) {
	fake := tgfake.New(t)
	dir := t.TempDir()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "mcpgram.db"))
	if err != nil {
		t.Fatal(err)
	}
	startBotWith(t, fake, db, true, newFakeAgent(), newFakeHub(2), nil)

	fake.Text(admin, admin, "/stats")
	waitText(t, fake, admin, "Servers now")
	if n := countText(fake, admin, "Nothing happened."); n != 2 {
		t.Errorf("an empty database: %d windows say nothing happened, want 2:\n%s", n, fake.Dump())
	}

	ctx := context.Background()
	long := strings.Repeat("<very&long>", 6)
	for i := range 15 {
		for j := range 20 - i { // tool i has 20-i calls: the order is known
			c := store.ToolCall{UserID: "u", ChatID: "c", Server: long, Tool: fmt.Sprintf("tool%02d", i), Status: "ok", Duration: time.Duration(j) * time.Millisecond}
			if err := db.RecordToolCall(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 8 {
		if err := db.RecordTurn(ctx, store.TurnRecord{UserID: fmt.Sprintf("user%d", i), ChatID: "c", Outcome: "answer", Model: long,
			Calls: []store.ModelCall{{Outcome: "ok", In: 1000 * (i + 1), Out: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	// Searches: found<i> is found 8-i times, and, for an even i, called
	// after the first search that found it; one search found nothing.
	var searches []store.Search
	for i := range 8 {
		ref := store.ToolRef{Server: long, Tool: fmt.Sprintf("found%d", i)}
		for j := range 8 - i {
			s := store.Search{Found: []store.ToolRef{ref}}
			if i%2 == 0 && j == 0 {
				s.Called = []store.ToolRef{ref}
			}
			searches = append(searches, s)
		}
	}
	searches = append(searches, store.Search{})
	if err := db.RecordTurn(ctx, store.TurnRecord{UserID: "user0", ChatID: "c", Outcome: "answer", Searches: searches}); err != nil {
		t.Fatal(err)
	}
	// Background calls: two ended after two hours, one still running.
	for i, end := range []string{"completed", "completed", ""} {
		id, err := db.PutTask(ctx, store.Task{Server: long, Handle: fmt.Sprint("h", i), Tool: "slow", ChatID: "c", UserID: "u",
			Status: "working", NextPoll: time.Now(), CreatedAt: time.Now().Add(-2 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if end != "" {
			if err := db.FinishTask(ctx, id, end, "", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := len(fake.Messages(admin))
	fake.Text(admin, admin, "/stats")
	fake.WaitFor(t, 30*time.Second, "four more messages", func() bool { return len(fake.Messages(admin)) == before+4 }) // with the chart
	day := fake.Messages(admin)[before]
	for _, want := range []string{
		"• " + long + "/tool00: 20 calls, 0% failed\n  p50 9 ms · p95 18 ms\n",
		"• " + long + "/tool09: 11 calls",
		"… and 5 more\n",
		"Model " + long + "\n8 calls\n",
		"1. user7: 8,001\n2. user6: 7,001\n3. user5: 6,001\n4. user4: 5,001\n5. user3: 4,001",
		"Tool search\n37 searches, 1 found nothing\nThen called a tool found: 4 (11%)\n• " + long + "/found0: found 8, called 1\n• " + long + "/found1: found 7, called 0\n",
		"/found4: found 4, called 1\n… and 3 more found\n",
		"Background calls: 3\ncompleted 2 · running 1\nRan p50 2.0 h · p95 2.0 h",
	} {
		if !strings.Contains(day.Plain, want) {
			t.Errorf("/stats says:\n%s\nwant it to say %q", day.Plain, want)
		}
	}
	if strings.Contains(day.Plain, "tool10") || strings.Contains(day.Plain, "user2") || strings.Contains(day.Plain, "found5") {
		t.Errorf("/stats lists more than 10 tools, 5 users or 5 tools found:\n%s", day.Plain)
	}
}

// checkChart reads the chart of /stats: a PNG of the chart's size,
// where every turn of the test is in the last bar of both panels,
// answered at the bottom, failed above, at heights in proportion; every
// other bar is empty. Where the bars are comes from drawing the same
// counts again: the geometry, not the pixels, which are the ones sent.
func checkChart(t *testing.T, m tgfake.Message, answered, failed int) {
	t.Helper()
	if !strings.Contains(m.Caption, "last 24 hours and the last 7 days") {
		t.Errorf("chart caption %q", m.Caption)
	}
	img, err := png.Decode(bytes.NewReader(m.Photo))
	if err != nil {
		t.Fatalf("the chart is no PNG: %v", err)
	}
	if img.Bounds() != statsview.Bounds() || img.Bounds().Dx() < 1000 {
		t.Errorf("the chart is %v, want %v", img.Bounds(), statsview.Bounds())
	}
	day, week := make([]store.Bucket, 24), make([]store.Bucket, 7)
	last := []store.Count{{Name: "answer", N: int64(answered)}, {Name: "error", N: int64(failed)}}
	day[23].Turns, week[6].Turns = last, last
	_, lay, err := statsview.Chart(day, week)
	if err != nil {
		t.Fatal(err)
	}
	for p, panel := range lay.Panels {
		for i, x := range panel.BarX {
			counts := [3]int{} // pixels of each colour in the bar's middle column
			for y := panel.Base - int(float64(answered+failed+2)*panel.Unit); y <= panel.Base; y++ {
				for k, c := range statsview.Colors {
					if color.RGBAModel.Convert(img.At(x, y)) == c {
						counts[k]++
					}
				}
			}
			want := [3]int{}
			if i == len(panel.BarX)-1 {
				want = [3]int{int(float64(answered) * panel.Unit), int(float64(failed) * panel.Unit), 0}
			}
			for k := range counts {
				if d := counts[k] - want[k]; d < -2 || d > 2 {
					t.Errorf("panel %d, bar %d: %v pixels answered, failed, stopped; want %v (±2)", p, i, counts, want)
					break
				}
			}
		}
	}
	// The legend shows the three colours, stopped too.
	var seen [3]bool
	for y := range img.Bounds().Dy() / 20 {
		for x := range img.Bounds().Dx() {
			for k, c := range statsview.Colors {
				seen[k] = seen[k] || color.RGBAModel.Convert(img.At(x, y)) == c
			}
		}
	}
	if seen != [3]bool{true, true, true} {
		t.Errorf("the legend's colours present: %v, want all three", seen)
	}
}
