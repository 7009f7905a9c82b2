package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

func newClient(t *testing.T, srv *llmfake.Server, edit func(*mcpgram.Profile, *llm.Options)) *llm.Client {
	t.Helper()
	p := mcpgram.Profile{
		Name:        "default",
		BaseURL:     srv.URL(),
		APIKey:      "sk-test",
		Model:       "fake-model",
		Temperature: 0.7,
		MaxTokens:   512,
	}
	opts := llm.Options{Backoff: time.Millisecond, Timeout: 5 * time.Second}
	if edit != nil {
		edit(&p, &opts)
	}
	c, err := llm.New(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func drop(r llmfake.Reply, after int) llmfake.Reply {
	r.DropAfter = after
	return r
}

var hello = []llm.Message{{Role: llm.RoleSystem, Content: "be brief"}, {Role: llm.RoleUser, Content: "hello"}}

func TestCompletePlainAndStreamed(t *testing.T) {
	const reply = "<thinking>x</thinking>Hello <b>there</b>, friend."
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			srv := llmfake.New(t, llmfake.Script(llmfake.Text(reply).Split(3)))
			c := newClient(t, srv, nil)
			var deltas []string
			req := llm.Request{Messages: hello}
			if stream {
				req.OnDelta = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != reply {
				t.Errorf("content = %q, want %q", resp.Content, reply)
			}
			if stream && strings.Join(deltas, "") != reply {
				t.Errorf("deltas join to %q, want %q", strings.Join(deltas, ""), reply)
			}
			if stream && len(deltas) < 5 {
				t.Errorf("got %d deltas, want the reply in many chunks", len(deltas))
			}
			if resp.FinishReason != "stop" || resp.Attempts != 1 {
				t.Errorf("finish %q attempts %d, want stop 1", resp.FinishReason, resp.Attempts)
			}
			wantUsage := llm.Usage{PromptTokens: len("be brief")/4 + len("hello")/4, CompletionTokens: len(reply) / 4}
			if resp.Usage != wantUsage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, wantUsage)
			}

			got := srv.Calls()[0].Request
			if got.Model != "fake-model" || got.MaxTokens != 512 || got.Stream != stream {
				t.Errorf("request model %q max %d stream %v", got.Model, got.MaxTokens, got.Stream)
			}
			if got.Temperature == nil || *got.Temperature < 0.69 || *got.Temperature > 0.71 {
				t.Errorf("temperature = %v, want 0.7", got.Temperature)
			}
			if stream && (got.StreamOptions == nil || !got.StreamOptions.IncludeUsage) {
				t.Error("stream_options.include_usage not requested")
			}
			if h := got.Header.Get("Authorization"); h != "Bearer sk-test" {
				t.Errorf("Authorization = %q", h)
			}
			if m := got.Messages; len(m) != 2 || m[1].Role != "user" || m[1].Content != "hello" || len(m[1].Images) != 0 {
				t.Errorf("messages = %+v", got.Messages)
			}
		})
	}
}

// The reasoning an endpoint sends apart from the content reaches the
// response, streamed (in pieces, before the content) or not, and never
// the content or its deltas.
func TestReasoning(t *testing.T) {
	const reasoning, content = "The user greets me; <think>nothing</think> to call.", "Hello!"
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := llmfake.New(t, llmfake.Script(llmfake.Reply{Content: content, Reasoning: reasoning}.Split(4)))
			c := newClient(t, srv, nil)
			req := llm.Request{Messages: hello}
			var deltas strings.Builder
			if stream {
				req.OnDelta = func(d string) { deltas.WriteString(d) }
			}
			resp, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Reasoning != reasoning || resp.Content != content {
				t.Errorf("reasoning %q, content %q", resp.Reasoning, resp.Content)
			}
			if stream && deltas.String() != content {
				t.Errorf("deltas %q, want the content only", deltas.String())
			}
		})
	}
}

// A zero temperature must reach the wire: go-openai omits a zero field.
func TestZeroTemperatureIsSent(t *testing.T) {
	srv := llmfake.New(t, llmfake.Script(llmfake.Text("a"), llmfake.Text("b")))
	c := newClient(t, srv, func(p *mcpgram.Profile, _ *llm.Options) { p.Temperature = 0 })
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hello}); err != nil {
		t.Fatal(err)
	}
	lowered := float32(0.3)
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hello, Temperature: &lowered}); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if tp := calls[0].Request.Temperature; tp == nil || *tp > 1e-6 {
		t.Errorf("temperature = %v, want present and 0", tp)
	}
	if tp := calls[1].Request.Temperature; tp == nil || *tp < 0.29 || *tp > 0.31 {
		t.Errorf("override temperature = %v, want 0.3", tp)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		replies  []llmfake.Reply
		stream   bool
		want     string
		attempts int
		minTime  time.Duration
		timeout  time.Duration // default 5 s
	}{
		{"500 then ok", []llmfake.Reply{{Status: 500}, llmfake.Text("ok")}, false, "ok", 2, 0, 0},
		{"502 503 504 then ok", []llmfake.Reply{{Status: 502}, {Status: 503}, {Status: 504}, llmfake.Text("ok")}, true, "ok", 4, 0, 0},
		{"429 honours Retry-After", []llmfake.Reply{{Status: 429, RetryAfter: "1"}, llmfake.Text("ok")}, true, "ok", 2, time.Second, 0},
		{"dropped stream", []llmfake.Reply{drop(llmfake.Text("partial reply").Split(2), 2), llmfake.Text("whole")}, true, "whole", 2, 0, 0},
		{"stream ends cleanly with no finish reason and no [DONE]", []llmfake.Reply{{Chunks: []string{"half of ", "it"}, NoFinish: true, NoDone: true}, llmfake.Text("whole")}, true, "whole", 2, 0, 0},
		{"a finish reason without [DONE] is complete", []llmfake.Reply{{Content: "whole", NoDone: true}}, true, "whole", 1, 0, 0},
		{"[DONE] without a finish reason is complete", []llmfake.Reply{{Content: "whole", NoFinish: true}}, true, "whole", 1, 0, 0},
		{"[DONE] after paced chunks, no finish reason", []llmfake.Reply{{Chunks: []string{"wh", "ole"}, NoFinish: true, ChunkDelay: time.Millisecond}}, true, "whole", 1, 0, 0},
		{"error inside stream", []llmfake.Reply{{Content: "half", StreamError: "overloaded"}, llmfake.Text("ok")}, true, "ok", 2, 0, 0},
		// The silences are far beyond the timeout (the fake stops waiting
		// when the client hangs up), so a late timer cannot let them pass.
		{"silent endpoint", []llmfake.Reply{{Content: "late", Delay: time.Minute}, llmfake.Text("ok")}, false, "ok", 2, 0, time.Second},
		{"stream goes silent", []llmfake.Reply{{Chunks: []string{"a", "b"}, ChunkDelay: time.Minute}, llmfake.Text("ok")}, true, "ok", 2, 0, time.Second},
		// Each gap is far inside the timeout, the whole reply longer than it.
		{"slow stream that keeps talking", []llmfake.Reply{{Chunks: []string{"o", "k", "!", "!", "!", "!", "!", "!", "!"}, ChunkDelay: 300 * time.Millisecond}}, true, "ok!!!!!!!", 1, 2400 * time.Millisecond, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmfake.New(t, llmfake.Script(tt.replies...))
			c := newClient(t, srv, func(_ *mcpgram.Profile, o *llm.Options) {
				if tt.timeout > 0 {
					o.Timeout = tt.timeout
				}
			})
			var retries []time.Duration
			var streamed strings.Builder
			req := llm.Request{
				Messages: hello,
				OnRetry: func(_ int, wait time.Duration, _ error) {
					retries = append(retries, wait)
					streamed.Reset()
				},
			}
			if tt.stream {
				req.OnDelta = func(d string) { streamed.WriteString(d) }
			}
			start := time.Now()
			resp, err := c.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != tt.want || resp.Attempts != tt.attempts {
				t.Errorf("got %q after %d attempts, want %q after %d", resp.Content, resp.Attempts, tt.want, tt.attempts)
			}
			if tt.stream && streamed.String() != tt.want {
				t.Errorf("streamed since last retry = %q, want %q", streamed.String(), tt.want)
			}
			if len(retries) != tt.attempts-1 {
				t.Errorf("OnRetry called %d times, want %d", len(retries), tt.attempts-1)
			}
			if el := time.Since(start); el < tt.minTime {
				t.Errorf("took %v, want at least %v", el, tt.minTime)
			}
		})
	}
}

func TestFinalFailures(t *testing.T) {
	tests := []struct {
		name     string
		replies  []llmfake.Reply
		kind     llm.Kind
		status   int
		attempts int
		user     string
	}{
		{"500 four times", []llmfake.Reply{{Status: 500}, {Status: 500}, {Status: 500}, {Status: 500}}, llm.KindServer, 500, 4, "having trouble"},
		{"401 is not retried", []llmfake.Reply{{Status: 401, Error: "bad key"}}, llm.KindAuth, 401, 1, "API key"},
		{"400 is not retried", []llmfake.Reply{{Status: 400, Error: "This model's maximum context length is 8192 tokens"}}, llm.KindBadRequest, 400, 1, "/reset"},
		{"long Retry-After is not waited for", []llmfake.Reply{{Status: 429, RetryAfter: "3600"}}, llm.KindRateLimited, 429, 1, "60 minutes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmfake.New(t, llmfake.Script(tt.replies...))
			c := newClient(t, srv, nil)
			_, err := c.Complete(context.Background(), llm.Request{Messages: hello, OnDelta: func(string) {}})
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *llm.Error", err)
			}
			if e.Kind != tt.kind || e.StatusCode != tt.status || e.Attempts != tt.attempts {
				t.Errorf("got kind %v status %d attempts %d, want %v %d %d", e.Kind, e.StatusCode, e.Attempts, tt.kind, tt.status, tt.attempts)
			}
			if !strings.Contains(e.UserMessage(), tt.user) {
				t.Errorf("user message %q lacks %q", e.UserMessage(), tt.user)
			}
			if got := len(srv.Calls()); got != tt.attempts {
				t.Errorf("server saw %d calls, want %d", got, tt.attempts)
			}
		})
	}
}

func TestCancelStopsWaitsAndStreams(t *testing.T) {
	t.Parallel()
	srv := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		if c.N == 1 {
			return llmfake.Reply{Status: 429, RetryAfter: "30"}
		}
		return llmfake.Reply{Chunks: []string{"a", "b", "c"}, ChunkDelay: time.Minute}
	})
	// No silence limit to end the stream for us: only the cancel can.
	c := newClient(t, srv, func(_ *mcpgram.Profile, o *llm.Options) { o.Timeout = 5 * time.Minute })
	for _, stage := range []string{"the Retry-After wait", "the stream"} {
		ctx, cancel := context.WithCancel(context.Background())
		cancelled := make(chan time.Time, 1)
		var once sync.Once
		// Cancel once the call is in the stage, a little into it.
		soon := func() {
			once.Do(func() {
				time.AfterFunc(100*time.Millisecond, func() {
					cancelled <- time.Now()
					cancel()
				})
			})
		}
		_, err := c.Complete(ctx, llm.Request{
			Messages: hello,
			OnRetry:  func(int, time.Duration, error) { soon() },
			OnDelta:  func(string) { soon() },
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", stage, err)
		}
		// A sanity limit, far below the 30s wait and 1-minute chunk gap it
		// must cut short and far above the milliseconds a cancel takes.
		select {
		case at := <-cancelled:
			if el := time.Since(at); el > 10*time.Second {
				t.Errorf("%s: the call returned %v after the cancel", stage, el)
			}
		default:
			t.Errorf("%s: the call returned before it was cancelled", stage)
		}
		cancel()
	}
}

func TestNewValidates(t *testing.T) {
	for _, p := range []mcpgram.Profile{{}, {Model: "m", Temperature: 3}, {Model: "m", MaxTokens: -1}} {
		if _, err := llm.New(p, llm.Options{}); err == nil {
			t.Errorf("New(%+v) succeeded", p)
		}
	}
}

// Profile is the client's, defaults filled in, without the key: what is
// handed a profile (the agent, /model, a log line) never holds the secret.
func TestProfileWithoutKey(t *testing.T) {
	in := mcpgram.Profile{Name: "fast", APIKeyEnv: "FAST_KEY", APIKey: "sk-secret", Model: "m", ToolCalling: mcpgram.ToolCallingNative, Vision: true}
	c, err := llm.New(in, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.BaseURL, want.APIKey = llm.DefaultBaseURL, ""
	if got := c.Profile(); got != want {
		t.Errorf("Profile() = %+v, want %+v", got, want)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	// start comes first: the date, cut to the second, is then at least
	// 500ms after it however long the set-up takes.
	start := time.Now()
	at := start.Add(1500 * time.Millisecond).UTC().Format(http.TimeFormat)
	srv := llmfake.New(t, llmfake.Script(llmfake.Reply{Status: 503, RetryAfter: at}, llmfake.Text("ok")))
	c := newClient(t, srv, nil)
	if _, err := c.Complete(context.Background(), llm.Request{Messages: hello}); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 400*time.Millisecond {
		t.Errorf("retried after %v, want the Retry-After date honoured", el)
	}
}

// Model calls reuse one connection: a stream closed after [DONE] must not
// cost a new TCP (and TLS) handshake per call.
func TestConnectionReuse(t *testing.T) {
	srv := llmfake.New(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("a reply in parts").Split(4) })
	c := newClient(t, srv, nil)
	for _, stream := range []bool{true, true, false, true} {
		req := llm.Request{Messages: hello}
		if stream {
			req.OnDelta = func(string) {}
		}
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	calls := srv.Calls()
	for _, call := range calls[1:] {
		if call.Request.RemoteAddr != calls[0].Request.RemoteAddr {
			t.Fatalf("calls came from %s and %s: connection not reused", calls[0].Request.RemoteAddr, call.Request.RemoteAddr)
		}
	}
}

// Many calls at once keep their connections for the next ones: the
// default client must not drop all but two of them, as net/http's default
// transport would.
func TestConcurrentCallsReuseConnections(t *testing.T) {
	const n = 20
	// Each wave's calls are held until all n are in flight, so each wave
	// needs n connections at once, however slow the machine.
	holds := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	srv := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		r := llmfake.Text("ok").Split(1)
		r.Hold = holds[(c.N-1)/n]
		return r
	})
	c := newClient(t, srv, nil)
	// net/http hands a connection back to the pool after the call has
	// returned; the trace says when it did, and whether the pool took it.
	pooled := make(chan error, 2*n)
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		PutIdleConn: func(err error) { pooled <- err },
	})
	wave := func(w int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				_, err := c.Complete(ctx, llm.Request{Messages: hello, OnDelta: func(string) {}})
				errs <- err
			})
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(srv.Calls()) < (w+1)*n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // polling for the calls to arrive, with a deadline
		}
		close(holds[w])
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	wave(0)
	for i := range n {
		select {
		case err := <-pooled:
			if err != nil {
				t.Fatalf("connection %d not kept for the next calls: %v", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d connections went back to the pool", i, n)
		}
	}
	wave(1)
	first := map[string]bool{}
	calls := srv.Calls()
	for _, call := range calls[:n] {
		first[call.Request.RemoteAddr] = true
	}
	fresh := 0
	for _, call := range calls[n:] {
		if !first[call.Request.RemoteAddr] {
			fresh++
		}
	}
	if fresh > 0 {
		t.Errorf("second wave of %d calls opened %d new connections, want 0", n, fresh)
	}
}

// An endpoint that rejects stream_options still streams, without usage.
func TestStreamOptionsRejected(t *testing.T) {
	srv := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		if c.Request.StreamOptions != nil {
			return llmfake.Reply{Status: 400, Error: "Unrecognized request argument supplied: stream_options"}
		}
		return llmfake.Text("fine").Split(2)
	})
	c := newClient(t, srv, nil)
	for range 2 {
		resp, err := c.Complete(context.Background(), llm.Request{Messages: hello, OnDelta: func(string) {}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content != "fine" {
			t.Errorf("content = %q", resp.Content)
		}
	}
	if n := len(srv.Calls()); n != 3 {
		t.Errorf("server saw %d calls, want 3 (one rejected, then two without the option)", n)
	}
}

// Some endpoints echo the request's Authorization header in their error
// body; the key must not survive into anything the caller may log.
func TestErrorsNeverCarryTheKey(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	echo := "Incorrect API key provided: Authorization: Bearer " + key + " (key " + key + ")"
	for _, tt := range []struct {
		name    string
		replies []llmfake.Reply
	}{
		{"401", []llmfake.Reply{{Status: 401, Error: echo}}},
		{"400", []llmfake.Reply{{Status: 400, Error: echo}}},
		{"500 after retries", []llmfake.Reply{{Status: 500, Error: echo}, {Status: 500, Error: echo}, {Status: 500, Error: echo}, {Status: 500, Error: echo}}},
		{"error inside a stream", []llmfake.Reply{{Content: "x", StreamError: echo}, {Content: "x", StreamError: echo}, {Content: "x", StreamError: echo}, {Content: "x", StreamError: echo}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmfake.New(t, llmfake.Script(tt.replies...))
			c := newClient(t, srv, func(p *mcpgram.Profile, _ *llm.Options) { p.APIKey = key })
			_, err := c.Complete(context.Background(), llm.Request{Messages: hello, OnDelta: func(string) {}})
			assertScrubbed(t, err, key)
		})
	}
	t.Run("non-JSON body", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, "denied for "+r.Header.Get("Authorization"))
		}))
		defer srv.Close()
		c, err := llm.New(mcpgram.Profile{BaseURL: srv.URL, APIKey: key, Model: "m"}, llm.Options{Backoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Complete(context.Background(), llm.Request{Messages: hello})
		assertScrubbed(t, err, key)
	})
}

func assertScrubbed(t *testing.T, err error, key string) {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v, want *llm.Error", err)
	}
	for what, s := range map[string]string{"Error()": err.Error(), "Message": e.Message, "%+v": fmt.Sprintf("%+v", err), "UserMessage": e.UserMessage()} {
		if strings.Contains(s, key) || strings.Contains(s, key[:12]) {
			t.Errorf("%s carries the key: %q", what, s)
		}
	}
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("Error() = %q, want the echoed key shown as [redacted]", err.Error())
	}
}

// An endpoint that reports no usage, plain or streamed, gives a Usage the
// caller knows to estimate.
func TestNoUsageReported(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := llmfake.New(t, llmfake.Script(llmfake.Reply{Content: "hello there", NoUsage: true}))
			c, err := llm.New(mcpgram.Profile{BaseURL: srv.URL(), Model: "fake"}, llm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
			if stream {
				req.OnDelta = func(string) {}
			}
			resp, err := c.Complete(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage.Reported() || resp.Usage != (llm.Usage{}) {
				t.Errorf("usage = %+v (reported %v), want none", resp.Usage, resp.Usage.Reported())
			}
			if stream && !srv.Calls()[0].Request.StreamOptions.IncludeUsage {
				t.Error("include_usage not requested")
			}
		})
	}
}

// A message with images goes as parts: its text, then each image as a
// data URL, as OpenAI's API takes them.
func TestImageParts(t *testing.T) {
	fake := llmfake.New(t, llmfake.Script(llmfake.Text("A cat.")))
	c, err := llm.New(mcpgram.Profile{BaseURL: fake.URL(), APIKey: "sk-test", Model: "m"}, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "What is this?", Images: []llm.Image{{MIMEType: "image/jpeg", Data: []byte{0xff, 0xd8}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	m := fake.Calls()[0].Request.Messages[0]
	if m.Content != "What is this?" || len(m.Images) != 1 || m.Images[0] != "data:image/jpeg;base64,/9g=" {
		t.Errorf("sent %+v", m)
	}
}
