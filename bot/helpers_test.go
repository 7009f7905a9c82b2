package bot_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/bot/chats"
	signins "github.com/mcpgram/mcpgram/bot/connect"
	"github.com/mcpgram/mcpgram/bot/prompts"
	"github.com/mcpgram/mcpgram/bot/settings"
	"github.com/mcpgram/mcpgram/bot/usage"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

const (
	admin = 1
	alice = 2
	bob   = 3
)

// fakeAgent is a scripted stand-in for agent.Agent: the text of a message
// picks what the turn does.
type fakeAgent struct {
	fakeSettings
	mu      sync.Mutex
	nextID  int64
	pending map[int64]*fakePending
	turns   map[string]int // text -> turns started
	resets  int
	block   chan struct{}     // "block" turns wait on it (or ctx)
	args    string            // arguments of "approve args" calls
	seen    map[string]string // text -> the chat's instructions when its turn started
}

type fakePending struct {
	chat, user string
	kind       string
	options    []string
	expires    time.Time
	open       bool
}

// approveArgs sets the arguments of the next "approve args" call.
func (a *fakeAgent) approveArgs(args string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.args = args
}

func newFakeAgent() *fakeAgent {
	return &fakeAgent{pending: map[int64]*fakePending{}, turns: map[string]int{}, block: make(chan struct{})}
}

// Seen returns the chat's instructions when the turn of text started.
func (a *fakeAgent) Seen(text string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[text]
}

func (a *fakeAgent) Turns(text string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.turns[text]
}

func (a *fakeAgent) Turn(ctx context.Context, req agent.Request, emit func(agent.Event)) error {
	a.mu.Lock()
	if req.Answer != nil || req.Decision != nil {
		id := int64(0)
		if req.Answer != nil {
			id = req.Answer.PendingID
		} else {
			id = req.Decision.PendingID
		}
		p := a.pending[id]
		switch {
		case p == nil || !p.open:
			a.mu.Unlock()
			return agent.ErrStale
		case p.user != req.Caller.UserID || p.chat != req.Caller.ChatID:
			a.mu.Unlock()
			return agent.ErrNotYours
		}
		p.open = false
		a.mu.Unlock()
		if req.Answer != nil {
			emit(agent.Event{Kind: agent.EventAnswer, Text: "you chose " + p.options[req.Answer.Option]})
		} else if req.Decision.Approve {
			emit(agent.Event{Kind: agent.EventToolStart, Server: "everything", Tool: "echo"})
			emit(agent.Event{Kind: agent.EventToolEnd, Server: "everything", Tool: "echo", OK: true})
			emit(agent.Event{Kind: agent.EventAnswer, Text: fmt.Sprintf("approved (always=%v)", req.Decision.Always)})
		} else {
			emit(agent.Event{Kind: agent.EventAnswer, Text: "denied"})
		}
		return nil
	}
	a.turns[req.Text]++
	a.fakeSettings.mu.Lock()
	if a.seen == nil {
		a.seen = map[string]string{}
	}
	a.seen[req.Text] = a.fakeSettings.instructions[req.Caller.ChatID]
	a.fakeSettings.mu.Unlock()
	// A typed message answers an open question of the same user.
	for _, p := range a.pending {
		if p.open && p.chat == req.Caller.ChatID {
			p.open = false
			if p.kind == "question" && p.user == req.Caller.UserID {
				a.mu.Unlock()
				emit(agent.Event{Kind: agent.EventAnswer, Text: "typed answer: " + req.Text})
				return nil
			}
		}
	}
	a.mu.Unlock()
	switch req.Text {
	case "tool":
		emit(agent.Event{Kind: agent.EventText, Text: "Let me **check**"})
		emit(agent.Event{Kind: agent.EventToolStart, Server: "everything", Tool: "echo"})
		emit(agent.Event{Kind: agent.EventToolEnd, Server: "everything", Tool: "echo", OK: true, Duration: 20 * time.Millisecond,
			Images: []mcpgram.Content{{Type: mcpgram.ContentImage, Data: []byte("\x89PNG\r\n\x1a\nfake"), MIMEType: "image/png"}},
			Files: []mcpgram.Content{
				{Type: mcpgram.ContentResource, URI: "echo://reports/q3.csv", MIMEType: "text/csv", Data: []byte("a,b\n1,2\n")},
				{Type: mcpgram.ContentAudio, MIMEType: "audio/wav", Data: []byte("RIFF")},
				// Named with a right-to-left override: it reads as "…exe.pdf".
				{Type: mcpgram.ContentResource, URI: "echo://reports/invoice%E2%80%AEfdp.exe", MIMEType: "application/octet-stream", Data: []byte("MZ")},
			}})
		emit(agent.Event{Kind: agent.EventAnswer, Text: "**done** <&>"})
	case "ask":
		id := a.newPending(req, "question", []string{"Paris", "Rome, the eternal city, which is a very long option label indeed"})
		emit(agent.Event{Kind: agent.EventQuestion, Question: &agent.Question{PendingID: id, Text: "Which *city*?", Options: []string{"Paris", "Rome, the eternal city, which is a very long option label indeed"}}})
	case "approve", "approve briefly":
		// Only "approve briefly" expires within the test.
		ttl := time.Hour
		if req.Text == "approve briefly" {
			ttl = 200 * time.Millisecond
		}
		id := a.newPending(req, "approval", nil)
		a.mu.Lock()
		a.pending[id].expires = time.Now().Add(ttl)
		a.mu.Unlock()
		emit(agent.Event{Kind: agent.EventApproval, Approval: &agent.Approval{PendingID: id, Server: "everything", Tool: "echo", Arguments: `{"message":"<hi> & bye"}`, ExpiresAt: time.Now().Add(ttl)}})
	case "approve args":
		// The arguments of the call are the test's: see approveArgs.
		id := a.newPending(req, "approval", nil)
		a.mu.Lock()
		a.pending[id].expires = time.Now().Add(time.Hour)
		args := a.args
		a.mu.Unlock()
		ap := &agent.Approval{PendingID: id, Server: "files", Tool: "write_file", Arguments: args, ExpiresAt: time.Now().Add(time.Hour)}
		switch {
		case strings.HasPrefix(args, "resource:"):
			ap.Tool, ap.URI, ap.Arguments = "", strings.TrimPrefix(args, "resource:"), ""
		case strings.HasPrefix(args, "consent:"):
			ap.Server, ap.Tool, ap.Consent, ap.Arguments = "memory", "memory", true, strings.TrimPrefix(args, "consent:")
		}
		emit(agent.Event{Kind: agent.EventApproval, Approval: ap})
	case "block":
		select {
		case <-ctx.Done():
			emit(agent.Event{Kind: agent.EventError, Text: "Stopped."})
			return ctx.Err()
		case <-a.block:
		}
		emit(agent.Event{Kind: agent.EventAnswer, Text: "unblocked"})
	case "stream":
		text := ""
		for i := range 5 {
			text += fmt.Sprintf("word%d <&> ", i)
			emit(agent.Event{Kind: agent.EventText, Text: text})
			time.Sleep(30 * time.Millisecond)
		}
		emit(agent.Event{Kind: agent.EventAnswer, Text: text + "end"})
	case "long":
		// Four messages' worth, the most an answer takes as messages.
		var b strings.Builder
		for i := range 200 {
			fmt.Fprintf(&b, "Paragraph %d: if a < b && c > d then **bold <tag>** and `x<y>`.\n\n", i)
		}
		emit(agent.Event{Kind: agent.EventAnswer, Text: b.String()})
	default:
		emit(agent.Event{Kind: agent.EventAnswer, Text: "echo: " + req.Text})
	}
	return nil
}

func (a *fakeAgent) newPending(req agent.Request, kind string, options []string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range a.pending {
		if p.chat == req.Caller.ChatID {
			p.open = false
		}
	}
	a.nextID++
	a.pending[a.nextID] = &fakePending{chat: req.Caller.ChatID, user: req.Caller.UserID, kind: kind, options: options, open: true, expires: time.Now().Add(200 * time.Millisecond)}
	return a.nextID
}

func (a *fakeAgent) Reset(ctx context.Context, chatID string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.resets++
	return nil
}

func (a *fakeAgent) Expire(ctx context.Context, now time.Time, emitFor func(chatID string) func(agent.Event)) error {
	a.mu.Lock()
	var chats []string
	for _, p := range a.pending {
		if p.open && p.kind == "approval" && now.After(p.expires) {
			p.open = false
			chats = append(chats, p.chat)
		}
	}
	a.mu.Unlock()
	for _, c := range chats {
		emitFor(c)(agent.Event{Kind: agent.EventAnswer, Text: "expired, so denied"})
	}
	return nil
}

// fakeSettings keeps, for a fake agent, what /usage, /system, /tools and
// /model read and change, in memory, with one profile.
type fakeSettings struct {
	mu           sync.Mutex
	instructions map[string]string
	off          map[string][]string
	// gate, when set, holds SetInstructions until it is closed, having
	// sent on entered.
	gate, entered chan struct{}
}

// A fake agent asks no forms.
func (f *fakeSettings) FormInput(context.Context, mcpgram.Caller, int64, agent.FormInput) (*agent.Form, error) {
	return nil, agent.ErrStale
}

func (f *fakeSettings) Waiting(string, string) bool { return false }

func (f *fakeSettings) OpenPrivately(context.Context, mcpgram.Caller, int64, agent.Begin) (*agent.Form, error) {
	return nil, agent.ErrStale
}

func (f *fakeSettings) SignIn(context.Context, mcpgram.Caller, string, func(context.Context, string, string) (string, string, error)) (*agent.Form, error) {
	return nil, errors.New("no sign-ins here")
}

func (f *fakeSettings) AwaitSignIn(context.Context, int64) (*agent.Form, error) {
	return nil, errors.New("no sign-ins here")
}

func (f *fakeSettings) OpenPrompt(context.Context, mcpgram.Caller, string, string) (*agent.Form, error) {
	return nil, agent.ErrNoPrompt
}

func (f *fakeSettings) OpenPromptForm(context.Context, mcpgram.Caller) (*agent.Form, bool, error) {
	return nil, false, nil
}

func (f *fakeSettings) GetPrompt(context.Context, mcpgram.Caller, string, string, map[string]string) (agent.PromptInput, error) {
	return agent.PromptInput{}, agent.ErrNoPrompt
}

func (f *fakeSettings) Usage(context.Context, string) (agent.Usage, error) {
	return agent.Usage{}, nil
}

func (f *fakeSettings) Instructions(_ context.Context, chatID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.instructions[chatID], nil
}

func (f *fakeSettings) SetInstructions(_ context.Context, chatID, instructions string) error {
	if f.gate != nil {
		f.entered <- struct{}{}
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.instructions == nil {
		f.instructions = map[string]string{}
	}
	f.instructions[chatID] = instructions
	return nil
}

func (f *fakeSettings) ServersOff(_ context.Context, chatID string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.off[chatID]), nil
}

func (f *fakeSettings) SetServerOff(_ context.Context, chatID, server string, off bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off == nil {
		f.off = map[string][]string{}
	}
	cur := slices.DeleteFunc(f.off[chatID], func(s string) bool { return s == server })
	if off {
		cur = append(cur, server)
	}
	f.off[chatID] = cur
	return nil
}

var fakeProfile = mcpgram.Profile{Name: "default", Model: "fake"}

func (f *fakeSettings) Profiles() []mcpgram.Profile { return []mcpgram.Profile{fakeProfile} }

func (f *fakeSettings) ChatProfile(context.Context, string) (mcpgram.Profile, error) {
	return fakeProfile, nil
}

func (f *fakeSettings) SetChatProfile(_ context.Context, _, profile string) error {
	if profile != fakeProfile.Name {
		return agent.ErrUnknownProfile
	}
	return nil
}

// newAgent is a real agent on db and h whose one model, "default", is
// srv's "fake"; edit, when set, changes the profile and the options.
func newAgent(t testing.TB, db agent.Store, h agent.Hub, srv *llmfake.Server, edit func(*mcpgram.Profile, *agent.Options)) *agent.Agent {
	t.Helper()
	p := mcpgram.Profile{Name: "default", BaseURL: srv.URL(), Model: "fake"}
	opts := agent.Options{SystemPrompt: func(mcpgram.Catalog) string { return "You are mcpgram." }, Group: chats.IsGroup, Chat: chats.Of}
	if edit != nil {
		edit(&p, &opts)
	}
	client, err := llm.New(p, llm.Options{Backoff: time.Millisecond, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(db, h, []agent.Model{client}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fakeHub is a catalog the /servers buttons change.
type fakeHub struct {
	mu      sync.Mutex
	servers []mcpgram.ServerInfo
}

func newFakeHub(n int) *fakeHub {
	h := &fakeHub{}
	for i := range n {
		s := mcpgram.ServerInfo{Name: fmt.Sprintf("srv%02d", i), Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{{Name: "echo", Description: "Echoes <input>"}}}
		if i == 1 {
			s.Status, s.Tools, s.Error, s.LastStderr = mcpgram.StatusFailed, nil, "exited with code 1", "panic: <boom> & more"
		}
		h.servers = append(h.servers, s)
	}
	return h
}

func (h *fakeHub) Catalog() mcpgram.Catalog {
	h.mu.Lock()
	defer h.mu.Unlock()
	return mcpgram.Catalog{Servers: append([]mcpgram.ServerInfo(nil), h.servers...)}
}

func (h *fakeHub) set(name string, st mcpgram.Status) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.servers {
		if h.servers[i].Name == name {
			h.servers[i].Status = st
			return nil
		}
	}
	return mcpgram.ErrUnknownServer
}

func (h *fakeHub) Status(name string) mcpgram.Status {
	s, _ := h.Catalog().Server(name)
	return s.Status
}

func (h *fakeHub) SetEnabled(ctx context.Context, name string, enabled bool) error {
	if enabled {
		return h.set(name, mcpgram.StatusRunning)
	}
	return h.set(name, mcpgram.StatusDisabled)
}

func (h *fakeHub) ReadResource(context.Context, mcpgram.Caller, string, string) (*mcpgram.Result, error) {
	return nil, errors.New("the fake hub reads no resources")
}

func (h *fakeHub) SignIn(context.Context, string, string, string) (string, string, error) {
	return "", "", errors.New("no sign-ins here")
}

func (h *fakeHub) BeginConnect(context.Context, string, string, string, string) (string, string, error) {
	return "", "", errors.New("no sign-ins here")
}

// CancelTask cancels only the task of handle "stoppable".
func (h *fakeHub) CancelTask(_ context.Context, _ mcpgram.Caller, _, handle string) (*mcpgram.Task, error) {
	if handle == "stoppable" {
		return &mcpgram.Task{ID: handle, Status: mcpgram.TaskCancelled}, nil
	}
	return nil, errors.New("the fake hub runs no tasks")
}

func (h *fakeHub) AnswerTask(context.Context, mcpgram.Caller, string, string, string) error {
	return errors.New("the fake hub runs no tasks")
}

func (h *fakeHub) Restart(ctx context.Context, name string) error {
	if name == "srv01" {
		return errors.New("exec: no such file")
	}
	return h.set(name, mcpgram.StatusRunning)
}

type harness struct {
	bot   *bot.Bot
	fake  *tgfake.Server
	db    *sqlite.DB
	dbDir string
	log   *testenv.Buffer
	// stop ends the bot, which must return nil from Run; stopWant
	// expects want instead.
	stop     func()
	stopWant func(want error)
}

// testConfig is a Bot's Options with short timings for tests.
func testConfig(fake *tgfake.Server, log *testenv.Buffer) bot.Options {
	return bot.Options{
		APIURL:         fake.URL(),
		AdminUserIDs:   []int64{admin},
		PollTimeout:    time.Second,
		RetryMin:       10 * time.Millisecond,
		RetryMax:       50 * time.Millisecond,
		TypingInterval: 50 * time.Millisecond,
		StreamInterval: 10 * time.Millisecond,
		ExpireInterval: 50 * time.Millisecond,
		ShutdownGrace:  2 * time.Second,
		Logger:         slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// startBot runs a Bot against fake until the test ends (or stop is called).
func startBot(t *testing.T, fake *tgfake.Server, dir string, a bot.Agent, h bot.Hub, edit func(*bot.Options)) *harness {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "mcpgram.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return startBotWith(t, fake, db, true, a, h, edit)
}

// startBotWith runs a Bot on db, closing db at the end when own is set.
func startBotWith(t testing.TB, fake *tgfake.Server, db *sqlite.DB, own bool, a bot.Agent, h bot.Hub, edit func(*bot.Options)) *harness {
	t.Helper()
	return startBotOn(t, fake, db, db, own, a, h, edit)
}

// startBotOn is startBotWith with the bot's store st, over db.
func startBotOn(t testing.TB, fake *tgfake.Server, db *sqlite.DB, st bot.Store, own bool, a bot.Agent, h bot.Hub, edit func(*bot.Options)) *harness {
	t.Helper()
	dir := filepath.Dir(db.Path())
	hs := &harness{fake: fake, db: db, dbDir: dir, log: &testenv.Buffer{}}
	cfg := testConfig(fake, hs.log)
	if edit != nil {
		edit(&cfg)
	}
	b, err := bot.New(tgfake.Token, a, partsOf(a), h, st, cfg)
	if err != nil {
		t.Fatalf("bot.New: %v", err)
	}
	hs.bot = b
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	hs.stopWant = func(want error) {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, want) || (want == nil && err != nil) {
					t.Errorf("Run: %v, want %v", err, want)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Run did not return after cancel")
			}
			b.Close()
			if own {
				db.Close()
			}
		})
	}
	hs.stop = func() { hs.stopWant(nil) }
	t.Cleanup(hs.stop)
	return hs
}

// partsOf are the parts of a: a real agent's (also when a test's agent
// wraps one), or a fake's, which are the fake itself.
func partsOf(a bot.Agent) bot.Parts {
	switch x := a.(type) {
	case *agent.Agent:
		return bot.Parts{Forms: agent.NewForms(x), Prompts: agent.NewPrompts(x), SignIns: agent.NewConnections(x),
			Prefs: agent.NewPrefs(x), Usage: agent.NewMeter(x)}
	case *timedAgent:
		return partsOf(x.Agent)
	case fakeParts:
		return bot.Parts{Forms: x, Prompts: x, SignIns: x, Prefs: x, Usage: x}
	}
	panic(fmt.Sprintf("no parts for the agent %T", a))
}

// fakeParts is a fake agent that is its own parts (see fakeSettings).
type fakeParts interface {
	bot.Forms
	prompts.Agent
	signins.Agent
	settings.Agent
	usage.Agent
}

// waitText waits until a bot message in chat contains want and returns it.
func waitText(t *testing.T, fake *tgfake.Server, chat int64, want string) tgfake.Message {
	t.Helper()
	return fake.WaitText(t, chat, want)
}

func countText(fake *tgfake.Server, chat int64, want string) int {
	return fake.Count(chat, want)
}

func waitAnswer(t *testing.T, fake *tgfake.Server, id string) tgfake.CallbackAnswer {
	t.Helper()
	var got tgfake.CallbackAnswer
	fake.WaitFor(t, 30*time.Second, "callback answer "+id, func() bool {
		var ok bool
		got, ok = fake.Answer(id)
		return ok
	})
	return got
}

// Every goroutine the bot starts ends by the time Run and Close return.
// The binary is also the PDF reader the bot starts (see testenv.Prepare).
func TestMain(m *testing.M) {
	testenv.Prepare()
	goleak.VerifyTestMain(m)
}

// turnsWith returns the texts of the turns whose text contains s.
func (a *fakeAgent) turnsWith(s string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for text, n := range a.turns {
		if strings.Contains(text, s) {
			for range n {
				out = append(out, text)
			}
		}
	}
	return out
}
