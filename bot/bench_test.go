package bot_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/bot"
)

// BenchmarkChats: N chats at once, each one tool round trip (two model
// calls of 300 ms and a call of server-everything's echo), against one
// chat alone. It reports the ratio of the two wall times (goal < 1.5) and
// the process CPU time per message (bot, agent, store, hub client and the
// two fakes; the node server is a separate process).
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
	startBotWith(b, s.fake, s.db, false, s.agent, s.hub, func(c *bot.Config) { c.MaxConcurrentTurns = n + 8 })

	round := func(base int64, count int) time.Duration {
		start := time.Now()
		for i := range count {
			id := base + int64(i)
			s.fake.Text(id, id, fmt.Sprintf("echo bench %d", id))
		}
		for i := range count {
			id := base + int64(i)
			s.fake.WaitFor(b, 60*time.Second, "bench reply", func() bool { return countText(s.fake, id, fmt.Sprintf("Tool said: Echo: bench %d", id)) == 1 })
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
	b.ReportMetric(float64((all-2*modelDelay).Microseconds())/float64(n), "µs-wall-overhead/msg")
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "µs-cpu/msg")
}
