package bot_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot"
)

// timedAgent records when each chat's turn starts and when its answer is
// emitted, to tell the bot's own time from the agent's.
type timedAgent struct {
	bot.Agent
	mu     sync.Mutex
	start  map[string]time.Time
	answer map[string]time.Time
}

func (a *timedAgent) Turn(ctx context.Context, req agent.Request, emit func(agent.Event)) error {
	a.mu.Lock()
	a.start[req.Caller.ChatID] = time.Now()
	a.mu.Unlock()
	return a.Agent.Turn(ctx, req, func(ev agent.Event) {
		if ev.Kind == agent.EventAnswer {
			a.mu.Lock()
			a.answer[req.Caller.ChatID] = time.Now()
			a.mu.Unlock()
		}
		emit(ev)
	})
}

// BenchmarkChats: N chats at once, each one tool round trip (two model
// calls of 300 ms and a call of hub/testdata/echo's echo), against one
// chat alone. It reports the ratio of the two wall times (goal < 1.5), the
// bot's own time per message (update to turn start, plus answer event to
// the message reaching Telegram), and the process CPU time per message
// (bot, agent, store, hub client and both fakes; the echo server is a
// separate process). MAX_CONCURRENT_TURNS is raised above N: at the
// default 64, 200 chats run in four waves, by design.
//
//	go test -run '^$' -bench Chats -benchtime 1x ./bot/
func BenchmarkChats(b *testing.B) {
	for _, n := range []int{40, 200} {
		b.Run(fmt.Sprintf("chats=%d", n), func(b *testing.B) {
			benchChats(b, n)
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchChats(b *testing.B, n int) {
	const modelDelay = 300 * time.Millisecond
	s := newStack(b, scriptedModel(modelDelay), nil)
	ta := &timedAgent{Agent: s.agent, start: map[string]time.Time{}, answer: map[string]time.Time{}}
	startBotWith(b, s.fake, s.db, false, ta, s.hub, func(c *bot.Options) {
		// Production timings: the test ones send "typing" every 50 ms.
		c.MaxConcurrentTurns = n + 8
		c.TypingInterval, c.StreamInterval, c.ExpireInterval = 4*time.Second, 1500*time.Millisecond, 30*time.Second
	})
	sent := map[int64]time.Time{}

	round := func(base int64, count int) time.Duration {
		start := time.Now()
		for i := range count {
			id := base + int64(i)
			sent[id] = time.Now()
			s.fake.Text(id, id, fmt.Sprintf("echo bench %d", id))
		}
		for i := range count {
			id := base + int64(i)
			s.fake.WaitFor(b, 60*time.Second, "bench reply", func() bool { return countText(s.fake, id, fmt.Sprintf("Tool said: bench %d", id)) == 1 })
		}
		return time.Since(start)
	}
	round(1, 1) // warm up: connections, prompt cache, server start-up costs
	b.ResetTimer()
	var one, all time.Duration
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		one = round(int64(100000*(i+1)), 1)
		c0 := cpuTime()
		all = round(int64(100000*(i+1)+10), n)
		cpu = cpuTime() - c0
	}
	b.ReportMetric(float64(one.Milliseconds()), "ms/one-chat")
	b.ReportMetric(float64(all.Milliseconds()), "ms/all-chats")
	b.ReportMetric(float64(all)/float64(one), "ratio")
	// The bot's own time per message: from the update reaching Telegram to
	// the turn starting, plus from the answer event to the final message
	// reaching Telegram; for the one chat alone, and the median and 90th
	// percentile over the chats running at once.
	ta.mu.Lock()
	botTime := func(from, to int64) []time.Duration {
		var own []time.Duration
		for _, c := range s.fake.Calls("sendMessage") {
			var id int64
			fmt.Sscan(c.Params["chat_id"], &id)
			if id < from || id >= to || !strings.Contains(c.Params["text"], "Tool said: bench") {
				continue
			}
			key := fmt.Sprint(id)
			own = append(own, ta.start[key].Sub(sent[id])+c.At.Sub(ta.answer[key]))
		}
		sort.Slice(own, func(i, j int) bool { return own[i] < own[j] })
		return own
	}
	last := int64(100000 * b.N)
	alone, many := botTime(last, last+1), botTime(last+10, last+10+int64(n))
	ta.mu.Unlock()
	if len(alone) == 1 && len(many) == n {
		b.ReportMetric(float64(alone[0].Microseconds()), "µs-bot-alone/msg")
		b.ReportMetric(float64(many[n/2].Microseconds()), "µs-bot-median/msg")
		b.ReportMetric(float64(many[n*9/10].Microseconds()), "µs-bot-p90/msg")
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "µs-cpu/msg")
}
