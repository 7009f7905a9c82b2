package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	main "github.com/mcpgram/mcpgram/cmd/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// `mcpgram run` as a user starts it: configuration from the environment,
// the real store, hub, agent and bot, with only Telegram and the model
// faked. A message goes in, the model calls a bundled server, the answer
// comes out, and SIGTERM (here: the context) stops it cleanly.
func TestRun(t *testing.T) {
	path := settings(t, nil)
	tg := tgfake.New(t)
	model := llmfake.New(t, llmfake.Script(
		llmfake.Text(`<use_mcp_tool><server_name>calculator</server_name><tool_name>calculate</tool_name><arguments>{"expression": "25 * 48 + 120 / 4"}</arguments></use_mcp_tool>`),
		llmfake.Text(`<attempt_completion><result>**25 * 48 + 120 / 4** is 1230 & that's < 2000.</result></attempt_completion>`),
	))
	e := runEnv(t, tg, model.URL())
	logs, stop := startRun(t, e, path)

	tg.Text(42, 42, "what is 25 * 48 + 120 / 4?")
	tg.Text(7, 7, "let me in")
	answer := func() string {
		for _, m := range tg.Messages(42) {
			if m.FromID == tgfake.BotUser.ID && strings.Contains(m.Plain, "1230") && !m.Deleted {
				return m.Text
			}
		}
		return ""
	}
	tg.WaitFor(t, 30*time.Second, "the answer", func() bool { return answer() != "" })
	got := answer()
	for _, want := range []string{"<b>25 * 48 + 120 / 4</b>", "1230 &amp; that", "&lt; 2000"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer %q lacks %q: Markdown rendered, the rest escaped", got, want)
		}
	}
	if n := len(model.Calls()); n != 2 {
		t.Errorf("model called %d times, want 2", n)
	}
	if cmds := tg.Commands(0); len(cmds) == 0 {
		t.Error("no commands registered with setMyCommands")
	}
	tg.WaitFor(t, 10*time.Second, "a refusal for user 7", func() bool { return len(tg.Messages(7)) > 0 })

	stop()
	if strings.Contains(logs.String(), tgfake.Token) || strings.Contains(logs.String(), "sk-test") {
		t.Error("the log shows a secret")
	}
}

// A message that waited for the bot (sent while it was down) is answered
// once the server still starting is up, with its tools in the prompt: the
// bot polls at once, and the turn waits for the server (SERVER_START_WAIT,
// 30 s by default). The server starts when the test opens its gate, once
// the log says the turn waits.
func TestRunQueuedMessageSeesEveryTool(t *testing.T) {
	slow, open := testenv.GatedEchoEntry(t)
	path := settings(t, map[string]any{"slow": slow})
	tg := tgfake.New(t)
	model := llmfake.New(t, llmfake.Script(llmfake.Text("Hello with every tool.")))
	e := runEnv(t, tg, model.URL())
	tg.Text(42, 42, "hi")
	logs, stop := startRun(t, e, path)
	testenv.Eventually(t, 30*time.Second, "the turn waiting for the server", func() bool {
		return strings.Contains(logs.String(), "waiting for servers to start")
	})
	if n := len(model.Calls()); n != 0 {
		t.Fatalf("the model was called %d times while a server was starting", n)
	}
	open()
	tg.WaitText(t, 42, "Hello with every tool.")
	req := model.Calls()[0].Request
	if sys := req.Messages[0].Content; !strings.Contains(sys, "## slow") || !strings.Contains(sys, "## calculator") {
		t.Errorf("the system prompt lacks a server:\n%s", sys)
	}
	if strings.Contains(req.Messages[0].Content, "not available right now") {
		t.Errorf("the system prompt names a server unavailable: every server is up")
	}
	stop()
}

// A server that does not come up holds a message back only for
// SERVER_START_WAIT: the model answers without it, told that it is not
// available. The silent server's timeout is an hour, so a bot that waited
// for it could not answer within the test. Its entry's mistyped
// "disable" does not keep it off, and the start-up log says so.
func TestRunAnswersWhileAServerStarts(t *testing.T) {
	path := settings(t, map[string]any{
		"silent": map[string]any{"command": "sleep", "args": []string{"3600"}, "timeout": 3600, "disable": true},
	})
	tg := tgfake.New(t)
	model := llmfake.New(t, llmfake.Script(llmfake.Text("Hello while a server starts.")))
	e := runEnv(t, tg, model.URL())
	e["SERVER_START_WAIT"] = "500ms"
	logs, stop := startRun(t, e, path)
	tg.Text(42, 42, "hi")
	tg.WaitText(t, 42, "Hello while a server starts.")
	req := model.Calls()[0].Request
	sys := req.Messages[0].Content
	if strings.Contains(sys, "## silent") {
		t.Error("the system prompt lists the tools of a server that has not started")
	}
	// Others may be still starting too on a loaded machine: silent is
	// among them, whatever they are.
	_, unavailable, _ := strings.Cut(sys, "These servers are set up but not available right now, so their tools are not listed: ")
	unavailable, _, _ = strings.Cut(unavailable, ".")
	if !slices.Contains(strings.Split(unavailable, ", "), "silent") {
		t.Errorf("the model was not told of the server still starting:\n%s", sys)
	}
	if want := `server \"silent\": unknown field \"disable\" (did you mean \"disabled\"?): ignored`; !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %s:\n%s", want, logs.String())
	}
	stop()
}

// The memory promise, as users meet it: with the repository's settings
// (memory auto-approved), nothing is stored before the user agrees on a
// card, what one user stored is not another's, and denying stores nothing.
func TestRunMemoryConsent(t *testing.T) {
	path := settings(t, map[string]any{
		"memory": map[string]any{
			"command": testenv.Bundled(t, "mcp-memory"), "autoApprove": []string{"memory"},
			"env": map[string]string{"MEMORY_DB_PATH": filepath.Join(t.TempDir(), "memory.db")},
		},
	})
	tg := tgfake.New(t)
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		last := c.Request.Last()
		switch {
		case strings.Contains(last, "] Result:") || strings.Contains(last, "] Error:"):
			return llmfake.Text("<attempt_completion><result>Memory said: " + last + "</result></attempt_completion>")
		case strings.HasPrefix(last, "remember "):
			args, _ := json.Marshal(map[string]any{"operation": "store", "content": strings.TrimPrefix(last, "remember "), "has_explicit_permission": true})
			return llmfake.Text(`<use_mcp_tool><server_name>memory</server_name><tool_name>memory</tool_name><arguments>` + string(args) + `</arguments></use_mcp_tool>`)
		default:
			return llmfake.Text(`<use_mcp_tool><server_name>memory</server_name><tool_name>memory</tool_name><arguments>{"operation": "list"}</arguments></use_mcp_tool>`)
		}
	})
	e := runEnv(t, tg, model.URL())
	e["ALLOWED_USER_IDS"], e["RATE_LIMIT_PER_MINUTE"] = "42,43", "1000"
	_, stop := startRun(t, e, path)
	find := func(chat int64, text string) (tgfake.Message, bool) {
		for _, m := range tg.Messages(chat) {
			if strings.Contains(m.Plain, text) && !m.Deleted {
				return m, true
			}
		}
		return tgfake.Message{}, false
	}
	waitFor := func(chat int64, text string) tgfake.Message {
		t.Helper()
		tg.WaitFor(t, 30*time.Second, text, func() bool { _, ok := find(chat, text); return ok })
		m, _ := find(chat, text)
		return m
	}
	press := func(chat int64, m tgfake.Message, label string) {
		t.Helper()
		for _, b := range m.Buttons() {
			if strings.HasPrefix(b, label+"=") {
				tg.Press(chat, chat, m.ID, strings.TrimPrefix(b, label+"="))
				return
			}
		}
		t.Fatalf("no %q button on %q: %q", label, m.Plain, m.Buttons())
	}

	waitForTool(t, tg, 42, "memory")
	tg.Text(42, 42, "remember Ich wohne in Berlin, meine Frau heißt Anna")
	// The memory server's store reads as the question it is, with the
	// text to remember as text.
	card := waitFor(42, "Remember this?")
	if !strings.HasPrefix(card.Plain, "🧠 Remember this?\nIch wohne in Berlin, meine Frau heißt Anna\n") {
		t.Errorf("the card does not ask to remember what is to be stored: %q", card.Plain)
	}
	press(42, card, "✅ I agree")
	waitFor(42, "Memory said: [use_mcp_tool for 'memory' on 'memory'] Result:")

	tg.Text(42, 42, "remember I collect stamps")
	press(42, waitFor(42, "I collect stamps"), "❌ No")
	waitFor(42, "The user denied this operation.")

	tg.Text(43, 43, "what do you remember about me?")
	waitFor(43, "No memories stored yet.")
	tg.Text(42, 42, "what do you remember about me?")
	list := waitFor(42, "1 memory")
	if !strings.Contains(list.Plain, "Berlin") || strings.Contains(list.Plain, "stamps") {
		t.Errorf("user 42's memories = %q, want the agreed one only", list.Plain)
	}

	stop()
}

// waitForTool asks /tools in chat until tool is listed. The bot answers
// while servers start, and a call to one still starting is asked for on a
// plain card, since its tools are not known yet; a test of what a running
// server does waits for it so. Each round waits for the bot's answer.
func waitForTool(t *testing.T, tg *tgfake.Server, chat int64, tool string) {
	t.Helper()
	for i := 0; ; i++ {
		n := len(tg.Messages(chat))
		tg.Text(chat, chat, "/tools")
		tg.WaitFor(t, 30*time.Second, "the /tools answer", func() bool { return len(tg.Messages(chat)) > n })
		if msgs := tg.Messages(chat); strings.Contains(msgs[len(msgs)-1].Plain, "• "+tool) {
			return
		}
		if i == 100 {
			t.Fatalf("no server offered %s", tool)
		}
	}
}

// mcpgram health is what the Docker image's HEALTHCHECK runs: unhealthy
// before the bot runs, healthy once it polls Telegram, unhealthy at once
// after a clean stop, healthy again at the next start, and unhealthy when
// its heartbeat grows old (the bot killed, or cut off from Telegram).
func TestHealth(t *testing.T) {
	path := settings(t, nil)
	tg := tgfake.New(t)
	dbDir := t.TempDir()
	e := runEnv(t, tg, "http://127.0.0.1:9/v1")
	e["DATABASE_PATH"], e["ALLOWED_USER_IDS"] = filepath.Join(dbDir, "mcpgram.db"), ""
	health := func() (string, error) {
		out, _, err := run(t, e, "", "--mcp-settings", path, "health")
		return out, err
	}
	if _, err := health(); err == nil || !strings.Contains(err.Error(), "no heartbeat") {
		t.Fatalf("health before the bot ran: %v, want unhealthy", err)
	}
	_, stop := startRun(t, e, path)
	// An update makes the long poll answer at once.
	tg.Text(42, 42, "/help")
	tg.WaitFor(t, 30*time.Second, "a healthy bot", func() bool { _, err := health(); return err == nil })
	if out, _ := health(); out != "healthy\n" {
		t.Errorf("health printed %q", out)
	}
	stop()
	// Stopped cleanly: unhealthy at once, not in 90 s.
	if _, err := health(); err == nil || !strings.Contains(err.Error(), "the bot stopped at") {
		t.Errorf("health after a clean stop: %v, want unhealthy, saying the bot stopped", err)
	}
	// Started again: the first heartbeat clears the mark.
	_, stop = startRun(t, e, path)
	tg.Text(42, 42, "/help")
	tg.WaitFor(t, 30*time.Second, "a healthy bot again", func() bool { _, err := health(); return err == nil })
	stop()
	if err := os.WriteFile(filepath.Join(dbDir, "heartbeat"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(filepath.Join(dbDir, "heartbeat"), old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := health(); err == nil || !strings.Contains(err.Error(), "old") {
		t.Errorf("health with a heartbeat 2 min old: %v, want unhealthy", err)
	}
}

// An endpoint whose error echoes the Authorization header does not get
// the key into the log, nor the token of the bot, whatever logs them.
func TestRunKeepsSecretsOutOfTheLog(t *testing.T) {
	path := settings(t, nil)
	tg := tgfake.New(t)
	const key = "sk-live-abcdef0123456789"
	model := llmfake.New(t, llmfake.Script(llmfake.Reply{Status: 401, Error: "Incorrect API key provided: Bearer " + key}))
	e := runEnv(t, tg, model.URL())
	e["OPENAI_API_KEY"], e["LOG_LEVEL"], e["ALLOWED_USER_IDS"] = key, "debug", ""
	logs, stop := startRun(t, e, path)
	tg.Text(42, 42, "hello")
	tg.WaitFor(t, 30*time.Second, "the refusal", func() bool {
		for _, m := range tg.Messages(42) {
			if strings.Contains(m.Plain, "API key") {
				return true
			}
		}
		return false
	})
	stop()
	log := logs.String()
	if !strings.Contains(log, "turn failed") {
		t.Fatalf("the failure was not logged:\n%s", log)
	}
	for _, secret := range []string{key, tgfake.Token} {
		if strings.Contains(log, secret) {
			t.Errorf("the log shows %q:\n%s", secret, log)
		}
	}
}

// startRun runs `mcpgram run` with the settings file at path, as SIGTERM
// would stop it; stop stops it and reports how it ended.
func startRun(t *testing.T, e env, path string) (logs *testenv.Buffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	logs = &testenv.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- main.Main(ctx, []string{"--mcp-settings", path, "run"}, strings.NewReader(""), logs, logs, e.lookup, nil)
	}()
	return logs, func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("run did not stop after its context ended")
		}
	}
}

// runEnv is the environment of `mcpgram run` against the fakes, with a
// database of its own, for user 42.
func runEnv(t *testing.T, tg *tgfake.Server, modelURL string) env {
	return env{
		"TELEGRAM_BOT_TOKEN": tgfake.Token,
		"TELEGRAM_API_URL":   tg.URL(),
		"OPENAI_API_KEY":     "sk-test",
		"OPENAI_BASE_URL":    modelURL,
		"DATABASE_PATH":      filepath.Join(t.TempDir(), "mcpgram.db"),
		"ALLOWED_USER_IDS":   "42",
	}
}
