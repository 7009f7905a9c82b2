package sqlite_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/storetest"
)

// BenchmarkMessagePair measures one turn's history write: a user message
// and the assistant's reply in one transaction (NORMAL sync).
func BenchmarkMessagePair(b *testing.B) {
	db, _ := open(b)
	ctx := b.Context()
	conv := storetest.Active(b, db, "bench")
	user := store.Message{Role: "user", Content: "What is the weather in Lisbon tomorrow?"}
	reply := store.Message{Role: "assistant", Content: strings.Repeat("It will be sunny. ", 30), PromptTokens: 900, CompletionTokens: 120}
	b.ReportAllocs()
	for b.Loop() {
		if err := storetest.AppendMessages(ctx, db, conv, user, reply); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInboxPut measures storing one Telegram update (FULL sync, one
// fsync of the WAL per call).
func BenchmarkInboxPut(b *testing.B) {
	db, _ := open(b)
	ctx := b.Context()
	payload := []byte(`{"update_id":1,"message":{"message_id":7,"from":{"id":42,"is_bot":false,"first_name":"A"},"chat":{"id":42,"type":"private"},"date":1700000000,"text":"hello there"}}`)
	var id int64
	b.ReportAllocs()
	for b.Loop() {
		id++
		if err := db.InboxPut(ctx, store.InboxItem{UpdateID: id, ChatID: "42", Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordToolCall is a single-row NORMAL write, for comparison with
// InboxPut's cost of FULL.
func BenchmarkRecordToolCall(b *testing.B) {
	db, _ := open(b)
	ctx := b.Context()
	c := store.ToolCall{UserID: "42", ChatID: "42", Server: "fs", Tool: "read_file", Arguments: `{"path":"/tmp/x"}`, Status: "ok", ResultBytes: 1200}
	b.ReportAllocs()
	for b.Loop() {
		if err := db.RecordToolCall(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMessagePairParallel measures the same write from many
// goroutines at once, each in its own chat: the single writer serialises
// them, so this shows the queueing cost rather than more throughput.
func BenchmarkMessagePairParallel(b *testing.B) {
	db, _ := open(b)
	ctx := b.Context()
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: fmt.Sprint("chat", next.Add(1))})
		if err != nil {
			b.Error(err)
			return
		}
		msg := store.Message{Role: "user", Content: "hello"}
		for pb.Next() {
			if err := storetest.AppendMessages(ctx, db, conv, msg, msg); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAppendTurnUsage is a turn's write with and without the model
// call's token count beside it: what usage tracking adds per model call.
func BenchmarkAppendTurnUsage(b *testing.B) {
	for _, withUsage := range []bool{false, true} {
		b.Run(fmt.Sprintf("usage=%v", withUsage), func(b *testing.B) {
			db, _ := open(b)
			ctx := b.Context()
			w := store.TurnWrite{ChatID: "42", Messages: []store.Message{
				{Role: "user", Content: "What is the weather in Lisbon tomorrow?"},
				{Role: "assistant", Content: strings.Repeat("It will be sunny. ", 30), PromptTokens: 900, CompletionTokens: 120},
			}}
			if withUsage {
				w.Usage = []store.Usage{{UserID: "42", Model: "gpt-4o-mini", In: 900, Out: 120}}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := db.AppendTurn(ctx, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUserUsage reads a user's month (/usage) and day (the daily
// budget's read before each turn), over a month of days and three models.
func BenchmarkUserUsage(b *testing.B) {
	db, _ := open(b)
	ctx := b.Context()
	now := time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC)
	var us []store.Usage
	for d := range 31 {
		for _, m := range []string{"a", "b", "c"} {
			us = append(us, store.Usage{UserID: "42", Model: m, At: now.AddDate(0, 0, -d), In: 1000, Out: 100})
		}
	}
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "42", Usage: us}); err != nil {
		b.Fatal(err)
	}
	b.Run("month", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := db.UserUsage(ctx, "42", now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("day", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := db.DayUsage(ctx, "42", now); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppendTurnStats measures what /stats adds to a turn's last
// write: "bare" is an answered turn's write (the reply and its token
// count), "stats" the same with the turn's record and its two model
// calls, as the agent writes them.
func BenchmarkAppendTurnStats(b *testing.B) {
	for _, withStats := range []bool{false, true} {
		name := "bare"
		if withStats {
			name = "stats"
		}
		b.Run(name, func(b *testing.B) {
			db, _ := open(b)
			ctx := b.Context()
			w := store.TurnWrite{
				ChatID:   "42",
				Messages: []store.Message{{Role: "assistant", Content: strings.Repeat("It will be sunny. ", 30)}},
				Usage:    []store.Usage{{UserID: "42", Model: "m", In: 900, Out: 120}},
			}
			if withStats {
				w.Turn = &store.TurnRecord{TurnID: "3f9a0c1b2d4e", UserID: "42", ChatID: "42", Outcome: "answer", Model: "m", Calls: []store.ModelCall{
					{Outcome: "ok", Duration: time.Second, In: 900, Out: 60, FirstTry: 1},
					{Outcome: "ok", Duration: time.Second, In: 950, Out: 60, FirstTry: 1},
				}}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := db.AppendTurn(ctx, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
