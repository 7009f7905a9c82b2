package main_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// scaleChats and scaleMessages size the multi-instance test: every chat
// sends its messages at once, and each turn makes one slow tool call.
const (
	scaleChats    = 50
	scaleMessages = 2
	scaleFirst    = 1001 // the first chat (and user) id
)

var scaleTag = regexp.MustCompile(`c\d+-m\d+`)

// A cluster is n `mcpgram run` processes sharing one PostgreSQL and one
// bot token in webhook mode, behind a round-robin proxy that the fake
// Telegram posts to. Each runs its own echo test server, whose sleep calls
// it logs to calls[i].
type cluster struct {
	tg    *tgfake.Server
	dsn   string
	procs []*exec.Cmd
	calls []string
	logs  []*testenv.Buffer // each instance's log, at debug level
	addrs []string          // each instance's HTTP_LISTEN
	// hooks[i] counts the webhook requests instance i received that held
	// a button press.
	hooksMu sync.Mutex
	presses []int
	// updates are the webhook requests' bodies, in the order the proxy
	// passed them on, each with the instance it went to.
	updates []delivery
}

// A delivery is one webhook request the proxy passed on: its body and
// the instance that received it.
type delivery struct {
	instance int
	body     string
}

// receiver is the instance that received the first webhook request whose
// body holds s, or -1.
func (cl *cluster) receiver(s string) int {
	cl.hooksMu.Lock()
	defer cl.hooksMu.Unlock()
	for _, d := range cl.updates {
		if strings.Contains(d.body, s) {
			return d.instance
		}
	}
	return -1
}

func startCluster(t testing.TB, n int, model *llmfake.Server, autoApprove []string, env ...string) *cluster {
	t.Helper()
	return startClusterOn(t, testenv.Postgres(t), n, model, autoApprove, env...)
}

// startClusterOn is startCluster on the database dsn.
func startClusterOn(t testing.TB, dsn string, n int, model *llmfake.Server, autoApprove []string, env ...string) *cluster {
	t.Helper()
	return startClusterWith(t, dsn, n, model, autoApprove, nil, env...)
}

// startClusterWith is startClusterOn with the servers extra beside the
// cluster's own.
func startClusterWith(t testing.TB, dsn string, n int, model *llmfake.Server, autoApprove []string, extra map[string]any, env ...string) *cluster {
	t.Helper()
	b := buildBinary(t)
	cl := &cluster{tg: tgfake.New(t), dsn: dsn}
	const secret = "scale-Secret_1"
	backends := make([]*url.URL, n)
	var next atomic.Uint64
	cl.presses = make([]int, n)
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		i := next.Add(1) % uint64(n)
		r.SetURL(backends[i])
		body, err := io.ReadAll(r.In.Body)
		if err != nil {
			return
		}
		r.Out.Body = io.NopCloser(bytes.NewReader(body))
		cl.hooksMu.Lock()
		cl.updates = append(cl.updates, delivery{instance: int(i), body: string(body)})
		if bytes.Contains(body, []byte(`"callback_query"`)) {
			cl.presses[i]++
		}
		cl.hooksMu.Unlock()
	}, ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
		w.WriteHeader(http.StatusBadGateway) // a dead instance: Telegram sends again
	}})
	t.Cleanup(proxy.Close)
	for i := range n {
		addr := freeAddr(t)
		backends[i] = &url.URL{Scheme: "http", Host: addr}
		cl.addrs = append(cl.addrs, addr)
		calls := filepath.Join(b.dir, fmt.Sprintf("calls%d.log", i))
		cl.calls = append(cl.calls, calls)
		t.Cleanup(func() { killLogged(calls) }) // the orphaned server of a killed instance
		dir := filepath.Join(b.dir, fmt.Sprint("instance", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		servers := map[string]any{
			"jobs": map[string]any{
				"command": testenv.TestServer(t, "echo"), "autoApprove": autoApprove,
				"env": map[string]string{"ECHO_CALL_LOG": calls},
				// Unsandboxed: a killed instance's orphaned server is
				// found by the pid it logs, which a sandbox's own PID
				// namespace would renumber.
				"sandbox": "off",
			},
			"f": testenv.FeaturesEntry(t, false, "book", "wait"),
		}
		maps.Copy(servers, extra)
		settings := testenv.WriteSettings(t, dir, servers)
		logs := &testenv.Buffer{}
		cl.logs = append(cl.logs, logs)
		cl.procs = append(cl.procs, startInstance(t, b, settings, logs, slices.Concat([]string{
			testLease,
			"TELEGRAM_BOT_TOKEN=" + tgfake.Token, "TELEGRAM_API_URL=" + cl.tg.URL(),
			"TELEGRAM_MODE=webhook", "TELEGRAM_WEBHOOK_SECRET=" + secret, "HTTP_LISTEN=" + addr,
			"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(),
			"DATABASE_URL=" + cl.dsn, "RATE_LIMIT_PER_MINUTE=1000", "LOG_LEVEL=debug",
			// The bot's own pace, not Telegram's limit, is what is measured.
			"TELEGRAM_SENDS_PER_SECOND=0",
		}, env, leaseEnv())))
	}
	for _, be := range backends {
		waitReady(t, be.String()+"/readyz")
	}
	resp, err := http.PostForm(cl.tg.URL()+"/bot"+tgfake.Token+"/setWebhook", url.Values{
		"url": {proxy.URL + "/telegram"}, "secret_token": {secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return cl
}

var instanceAttr = regexp.MustCompile(`instance=(\S+)`)

// heldBy returns the chats with messages not yet answered whose lease
// instance i holds.
func (cl *cluster) heldBy(t testing.TB, db *postgres.DB, i int) []int64 {
	t.Helper()
	m := instanceAttr.FindStringSubmatch(cl.logs[i].String())
	if m == nil {
		t.Fatalf("instance %d logged no instance name", i)
	}
	var held []int64
	for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
		owner, _, err := db.LeaseOwner(t.Context(), fmt.Sprint(c))
		if err != nil {
			t.Fatal(err)
		}
		if owner == m[1] && len(answered(cl.tg, c)) < scaleMessages {
			held = append(held, c)
		}
	}
	if len(held) == 0 {
		t.Fatalf("instance %d (%s) holds no chat", i, m[1])
	}
	return held
}

// testLease is the chat lease of a cluster's instances unless a test
// gives another (defaultLease, to show what the default does): long
// enough that an instance of a loaded machine (CI runs four test
// packages at once) stalled for a few seconds keeps its chats. At the
// default 3 s it may lose one to the other instance, which runs its turn
// again (docs/operations.md, "the price of a short lease"), and a test of
// something else then sees two of a card it expects once.
const testLease = "CHAT_LEASE=10s"

// defaultLease runs a cluster at the default lease: for the tests of a
// takeover's time and of what the default does across a database restart.
var defaultLease = "CHAT_LEASE=" + dispatch.DefaultLease.String()

// leaseEnv passes the test's own CHAT_LEASE to the instances, so that
// `CHAT_LEASE=30s go test -run TestScaleTwoInstancesOneKilled` measures
// the takeover at another lease than the default.
func leaseEnv() []string {
	if d, ok := os.LookupEnv("CHAT_LEASE"); ok {
		return []string{"CHAT_LEASE=" + d}
	}
	return nil
}

// kill ends instance i with SIGKILL.
func (cl *cluster) kill(t testing.TB, i int) {
	t.Helper()
	if err := cl.procs[i].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = cl.procs[i].Process.Wait()
}

// stop ends instance i with SIGTERM and checks it stopped cleanly.
func (cl *cluster) stop(t testing.TB, i int) {
	t.Helper()
	if err := cl.procs[i].Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.procs[i].Process.Wait(); err != nil {
		t.Errorf("instance %d: %v", i, err)
	}
}

// killModelCaller kills the instance that called the model, once every
// update is marked done (killed before its done mark is written, the
// instance would leave its message to run again: the at-least-once
// replay), and returns its index.
func (cl *cluster) killModelCaller(t testing.TB) int {
	t.Helper()
	db := testenv.OpenPostgres(t, cl.dsn)
	cl.tg.WaitFor(t, 30*time.Second, "the message marked done", func() bool {
		n, _, err := db.InboxBacklog(t.Context())
		return err == nil && n == 0
	})
	i := slices.IndexFunc(cl.logs, func(l *testenv.Buffer) bool { return strings.Contains(l.String(), "model call") })
	if i < 0 {
		t.Fatal("no instance logged the model call")
	}
	cl.kill(t, i)
	return i
}

// backlog checks that every update in the inbox is done, or soon is.
func (cl *cluster) backlog(t testing.TB) {
	t.Helper()
	db, err := postgres.Open(t.Context(), cl.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	// An answer goes out before its update is marked done: wait for the
	// mark, a moment behind.
	var n int
	testenv.Waiter{Explain: func() string { return fmt.Sprintf("inbox backlog %d (%v), want every update done", n, err) }}.
		Eventually(t, 30*time.Second, "every update marked done", func() bool {
			n, _, err = db.InboxBacklog(t.Context())
			return err == nil && n == 0
		})
}

// Two instances at default settings, one killed with SIGKILL while its
// turns run tool calls; the other takes its chats once their leases
// expire and finishes them. Every message is answered, in order; one not
// started when the instance died is answered once; a turn running at the
// kill carries on from what it stored, and no call runs twice. An answer
// goes out twice only when the kill fell between its sending and its
// update's done mark (Telegram's sendMessage cannot be made idempotent):
// then it is sent again as stored, and the count is logged; an answer
// first sent after the kill never goes out twice. It logs how
// long after the kill the killed instance's chats were answered again:
// the takeover, plus a turn.
func TestScaleTwoInstancesOneKilled(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, scaleModel)
	cl := startCluster(t, 2, model, []string{"sleep"}, defaultLease)
	tg, calls := cl.tg, cl.calls

	for m := 1; m <= scaleMessages; m++ {
		for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
			tg.Text(c, c, fmt.Sprintf("please answer c%d-m%d", c, m))
		}
	}
	// Kill the first instance while it is running tool calls: some have
	// started (the server logs each start) that it has not seen end. The
	// kill follows the check at once (the chats it held are read from the
	// database after it, where its leases stay until they expire): a
	// loaded machine may take longer than a call to read them.
	leases := testenv.OpenPostgres(t, cl.dsn)
	tg.WaitFor(t, 60*time.Second, "the first instance to be in the middle of tool calls", func() bool {
		started := len(loggedCalls(calls[0]))
		return started >= scaleChats/5 && started > strings.Count(cl.logs[0].String(), `msg="call done"`)
	})
	cl.kill(t, 0)
	killedAt := time.Now()
	held := cl.heldBy(t, leases, 0)
	sentBefore := map[string]bool{} // the answers out at the kill
	for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
		for tag := range answered(tg, c) {
			sentBefore[tag] = true
		}
	}
	started := startedTurns(model)
	before := map[int64]int{}
	held = slices.DeleteFunc(held, func(c int64) bool {
		before[c] = len(answered(tg, c))
		return before[c] == scaleMessages // answered before the kill
	})

	var first, last time.Duration // the killed instance's chats answered again
	tg.WaitFor(t, 90*time.Second, "every message answered", func() bool {
		again := 0
		for _, c := range held {
			if len(answered(tg, c)) > before[c] {
				again++
			}
		}
		if again > 0 && first == 0 {
			first = time.Since(killedAt)
		}
		if again == len(held) && last == 0 {
			last = time.Since(killedAt)
		}
		for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
			if len(answered(tg, c)) < scaleMessages {
				return false
			}
		}
		return true
	})
	t.Logf("all answered %v after the kill; the killed instance's %d chats with work answered again from %v to %v after it; tool calls: %d on the killed instance, %d on the other",
		time.Since(killedAt).Round(time.Millisecond), len(held), first.Round(time.Millisecond), last.Round(time.Millisecond),
		len(loggedCalls(calls[0])), len(loggedCalls(calls[1])))

	// Not a timing goal (the figure is logged, for docs/benchmarks.md): a
	// bound far above the default lease's 3 to 5 s and below the old 30 s
	// lease, so that a takeover waiting out a long lease again fails.
	if last > 20*time.Second {
		t.Errorf("the killed instance's chats answered again %v after the kill, want well under the old 30 s lease", last)
	}
	t.Logf("answers repeated by the replay: %d", checkAnswers(t, tg))
	// A message whose turn had not started when the instance died (queued
	// behind its chat's running turn, or not yet read) is answered once:
	// the takeover replays it, and nothing else does.
	queued := 0
	for _, c := range held {
		for m := 1; m <= scaleMessages; m++ {
			tag := fmt.Sprintf("c%d-m%d", c, m)
			if !started[tag] {
				queued++
			}
		}
	}
	for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
		times := map[string]int{}
		for _, tag := range answers(tg, c) {
			times[tag]++
		}
		for tag, n := range times {
			if !started[tag] && n != 1 {
				t.Errorf("%s, not started when the instance died, answered %d times; want once", tag, n)
			}
			// Only an answer out before the kill, whose done mark died
			// with the instance, may go out again.
			if n > 1 && !sentBefore[tag] {
				t.Errorf("%s answered %d times after the kill; want once", tag, n)
			}
		}
	}
	t.Logf("messages of the killed instance's chats not started at the kill, answered once after it: %d; what a user of one saw: %q",
		queued, seen(tg, held[len(held)-1]))
	// A live instance's chat taken by the other (a renewal missed under
	// load) would show as a repeated answer too: count them apart.
	lost := 0
	for i, logs := range cl.logs {
		if n := strings.Count(logs.String(), "lost the lease of a chat"); n > 0 {
			t.Logf("instance %d lost %d chats to the other while alive", i, n)
			lost += n
		}
	}
	// No turn ran twice: each message's call ran at most once over both
	// instances (a call the killed instance stored but had not started
	// runs on neither; its outcome is unknown to the model).
	if n := len(loggedCalls(calls[0])) + len(loggedCalls(calls[1])); n > scaleChats*scaleMessages && lost == 0 {
		t.Errorf("%d tool calls for %d messages: a turn ran again", n, scaleChats*scaleMessages)
	}
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

	cl.stop(t, 1)
	cl.backlog(t)
}

// checkAnswers checks that every chat's messages were answered in order,
// each at most twice (an answer sent again, its update's done mark lost
// with the kill), and returns how many answers were repeated.
func checkAnswers(t *testing.T, tg *tgfake.Server) (replayed int) {
	t.Helper()
	for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
		got := answers(tg, c)
		var dedup []string
		for _, a := range got {
			if len(dedup) > 0 && dedup[len(dedup)-1] == a {
				replayed++ // sent, then killed before the done mark
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
			t.Errorf("chat %d: %d answers repeated, want at most the one of the turn that ended at the kill", c, len(got)-len(dedup))
		}
	}
	return replayed
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

// startedTurns returns the tags of the messages whose turn had called the
// model.
func startedTurns(model *llmfake.Server) map[string]bool {
	out := map[string]bool{}
	for _, c := range model.Calls() {
		for _, m := range c.Request.Messages {
			if m.Role == "user" && strings.Contains(m.Content, "please answer") {
				out[scaleTag.FindString(m.Content)] = true
			}
		}
	}
	return out
}

// seen returns what the user of chat sees there: every message, the
// user's and the bot's, in order.
func seen(tg *tgfake.Server, chat int64) []string {
	var out []string
	for _, m := range tg.Messages(chat) {
		if !m.Deleted {
			out = append(out, m.Plain)
		}
	}
	return out
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

// answered is the distinct messages of chat that have an answer: a
// message answered twice (the at-least-once replay) counts once, so that
// a wait for every message answered does not end on a repeat.
func answered(tg *tgfake.Server, chat int64) map[string]bool {
	out := map[string]bool{}
	for _, a := range answers(tg, chat) {
		out[a] = true
	}
	return out
}

func startInstance(t testing.TB, b *binary, settings string, logs *testenv.Buffer, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(b.path, "--mcp-settings", settings, "run")
	cmd.Dir = b.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}, env...)
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			t.Logf("the log of instance %s, to its last lines:\n%s", filepath.Base(filepath.Dir(settings)), lastLines(logs.String(), 80))
		}
	})
	return cmd
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// waitReady polls a /readyz until it answers at all (the listener is up).
func waitReady(t testing.TB, u string) {
	t.Helper()
	var err error
	testenv.Waiter{Explain: func() string { return fmt.Sprint(err) }}.Eventually(t, 30*time.Second, u+" to answer", func() bool {
		var resp *http.Response
		if resp, err = http.Get(u); err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
}

// A question or approval is in the database, not in the instance that
// asked it: with that instance killed, the other takes the press, runs the
// approved call and finishes the turn.
func TestScaleApprovalAnsweredByAnotherInstance(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		msgs := c.Request.Messages
		if strings.Contains(msgs[len(msgs)-1].Content, "please run the job") {
			return llmfake.Text(`<use_mcp_tool><server_name>jobs</server_name><tool_name>sleep</tool_name><arguments>{"ms": 1}</arguments></use_mcp_tool>`)
		}
		return llmfake.Text(`<attempt_completion><result>The job ran.</result></attempt_completion>`)
	})
	cl := startCluster(t, 2, model, nil) // sleep needs an approval
	cl.tg.Text(42, 42, "please run the job")
	var card tgfake.Message
	cl.tg.WaitFor(t, 30*time.Second, "the approval card", func() bool {
		for _, m := range cl.tg.Messages(42) {
			if len(m.Keyboard) > 0 && !m.Deleted {
				card = m
				return true
			}
		}
		return false
	})
	asked := cl.killModelCaller(t)
	other := 1 - asked

	approve, _, _ := strings.Cut(card.Buttons()[0], "=")
	_, data, _ := strings.Cut(card.Buttons()[0], "=")
	t.Logf("instance %d asked; pressing %q", asked, approve)
	cl.tg.Press(42, 42, card.ID, data)
	cl.tg.WaitText(t, 42, "The job ran.")
	if n := len(loggedCalls(cl.calls[other])); n != 1 {
		t.Errorf("the other instance ran the approved call %d times, want once", n)
	}
	if n := len(loggedCalls(cl.calls[asked])); n != 0 {
		t.Errorf("the killed instance ran it %d times, want never", n)
	}
	cl.stop(t, other)
	cl.backlog(t)
}

// The per-user rate limit is counted in the database, for the bot as a
// whole: what a user sent through an instance that has since stopped
// still counts on the one left.
func TestScaleRateLimitIsShared(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		msgs := c.Request.Messages
		return llmfake.Text(`<attempt_completion><result>answer ` + scaleTag.FindString(msgs[len(msgs)-1].Content) + `</result></attempt_completion>`)
	})
	cl := startCluster(t, 2, model, nil, "RATE_LIMIT_PER_MINUTE=3", "TELEGRAM_SENDS_PER_SECOND=30")
	const user = 77
	for m := 1; m <= 2; m++ {
		tag := fmt.Sprintf("c%d-m%d", user, m)
		cl.tg.Text(user, user, "please answer "+tag)
		cl.tg.WaitText(t, user, "answer "+tag)
	}
	// Stop an instance that took some of them; the other, alone now, has
	// seen at most one, yet allows the user only one more.
	took := slices.IndexFunc(cl.logs, func(l *testenv.Buffer) bool { return strings.Contains(l.String(), "model call") })
	if took < 0 {
		t.Fatal("no instance logged a model call")
	}
	cl.stop(t, took)
	cl.tg.Text(user, user, "please answer c77-m3")
	cl.tg.WaitText(t, user, "answer c77-m3")
	cl.tg.Text(user, user, "please answer c77-m4")
	cl.tg.WaitFor(t, 30*time.Second, "the rate limit's refusal", func() bool {
		for _, m := range cl.tg.Messages(user) {
			if strings.Contains(m.Plain, "faster than I can keep up with (at most 3 a minute)") {
				return true
			}
		}
		return false
	})
	if got := answers(cl.tg, user); len(got) != 3 {
		t.Errorf("answers %v, want the first three only", got)
	}
	cl.stop(t, 1-took)
	cl.backlog(t)
}

// Turns per second through one and through two instances on one
// PostgreSQL, webhook mode, and through the default (one instance, SQLite,
// long polling), the fake model answering at once: 50 chats, b.N messages
// spread over them.
func BenchmarkScaleTurns(b *testing.B) {
	for _, n := range []int{0, 1, 2} {
		name := fmt.Sprintf("instances=%d", n)
		if n == 0 {
			name = "sqlite-polling"
		}
		b.Run(name, func(b *testing.B) {
			model := llmfake.New(b, func(c llmfake.Call) llmfake.Reply {
				msgs := c.Request.Messages
				return llmfake.Text(`<attempt_completion><result>answer ` + scaleTag.FindString(msgs[len(msgs)-1].Content) + `</result></attempt_completion>`)
			})
			var cl *cluster
			if n == 0 {
				cl, n = startPolling(b, model), 1
			} else {
				cl = startCluster(b, n, model, nil)
			}
			b.ResetTimer()
			for i := range b.N {
				c := int64(scaleFirst + i%scaleChats)
				cl.tg.Text(c, c, fmt.Sprintf("please answer c%d-m%d", c, i))
			}
			cl.tg.WaitFor(b, 10*time.Minute, "every answer", func() bool {
				got := 0
				for c := int64(scaleFirst); c < scaleFirst+scaleChats; c++ {
					got += len(answers(cl.tg, c))
				}
				return got >= b.N
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
			for i := range n {
				cl.stop(b, i)
			}
		})
	}
}

// startPolling starts the default set-up, one instance on SQLite taking
// updates by long polling, as a cluster of one.
func startPolling(t testing.TB, model *llmfake.Server) *cluster {
	t.Helper()
	b := buildBinary(t)
	cl := &cluster{tg: tgfake.New(t), logs: []*testenv.Buffer{{}}}
	settings := testenv.WriteSettings(t, b.dir, map[string]any{})
	cl.procs = append(cl.procs, startInstance(t, b, settings, cl.logs[0], []string{
		"TELEGRAM_BOT_TOKEN=" + tgfake.Token, "TELEGRAM_API_URL=" + cl.tg.URL(),
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(),
		"DATABASE_PATH=" + filepath.Join(b.dir, "mcpgram.db"), "RATE_LIMIT_PER_MINUTE=1000",
		"TELEGRAM_SENDS_PER_SECOND=0",
	}))
	return cl
}
