package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/internal/llmfake"
	"github.com/mcpgram/mcpgram/internal/testenv"
	"github.com/mcpgram/mcpgram/internal/tgfake"
	"github.com/mcpgram/mcpgram/store/postgres"
)

// scaleChats and scaleMessages size the multi-instance test: every chat
// sends its messages at once, and each turn makes one slow tool call.
const (
	scaleChats    = 50
	scaleMessages = 2
	scaleFirst    = 1001 // the first chat (and user) id
)

var scaleTag = regexp.MustCompile(`c\d+-m\d+`)

// Two `mcpgram run` processes share one PostgreSQL and one bot token in
// webhook mode, behind a round-robin proxy that Telegram (the fake) posts
// to. One is killed with SIGKILL while its turns run tool calls; the other
// takes its chats once their leases expire and finishes them. Every
// message is answered, in order, and at most the turn that was running in
// a killed chat is answered twice (the at-least-once replay).
func TestScaleTwoInstancesOneKilled(t *testing.T) {
	b := buildBinary(t)
	dsn := testenv.Postgres(t)
	tg := tgfake.New(t)
	model := llmfake.New(t, scaleModel)
	const secret = "scale-Secret_1"

	var backends [2]*url.URL
	var next atomic.Uint64
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(backends[next.Add(1)%2])
	}, ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
		w.WriteHeader(http.StatusBadGateway) // a dead instance: Telegram sends again
	}})
	t.Cleanup(proxy.Close)

	var calls [2]string
	var procs [2]*exec.Cmd
	for i := range procs {
		addr := freeAddr(t)
		backends[i] = &url.URL{Scheme: "http", Host: addr}
		calls[i] = filepath.Join(b.dir, fmt.Sprintf("calls%d.log", i))
		t.Cleanup(func() { killLogged(calls[i]) }) // the orphaned server of the killed instance
		dir := filepath.Join(b.dir, fmt.Sprint("instance", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		settings := testenv.WriteSettings(t, dir, map[string]any{
			"jobs": map[string]any{
				"command": testenv.TestServer(t, "echo"), "autoApprove": []string{"sleep"},
				"env": map[string]string{"ECHO_CALL_LOG": calls[i]},
			},
		})
		procs[i] = startInstance(t, b, settings, []string{
			"TELEGRAM_BOT_TOKEN=" + tgfake.Token, "TELEGRAM_API_URL=" + tg.URL(),
			"TELEGRAM_MODE=webhook", "TELEGRAM_WEBHOOK_SECRET=" + secret, "HTTP_LISTEN=" + addr,
			"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(),
			"DATABASE_URL=" + dsn, "CHAT_LEASE=2s", "RATE_LIMIT_PER_MINUTE=1000",
		})
	}
	for _, be := range backends {
		waitReady(t, be.String()+"/readyz")
	}
	resp, err := http.PostForm(tg.URL()+"/bot"+tgfake.Token+"/setWebhook", url.Values{
		"url": {proxy.URL + "/telegram"}, "secret_token": {secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	for m := 1; m <= scaleMessages; m++ {
		for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
			tg.Text(c, c, fmt.Sprintf("please answer c%d-m%d", c, m))
		}
	}
	// Kill the first instance while it is running tool calls.
	tg.WaitFor(t, 60*time.Second, "the first instance to run tool calls", func() bool {
		return len(loggedCalls(calls[0])) >= scaleChats/5
	})
	if err := procs[0].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = procs[0].Process.Wait()
	killedAt := time.Now()

	tg.WaitFor(t, 90*time.Second, "every message answered", func() bool {
		for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
			if len(answers(tg, c)) < scaleMessages {
				return false
			}
		}
		return true
	})
	t.Logf("all answered %v after the kill; tool calls: %d on the killed instance, %d on the other",
		time.Since(killedAt).Round(time.Millisecond), len(loggedCalls(calls[0])), len(loggedCalls(calls[1])))

	replayed := 0
	for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
		got := answers(tg, c)
		var dedup []string
		for _, a := range got {
			if len(dedup) > 0 && dedup[len(dedup)-1] == a {
				replayed++ // the at-least-once replay of the killed turn
				continue
			}
			dedup = append(dedup, a)
		}
		var want []string
		for m := 1; m <= scaleMessages; m++ {
			want = append(want, fmt.Sprintf("c%d-m%d", c, m))
		}
		if strings.Join(dedup, " ") != strings.Join(want, " ") {
			t.Errorf("chat %d answered %v, want %v in that order", c, got, want)
		}
		if len(got)-len(dedup) > 1 {
			t.Errorf("chat %d: %d answers repeated, want at most the one turn that was running", c, len(got)-len(dedup))
		}
	}
	t.Logf("answers repeated by the replay: %d", replayed)
	// The killed instance's tool calls in flight were finished by the
	// other, which told the model their outcome is unknown.
	unknown := 0
	for _, c := range model.Calls() {
		if strings.Contains(c.Request.Messages[len(c.Request.Messages)-1].Content, "Outcome unknown") {
			unknown++
		}
	}
	if unknown == 0 {
		t.Error("no turn was taken over in the middle of a tool call")
	}
	t.Logf("turns taken over mid tool call: %d", unknown)

	if err := procs[1].Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := procs[1].Process.Wait(); err != nil {
		t.Errorf("the surviving instance: %v", err)
	}
	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if n, _, err := db.InboxBacklog(t.Context()); err != nil || n != 0 {
		t.Errorf("inbox backlog %d (%v), want every update done", n, err)
	}
}

// scaleModel answers "please answer TAG" with a slow tool call, then, once
// the call's result (or its unknown outcome, after a crash) is in, with
// "answer TAG".
func scaleModel(c llmfake.Call) llmfake.Reply {
	msgs := c.Request.Messages
	last := msgs[len(msgs)-1]
	var tag string
	for i := len(msgs) - 1; i >= 0 && tag == ""; i-- {
		if msgs[i].Role == "user" && strings.Contains(msgs[i].Content, "please answer") {
			tag = scaleTag.FindString(msgs[i].Content)
		}
	}
	if strings.Contains(last.Content, "please answer") {
		return llmfake.Text(`Working on it.<use_mcp_tool><server_name>jobs</server_name><tool_name>sleep</tool_name><arguments>{"ms": 300}</arguments></use_mcp_tool>`)
	}
	return llmfake.Text(`<attempt_completion><result>answer ` + tag + `</result></attempt_completion>`)
}

// answers returns the tags of the bot's answers in chat, in order.
func answers(tg *tgfake.Server, chat int64) []string {
	var tags []string
	for _, m := range tg.Messages(chat) {
		if m.FromID == tgfake.BotUser.ID && !m.Deleted && strings.HasPrefix(m.Plain, "answer ") {
			tags = append(tags, scaleTag.FindString(m.Plain))
		}
	}
	return tags
}

func startInstance(t *testing.T, b *binary, settings string, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(b.path, "--mcp-settings", settings, "run")
	cmd.Dir = b.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}, env...)
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd
}

// waitReady polls a /readyz until it answers at all (the listener is up).
func waitReady(t *testing.T, u string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered: %v", u, err)
		}
		time.Sleep(20 * time.Millisecond) // polling for a listener, with a deadline
	}
}
