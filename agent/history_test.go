package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// wholeStore reads a whole conversation where the agent asks for its
// newest messages: what a turn would read without RecentMessages.
type wholeStore struct{ *sqlite.DB }

func (s wholeStore) RecentMessages(ctx context.Context, conv int64, _ int) ([]store.Message, error) {
	return s.DB.Messages(ctx, conv)
}

// countingStore counts the messages a turn reads.
type countingStore struct {
	*sqlite.DB
	read atomic.Int64
}

func (s *countingStore) RecentMessages(ctx context.Context, conv int64, bytes int) ([]store.Message, error) {
	msgs, err := s.DB.RecentMessages(ctx, conv, bytes)
	s.read.Add(int64(len(msgs)))
	return msgs, err
}

func (s *countingStore) MessagesSince(ctx context.Context, conv, id int64, limit int) ([]store.Message, error) {
	msgs, err := s.DB.MessagesSince(ctx, conv, id, limit)
	s.read.Add(int64(len(msgs)))
	return msgs, err
}

// longConversation writes 300 turns of a chat into a database of its own
// folder: a question (every seventh with an image), a tool call, its
// result (some long), an answer; an answer to a follow-up question now
// and then, which continues its turn.
func longConversation(t *testing.T, dir string) int {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "mcpgram.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var msgs []store.Message
	conv, n := int64(0), 0
	for i := range 300 {
		q := store.Message{Role: agent.RoleUser, Content: fmt.Sprintf("Question %d: what is %d times %d?", i, i, i+1)}
		if i%7 == 0 {
			ref, err := db.MediaPut(ctx, "image/png", []byte(fmt.Sprintf("\x89PNG %d", i)))
			if err != nil {
				t.Fatal(err)
			}
			q.Media = []string{ref}
		}
		msgs = append(msgs, q,
			store.Message{Role: agent.RoleAssistant, Content: echo(fmt.Sprint(i))},
			store.Message{Role: agent.RoleTool, Content: "[use_mcp_tool for 'echo' on 'echo'] Result:\n```\n" + strings.Repeat("x", 10+i%13*97) + "\n```"},
			store.Message{Role: agent.RoleAssistant, Content: complete(fmt.Sprintf("It is %d.", i*(i+1)))})
		if i%11 == 0 {
			msgs = append(msgs, store.Message{Role: agent.RoleUser, Content: "<answer>yes</answer>"}, store.Message{Role: agent.RoleAssistant, Content: "Noted."})
		}
		if len(msgs) >= 200 || i == 299 {
			if conv, err = db.AppendTurn(ctx, store.TurnWrite{ChatID: alice.ChatID, ConversationID: conv, Messages: msgs}); err != nil {
				t.Fatal(err)
			}
			n += len(msgs)
			msgs = nil
		}
	}
	return n
}

// TestHistoryReadsOnlyWhatFits: a turn of a long conversation reads only
// its newest messages, and sends the model the very messages and images
// it would send having read the whole conversation, with and without
// images counted (those of the history then all leave, each with its
// note; the turn's own stays).
func TestHistoryReadsOnlyWhatFits(t *testing.T) {
	t.Parallel()
	for _, vision := range []bool{false, true} {
		t.Run(fmt.Sprintf("vision=%v", vision), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("Fine.") }, setup{})
			windowed, whole := t.TempDir(), t.TempDir()
			total := longConversation(t, windowed)
			if err := os.CopyFS(whole, os.DirFS(windowed)); err != nil {
				t.Fatal(err)
			}
			run := func(dir string, wrap func(*sqlite.DB) agent.Store) llmfake.Request {
				db, err := sqlite.Open(t.Context(), filepath.Join(dir, "mcpgram.db"))
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = db.Close() }()
				profile := mcpgram.Profile{Name: "default", BaseURL: e.model.URL(), Model: "fake", ContextTokens: 8000, Vision: vision}
				client, err := llm.New(profile, llm.Options{})
				if err != nil {
					t.Fatal(err)
				}
				a, err := agent.New(wrap(db), e.hub, []agent.Model{client}, agent.Options{
					Now: e.clock, SystemPrompt: func(mcpgram.Catalog) string { return "You are mcpgram." }})
				if err != nil {
					t.Fatal(err)
				}
				r := &recorder{}
				req := agent.Request{Caller: alice, Text: "And 300 times 301?"}
				if vision {
					req.Images = []llm.Image{{MIMEType: "image/png", Data: []byte("\x89PNG now")}}
				}
				if err := a.Turn(t.Context(), req, r.emit); err != nil {
					t.Fatal(err)
				}
				calls := e.model.Calls()
				return calls[len(calls)-1].Request
			}
			counting := &countingStore{}
			got := run(windowed, func(db *sqlite.DB) agent.Store { counting.DB = db; return counting })
			want := run(whole, func(db *sqlite.DB) agent.Store { return wholeStore{db} })
			if !reflect.DeepEqual(got.Messages, want.Messages) {
				t.Errorf("the model got %d messages having read %d, want the %d it gets having read all %d",
					len(got.Messages), counting.read.Load(), len(want.Messages), total)
			}
			if n := counting.read.Load(); n == 0 || n > int64(total)/5 {
				t.Errorf("read %d of %d messages", n, total)
			}
			if vision {
				sent, noted := len(images(llmfake.Call{Request: got})), 0
				for _, m := range got.Messages {
					noted += strings.Count(m.Content, "left out to keep within the context budget")
				}
				if sent == 0 || noted == 0 {
					t.Errorf("%d images sent, %d left out: the test wants both", sent, noted)
				}
			}
			if len(got.Messages) < 10 || strings.Contains(got.Messages[1].Content, "Question 0:") {
				t.Errorf("%d messages sent: the budget should keep some turns, not all", len(got.Messages))
			}
		})
	}
}

// TestHistoryReadsBackToTheTurn: a turn over the budget on its own is
// still read whole, back to the message that started it, when an answer
// to its question continues it.
func TestHistoryReadsBackToTheTurn(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("y", 50_000) // over a budget of 8000 tokens alone
	e := newEnv(t, llmfake.Script(
		llmfake.Text(echo(big)),
		llmfake.Text("<ask_followup_question><question>All of it?</question></ask_followup_question>"),
		llmfake.Text("Fine."),
	), setup{config: func(w *wiring) { w.ContextTokens = 8000 }})
	if got := e.say("please echo the long one").last(t); got.Kind != agent.EventQuestion {
		t.Fatalf("last event = %+v", got)
	}
	if got := e.say("yes").last(t); got.Kind != agent.EventAnswer {
		t.Fatalf("last event = %+v", got)
	}
	msgs := e.model.Calls()[2].Request.Messages
	if !strings.Contains(msgs[1].Content, "please echo the long one") || !strings.Contains(msgs[len(msgs)-1].Content, "<answer>yes</answer>") {
		t.Errorf("the continued turn was not read whole: first %.60q…, last %.60q", msgs[1].Content, msgs[len(msgs)-1].Content)
	}
}

// TestHistoryKeptBetweenTurns: turn after turn of a long conversation, an
// agent that keeps what its last turn read sends the model the very
// messages one that reads it all anew sends, through a tool call, a
// retry, turns another instance ran on the same database meanwhile, and
// a retry there that replaced what was kept; and it reads only what came
// since, where the other reads the budget's worth every turn.
func TestHistoryKeptBetweenTurns(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("Fine.") }, setup{})
	keptDir, anewDir := t.TempDir(), t.TempDir()
	longConversation(t, keptDir)
	if err := os.CopyFS(anewDir, os.DirFS(keptDir)); err != nil {
		t.Fatal(err)
	}
	reply := func(c llmfake.Call) llmfake.Reply {
		switch last := c.Request.Last(); {
		case strings.Contains(last, "Result:"):
			return llmfake.Text(complete("Echoed."))
		case strings.Contains(last, "please echo"):
			return llmfake.Text(echo("hello"))
		}
		return llmfake.Text(fmt.Sprintf("Fine, %d.", len(c.Request.Messages)))
	}
	type side struct {
		a, other *agent.Agent
		model    *llmfake.Server
		reads    *countingStore
	}
	open := func(dir string, cache int) side {
		db := testenv.SQLite(t, filepath.Join(dir, "mcpgram.db"))
		s := side{model: llmfake.New(t, reply), reads: &countingStore{DB: db}}
		newAgent := func(st agent.Store, m *llmfake.Server, cache int) *agent.Agent {
			profile := mcpgram.Profile{Name: "default", BaseURL: m.URL(), Model: "fake", ContextTokens: 8000}
			client, err := llm.New(profile, llm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(st, e.hub, []agent.Model{client}, agent.Options{
				Now: e.clock, SystemPrompt: func(mcpgram.Catalog) string { return "You are mcpgram." }, HistoryCache: cache})
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		s.a = newAgent(s.reads, s.model, cache)
		s.other = newAgent(db, llmfake.New(t, reply), -1) // another instance, on the same database
		return s
	}
	kept, anew := open(keptDir, 0), open(anewDir, -1)
	steps := []struct {
		other bool
		req   agent.Request
	}{
		{false, agent.Request{Text: "And 300 times 301?"}},
		{false, agent.Request{Text: "please echo it"}},
		{false, agent.Request{Retry: true}},
		{true, agent.Request{Text: "from the other instance"}},
		{false, agent.Request{Text: "and now?"}},
		{true, agent.Request{Retry: true}},
		{false, agent.Request{Text: "after the retry there"}},
		{false, agent.Request{Text: "please echo once more"}},
	}
	var readFirst int64
	for i, st := range steps {
		for _, s := range []side{kept, anew} {
			a := s.a
			if st.other {
				a = s.other
			}
			req := st.req
			req.Caller = alice
			if err := a.Turn(t.Context(), req, (&recorder{}).emit); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		if i == 0 {
			readFirst = kept.reads.read.Load()
		}
	}
	got, want := kept.model.Calls(), anew.model.Calls()
	if len(got) != len(want) || len(got) < 8 {
		t.Fatalf("%d model calls kept, %d anew", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i].Request.Messages, want[i].Request.Messages) {
			t.Errorf("call %d: the model got %d messages from the kept history, %d read anew", i, len(got[i].Request.Messages), len(want[i].Request.Messages))
		}
	}
	// The first turn read the budget's worth; each later one what came
	// since, but for the one after the retry elsewhere, which read anew.
	if later := kept.reads.read.Load() - readFirst; later > 2*readFirst {
		t.Errorf("the turns after the first read %d messages, the first %d: want about one read anew and a few since", later, readFirst)
	}
}

// TestHistoryKeptIsBounded: what turns keep of long conversations stays
// within Options.HistoryCache, the least recently read leaving first; a
// conversation too short to be worth keeping is not kept.
func TestHistoryKeptIsBounded(t *testing.T) {
	t.Parallel()
	const bound = 200 << 10
	e := newEnv(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("Fine.") }, setup{config: func(w *wiring) {
		w.ContextTokens, w.HistoryCache = 8000, bound
	}})
	chat := func(i int) mcpgram.Caller { return mcpgram.Caller{UserID: "111", ChatID: fmt.Sprint("chat", i)} }
	for i := range 8 {
		// 40 KB of history each (a read of 32 KB, the budget, keeps
		// about that), but the first two: 1 KB.
		var msgs []store.Message
		for j := range 40 {
			n := 1000
			if i < 2 {
				n = 25
			}
			msgs = append(msgs, store.Message{Role: agent.RoleUser, Content: fmt.Sprintf("%d %s", j, strings.Repeat("x", n))})
		}
		if _, err := e.db.AppendTurn(t.Context(), store.TurnWrite{ChatID: chat(i).ChatID, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	each := 0 // what one long conversation's read keeps
	for i := range 8 {
		if _, err := e.turn(agent.Request{Caller: chat(i), Text: "hello"}); err != nil {
			t.Fatal(err)
		}
		bytes, convs := agent.KeptSize(e.agent)
		if i == 2 {
			each = bytes
		}
		want := 0 // the long ones read so far, as many as fit
		if each > 0 {
			want = min(i-1, bound/each)
		}
		if bytes > bound || convs != want || i == 2 && each < 32000 {
			t.Errorf("after chat %d: %d bytes of %d conversations kept, want at most %d bytes, of %d", i, bytes, convs, bound, want)
		}
	}
}
