package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// scripted is a zero-latency model in process: it calls the calculator,
// then completes once it has read the result.
type scripted struct{ profile mcpgram.Profile }

func (m scripted) Profile() mcpgram.Profile { return m.profile }

const calcCall = "<use_mcp_tool>\n<server_name>calc</server_name>\n<tool_name>calculate</tool_name>\n<arguments>{\"expression\": \"25 * 48 + 120 / 4\"}</arguments>\n</use_mcp_tool>"

func (scripted) Complete(_ context.Context, req llm.Request) (*llm.Response, error) {
	reply := "Let me calculate.\n" + calcCall
	done := strings.HasPrefix(req.Messages[len(req.Messages)-1].Content, "[use_mcp_tool")
	if done {
		reply = "<attempt_completion><result>It is 1230.</result></attempt_completion>"
	}
	var calls []llm.ToolCall
	if len(req.Tools) > 0 {
		// A native model: the same call as a function, the answer as text.
		reply, calls = "It is 1230.", nil
		if !done {
			reply, calls = "Let me calculate.", []llm.ToolCall{{ID: "call_1", Name: "calc__calculate", Arguments: `{"expression": "25 * 48 + 120 / 4"}`}}
		}
	}
	if req.OnDelta != nil {
		// Delivered in pieces, as a stream would, so parsing is counted.
		for len(reply) > 16 {
			req.OnDelta(reply[:16])
			reply = reply[16:]
		}
		req.OnDelta(reply)
	}
	return &llm.Response{Content: reply, ToolCalls: calls, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 20}}, nil
}

func benchHub(b *testing.B) *hub.Hub {
	b.Helper()
	settings := testenv.WriteSettings(b, b.TempDir(), map[string]any{
		"calc": map[string]any{"command": testenv.Bundled(b, "mcp-calculator"), "autoApprove": []string{"calculate"}},
	})
	return testenv.StartHub(b, settings, hub.Options{NoWatch: true})
}

// timedHub measures the time spent in tool calls, so a turn's own cost
// is its time minus that, measured in the same iterations: on a busy
// machine, subtracting a separately measured CallTool figure is noise.
type timedHub struct {
	*hub.Hub
	spent atomic.Int64
}

func (h *timedHub) CallTool(ctx context.Context, c mcpgram.Caller, server, tool string, args map[string]any) (*mcpgram.Result, error) {
	start := time.Now()
	defer func() { h.spent.Add(int64(time.Since(start))) }()
	return h.Hub.CallTool(ctx, c, server, tool, args)
}

// timedStore measures the time spent in the database.
type timedStore struct {
	*sqlite.DB
	spent atomic.Int64
}

func (s *timedStore) since(start time.Time) { s.spent.Add(int64(time.Since(start))) }

func (s *timedStore) OpenPending(ctx context.Context, chatID string) (store.Pending, error) {
	defer s.since(time.Now())
	return s.DB.OpenPending(ctx, chatID)
}

func (s *timedStore) Messages(ctx context.Context, id int64) ([]store.Message, error) {
	defer s.since(time.Now())
	return s.DB.Messages(ctx, id)
}

func (s *timedStore) CurrentConversation(ctx context.Context, chatID string) (int64, error) {
	defer s.since(time.Now())
	return s.DB.CurrentConversation(ctx, chatID)
}

func (s *timedStore) AppendTurn(ctx context.Context, w store.TurnWrite) (int64, error) {
	defer s.since(time.Now())
	return s.DB.AppendTurn(ctx, w)
}

func (s *timedStore) DayUsage(ctx context.Context, userID string, t time.Time) (store.Tokens, error) {
	defer s.since(time.Now())
	return s.DB.DayUsage(ctx, userID, t)
}

func (s *timedStore) RecordToolCall(ctx context.Context, c store.ToolCall) error {
	defer s.since(time.Now())
	return s.DB.RecordToolCall(ctx, c)
}

// BenchmarkTurn runs whole turns: two model calls and one call to the
// bundled calculator, with every message, the audit line and the token
// counts written to a real database; "metrics+budget" also counts the
// metrics and reads the user's day for a budget. It reports per turn: tool-µs, the
// tool round trip; loop-µs, everything else (the goal is < 1000), and
// within it db-µs, the database's share, and agent-µs, the rest. "in-process" is a zero-latency
// scripted model; "http" goes through the llm client and llmfake's SSE
// (both ends of the HTTP exchange run in this process, so their cost is
// counted in loop-µs). Each runs with tools called in XML and natively
// (tool-calling=native: the same call as a streamed function call).
func BenchmarkTurn(b *testing.B) {
	for _, calling := range []mcpgram.ToolCalling{mcpgram.ToolCallingXML, mcpgram.ToolCallingNative} {
		benchTurn(b, calling)
	}
}

func benchTurn(b *testing.B, calling mcpgram.ToolCalling) {
	for _, bench := range []struct {
		model string
		// turnsPerChat: 1 measures a chat's first message, 25 chats with
		// histories of up to 100 messages (read on every turn).
		turnsPerChat int
		// metrics counts the turns, and checks a daily token budget.
		metrics bool
	}{{"in-process", 1, false}, {"in-process", 25, false}, {"in-process", 1, true}, {"http", 1, false}} {
		model := bench.model
		name := fmt.Sprintf("tool-calling=%s/model=%s/turns-per-chat=%d", calling, model, bench.turnsPerChat)
		if bench.metrics {
			name += "/metrics+budget"
		}
		b.Run(name, func(b *testing.B) {
			h := &timedHub{Hub: benchHub(b)}
			sdb := testenv.SQLite(b, "")
			db := &timedStore{DB: sdb}
			profile := mcpgram.Profile{Name: "default", Model: "fake", ToolCalling: calling}
			var m agent.Model = scripted{profile}
			if model == "http" {
				srv := llmfake.New(b, llmfake.Native(func(c llmfake.Call) llmfake.Reply {
					if strings.HasPrefix(c.Request.Last(), "[use_mcp_tool") {
						return llmfake.Text("<attempt_completion><result>It is 1230.</result></attempt_completion>").Split(16)
					}
					return llmfake.Text("Let me calculate.\n" + calcCall).Split(16)
				}))
				profile.BaseURL = srv.URL()
				var err error
				if m, err = llm.New(profile, llm.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			var opts agent.Options
			if bench.metrics {
				opts.Metrics = metrics.New()
				opts.TokenBudgetPerUserDay = 1 << 40
			}
			a, err := agent.New(db, h, []agent.Model{m}, opts)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				caller := mcpgram.Caller{UserID: "1", ChatID: strconv.Itoa(i / bench.turnsPerChat)}
				var last agent.Event
				if err := a.Turn(context.Background(), agent.Request{Caller: caller, Text: "what is 25*48+120/4?"}, func(ev agent.Event) { last = ev }); err != nil {
					b.Fatal(err)
				}
				if last.Kind != agent.EventAnswer {
					b.Fatalf("turn ended with %+v", last)
				}
			}
			n := float64(b.N)
			tool := float64(h.spent.Load()) / n / 1e3
			b.ReportMetric(tool, "tool-µs")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/n-tool, "loop-µs")
			dbTime := float64(db.spent.Load()) / n / 1e3
			b.ReportMetric(dbTime, "db-µs")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/n-tool-dbTime, "agent-µs")
		})
	}
}

// BenchmarkCallTool is the bare tool round trip a turn makes, for
// comparison.
func BenchmarkCallTool(b *testing.B) {
	h := benchHub(b)
	args := map[string]any{"expression": "25 * 48 + 120 / 4"}
	for b.Loop() {
		if _, err := h.CallTool(context.Background(), alice, "calc", "calculate", args); err != nil {
			b.Fatal(err)
		}
	}
}

func (s *timedStore) RecentMessages(ctx context.Context, id int64, bytes int) ([]store.Message, error) {
	defer s.since(time.Now())
	return s.DB.RecentMessages(ctx, id, bytes)
}

// wholeRead is a store that reads a whole conversation where the agent
// asks for its newest messages, as every turn did before RecentMessages:
// the benchmark's "read=all", beside "read=recent" in the same run.
type wholeRead struct{ *timedStore }

func (s wholeRead) RecentMessages(ctx context.Context, id int64, _ int) ([]store.Message, error) {
	return s.timedStore.Messages(ctx, id)
}

// writeHistory gives chat a conversation of n turns like the benchmark's
// own (a question, the call, its result, the answer), written in batches
// of a few thousand messages, a transaction each.
func writeHistory(b *testing.B, db *sqlite.DB, chat string, n int) {
	b.Helper()
	const batch = 2000
	var msgs []store.Message
	conv := int64(0)
	for i := range n {
		msgs = append(msgs,
			store.Message{Role: agent.RoleUser, Content: fmt.Sprintf("what is %d*48+120/4?", i)},
			store.Message{Role: agent.RoleAssistant, Content: "Let me calculate.\n" + calcCall, PromptTokens: 100, CompletionTokens: 20},
			store.Message{Role: agent.RoleTool, Content: "[use_mcp_tool for 'calculate' on 'calc'] Result:\n```\n1230\n```"},
			store.Message{Role: agent.RoleAssistant, Content: "<attempt_completion><result>It is 1230.</result></attempt_completion>", PromptTokens: 100, CompletionTokens: 20})
		if len(msgs) >= batch || i == n-1 {
			var err error
			if conv, err = db.AppendTurn(b.Context(), store.TurnWrite{ChatID: chat, ConversationID: conv, Messages: msgs}); err != nil {
				b.Fatal(err)
			}
			msgs = msgs[:0]
		}
	}
}

// undoTurn marks the messages a turn added to chat's conversation as
// replaced, as /retry does, so that the next turn reads the same history:
// every message after last, the history's own last. It reads nothing, so
// that the garbage of what is outside the timer does not weigh on what
// is inside it.
func undoTurn(b *testing.B, db *sqlite.DB, chat string, last int64) {
	b.Helper()
	if _, err := db.AppendTurn(b.Context(), store.TurnWrite{ChatID: chat, ReplaceFrom: last + 1}); err != nil {
		b.Fatal(err)
	}
}

// lastMessage is the id of the newest message of chat's conversation.
func lastMessage(b *testing.B, db *sqlite.DB, chat string) int64 {
	b.Helper()
	conv, err := db.CurrentConversation(b.Context(), chat)
	if err != nil {
		b.Fatal(err)
	}
	msgs, err := db.RecentMessages(b.Context(), conv, 1)
	if err != nil || len(msgs) != 1 {
		b.Fatalf("%d messages, %v", len(msgs), err)
	}
	return msgs[0].ID
}

// BenchmarkTurnHistory is BenchmarkTurn's turn (XML, in-process model)
// in a chat with 25, 250, 1,000 and 10,000 turns of history, with the
// default context budget (MAX_CONTEXT_TOKENS, 32000): read=kept keeps
// what the last turn read and reads what came since (the default),
// read=recent reads only what the budget can take (RecentMessages) every
// turn, read=all the whole conversation, each as it once was, measured
// in the same run. Each turn's own messages are marked replaced after
// it, outside the timer, so every turn reads the same history. The
// goals: at 10,000 turns at most 1.25 times the cost at 1,000, in time
// (loop-µs) and memory (B/op); at 1,000 at most 1.5 times a fresh chat's
// turn (BenchmarkTurn's turns-per-chat=1).
func BenchmarkTurnHistory(b *testing.B) {
	for _, turns := range []int{25, 250, 1000, 10000} {
		h := &timedHub{Hub: benchHub(b)}
		sdb, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		chat := "history"
		writeHistory(b, sdb, chat, turns)
		base := lastMessage(b, sdb, chat)
		// kept: what the last turn read is kept (the default); recent:
		// read anew every turn, as before it was; all: the whole
		// conversation, as before that.
		for _, read := range []string{"kept", "recent", "all"} {
			b.Run(fmt.Sprintf("turns=%d/read=%s", turns, read), func(b *testing.B) {
				h.spent.Store(0)
				db := &timedStore{DB: sdb}
				var s agent.Store = db
				if read == "all" {
					s = wholeRead{db}
				}
				profile := mcpgram.Profile{Name: "default", Model: "fake", ContextTokens: 32000}
				var opts agent.Options
				if read != "kept" {
					opts.HistoryCache = -1
				}
				a, err := agent.New(s, h, []agent.Model{scripted{profile}}, opts)
				if err != nil {
					b.Fatal(err)
				}
				caller := mcpgram.Caller{UserID: "1", ChatID: chat}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					var last agent.Event
					if err := a.Turn(b.Context(), agent.Request{Caller: caller, Text: "what is 25*48+120/4?"}, func(ev agent.Event) { last = ev }); err != nil {
						b.Fatal(err)
					}
					if last.Kind != agent.EventAnswer {
						b.Fatalf("turn ended with %+v", last)
					}
					b.StopTimer()
					undoTurn(b, sdb, chat, base)
					b.StartTimer()
				}
				n := float64(b.N)
				tool := float64(h.spent.Load()) / n / 1e3
				b.ReportMetric(float64(b.Elapsed().Microseconds())/n-tool, "loop-µs")
				b.ReportMetric(float64(db.spent.Load())/n/1e3, "db-µs")
			})
		}
		_ = sdb.Close()
	}
}
