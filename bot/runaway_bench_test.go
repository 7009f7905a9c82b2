package bot_test

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// BenchmarkRunawayReply: a model endpoint streams an 8 MiB reply (1 KiB
// deltas, the chunked draft edits going out as fast as the fake Telegram
// takes them) into a private chat, through the whole stack: the llm
// client, the agent and the bot's draft. It reports the bytes allocated
// per turn and the peak of live heap objects, sampled every millisecond,
// and checks that the turn ends.
//
//	go test -run '^$' -bench RunawayReply -benchtime 3x ./bot/
func BenchmarkRunawayReply(b *testing.B) {
	chunk := strings.Repeat("runaway reply, paragraph after paragraph.\n\n", 24)[:1024]
	s := newStack(b, func(llmfake.Call) llmfake.Reply {
		return llmfake.Reply{Chunks: []string{chunk}, Repeat: 8 << 10}
	}, nil)
	s.fake.EnableDrafts()
	s.start(nil)

	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	stop, sampled := make(chan struct{}), sync.WaitGroup{}
	sampled.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := range b.N {
		s.fake.Text(alice, alice, "tell me everything")
		s.fake.WaitFor(b, 10*time.Minute, "the turn's end", func() bool {
			return countText(s.fake, alice, "too long")+countText(s.fake, alice, "answer.md") > i
		})
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	close(stop)
	sampled.Wait()
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/turn")
	b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-heap")
}
