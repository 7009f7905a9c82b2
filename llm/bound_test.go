package llm_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// A reply has a size bound: an endpoint that streams without end, or
// answers with more than the bound, fails the call with KindTooLong, at
// once and without a retry, having read no more than the bound allows.
func TestReplyBound(t *testing.T) {
	const hardCap = 64 << 10
	long := strings.Repeat("word ", 20) // 100 bytes a chunk
	tests := []struct {
		name      string
		reply     llmfake.Reply
		stream    bool
		maxTokens int
		// limit is the bound the error names.
		limit int
	}{
		{"an endless stream, cut by LLM_MAX_TOKENS", llmfake.Reply{Chunks: []string{long}, Endless: true}, true, 512, 512 * llm.BytesPerToken},
		{"an endless stream, cut by the hard cap", llmfake.Reply{Chunks: []string{long}, Endless: true}, true, 0, hardCap},
		{"one chunk over the bound", llmfake.Text(strings.Repeat("x", 2*hardCap)), true, 0, hardCap},
		{"one chunk too long to read whole", llmfake.Text(strings.Repeat("x", 8*hardCap)), true, 0, hardCap},
		{"endless empty chunks", llmfake.Reply{Chunks: []string{""}, Endless: true}, true, 64, 64 * llm.BytesPerToken},
		{"endless tool-call arguments", llmfake.Reply{ToolCalls: []llmfake.ToolCall{{Name: "f", Arguments: strings.Repeat(`{"a":1}`, 3*hardCap/7)}}, ArgChunk: 100}, true, 0, hardCap},
		{"a huge plain reply", llmfake.Text(strings.Repeat("y", 2*hardCap)), false, 0, hardCap},
		{"a plain reply over LLM_MAX_TOKENS", llmfake.Text(strings.Repeat("y", 600*llm.BytesPerToken)), false, 512, 512 * llm.BytesPerToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return tt.reply })
			c := newClient(t, srv, func(p *mcpgram.Profile, o *llm.Options) {
				p.MaxTokens = tt.maxTokens
				o.MaxReplyBytes = hardCap
			})
			req := llm.Request{Messages: hello}
			streamed := 0
			if tt.stream {
				req.OnDelta = func(d string) { streamed += len(d) }
			}
			// A safety net for the test itself: an unbounded endless reply
			// would never return.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := c.Complete(ctx, req)
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.KindTooLong {
				t.Fatalf("err = %v, want KindTooLong", err)
			}
			if e.Limit != tt.limit {
				t.Errorf("the error names the bound %d, want %d", e.Limit, tt.limit)
			}
			if streamed > tt.limit {
				t.Errorf("%d bytes were passed on as they streamed, over the bound of %d", streamed, tt.limit)
			}
			if n := len(srv.Calls()); n != 1 {
				t.Errorf("%d calls, want 1: a reply over the bound is not asked for again", n)
			}
			if msg := e.UserMessage(); !strings.Contains(msg, "too long") {
				t.Errorf("user message %q does not say the reply was too long", msg)
			}
		})
	}
}

// A reply within the bound is whole, however it is streamed.
func TestReplyWithinBound(t *testing.T) {
	text := strings.Repeat("z", 2000)
	srv := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text(text).Split(1) })
	c := newClient(t, srv, func(p *mcpgram.Profile, o *llm.Options) { p.MaxTokens = 512; o.MaxReplyBytes = len(text) })
	resp, err := c.Complete(context.Background(), llm.Request{Messages: hello, OnDelta: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != text {
		t.Errorf("got %d bytes, want the whole %d", len(resp.Content), len(text))
	}
}

// BenchmarkRunawayReply streams an endless reply into a client with the
// default bound: what one call holds is bounded, not what the endpoint
// sends. It reports the bytes allocated per call and the heap in use
// right after.
func BenchmarkRunawayReply(b *testing.B) {
	chunk := strings.Repeat("runaway ", 128) // 1 KiB a chunk
	srv := llmfake.New(b, func(llmfake.Call) llmfake.Reply {
		return llmfake.Reply{Chunks: []string{chunk}, Endless: true}
	})
	c, err := llm.New(mcpgram.Profile{BaseURL: srv.URL(), Model: "fake"}, llm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		_, err := c.Complete(context.Background(), llm.Request{Messages: hello, OnDelta: func(string) {}})
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.KindTooLong {
			b.Fatalf("err = %v, want KindTooLong", err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/op")
	b.ReportMetric(float64(after.HeapInuse)/(1<<20), "MiB-heap")
}
