package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/form"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A scriptedElicitor answers with answer (accept with content, by
// default), or waits for release first when hold is set, and records what
// it was asked.
type scriptedElicitor struct {
	mu     sync.Mutex
	asked  []mcpgram.Elicitation
	answer func(mcpgram.Elicitation) mcpgram.ElicitResult
	hold   chan struct{} // closed to let held questions be answered
	held   chan mcpgram.Elicitation
}

func (s *scriptedElicitor) Elicit(ctx context.Context, e mcpgram.Elicitation) (mcpgram.ElicitResult, error) {
	s.mu.Lock()
	s.asked = append(s.asked, e)
	s.mu.Unlock()
	if s.held != nil {
		s.held <- e
	}
	if s.hold != nil {
		select {
		case <-s.hold:
		case <-ctx.Done():
			return mcpgram.ElicitResult{}, ctx.Err()
		}
	}
	if s.answer == nil {
		return mcpgram.ElicitResult{Action: mcpgram.ElicitAccept, Content: map[string]any{"answer": "yes"}}, nil
	}
	return s.answer(e), nil
}

func (s *scriptedElicitor) questions() []mcpgram.Elicitation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mcpgram.Elicitation(nil), s.asked...)
}

func elicitHub(t *testing.T, e mcpgram.Elicitor, legacy bool, extra map[string]any) *hub.Hub {
	t.Helper()
	entry := testenv.FeaturesEntry(t, legacy)
	for k, v := range extra {
		entry[k] = v
	}
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{"f": entry})
	h := testenv.StartAsking(t, path, fastOptions(), hub.Askers{Elicitor: e})
	testenv.Running(t, h)
	return h
}

var eras = []struct {
	name   string
	legacy bool
}{{"2026-07-28", false}, {"2025-11-25", true}}

// Askers are given before the hub starts, for a server learns at its
// start whether the hub can ask: after Start, AskThrough is an error.
func TestAskThroughAfterStart(t *testing.T) {
	t.Parallel()
	path := testenv.WriteSettings(t, t.TempDir(), map[string]any{})
	h := testenv.StartHub(t, path, fastOptions())
	if err := h.AskThrough(hub.Askers{Elicitor: &scriptedElicitor{}}); err == nil {
		t.Error("AskThrough after Start = nil, want an error")
	}
}

// What a server asks reaches the Elicitor with the server, tool, caller,
// message and schema; the server gets exactly the answer.
func TestElicitForm(t *testing.T) {
	answers := []struct {
		name   string
		result mcpgram.ElicitResult
		want   string
	}{
		{"accept", mcpgram.ElicitResult{Action: mcpgram.ElicitAccept, Content: map[string]any{"party": 4, "date": "2026-12-24", "seating": "indoor"}},
			`{"action":"accept","content":{"date":"2026-12-24","party":4,"seating":"indoor"}}`},
		{"decline", mcpgram.ElicitResult{Action: mcpgram.ElicitDecline, Content: map[string]any{"party": 4}}, `{"action":"decline","content":null}`},
		{"cancel", mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, `{"action":"cancel","content":null}`},
	}
	for _, era := range eras {
		for _, a := range answers {
			t.Run(era.name+"/"+a.name, func(t *testing.T) {
				e := &scriptedElicitor{answer: func(mcpgram.Elicitation) mcpgram.ElicitResult { return a.result }}
				h := elicitHub(t, e, era.legacy, nil)
				if got := call(t, h, "f", "book", nil).Text(); got != a.want {
					t.Errorf("the server got %s, want %s", got, a.want)
				}
				qs := e.questions()
				if len(qs) != 1 {
					t.Fatalf("asked %d times, want 1", len(qs))
				}
				q := qs[0]
				if q.Caller != local || q.Server != "f" || q.Tool != "book" || q.Mode != mcpgram.ElicitForm ||
					!strings.HasPrefix(q.Message, "Book a table") {
					t.Errorf("asked %+v", q)
				}
				// The fields come in the server's order, which decoding into
				// a map would lose.
				f, err := form.Parse(q.Schema)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, fd := range f.Fields {
					names = append(names, fd.Name)
				}
				if got, want := strings.Join(names, " "), "date party seating vegetarian extras name email"; got != want {
					t.Errorf("fields %s, want %s", got, want)
				}
			})
		}
	}
}

// A URL-mode question carries the URL and its id.
func TestElicitURL(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			e := &scriptedElicitor{answer: func(mcpgram.Elicitation) mcpgram.ElicitResult {
				return mcpgram.ElicitResult{Action: mcpgram.ElicitAccept}
			}}
			h := elicitHub(t, e, era.legacy, nil)
			got := call(t, h, "f", "visit", map[string]any{"url": "https://example.com/login?x=1"}).Text()
			if want := `{"action":"accept","content":null}`; got != want {
				t.Errorf("the server got %s, want %s", got, want)
			}
			q := e.questions()[0]
			if q.Mode != mcpgram.ElicitURL || q.URL != "https://example.com/login?x=1" || q.ID != "visit-1" || q.Tool != "visit" {
				t.Errorf("asked %+v", q)
			}
		})
	}
}

// A server that asks in a loop is stopped after MaxElicitations questions
// to the user: a 2026-07-28 call fails, a 2025 server gets "cancel" for
// the rest without the user being asked.
func TestElicitLoop(t *testing.T) {
	t.Run("2026-07-28", func(t *testing.T) {
		e := &scriptedElicitor{}
		h := elicitHub(t, e, false, nil)
		_, err := h.CallTool(context.Background(), local, "f", "loop", map[string]any{"n": 50})
		if err == nil || !strings.Contains(err.Error(), "more than 10 times") {
			t.Errorf("err = %v, want the loop stopped", err)
		}
		if n := len(e.questions()); n != mcpgram.MaxElicitations {
			t.Errorf("the user was asked %d times, want %d", n, mcpgram.MaxElicitations)
		}
	})
	t.Run("2025-11-25", func(t *testing.T) {
		e := &scriptedElicitor{}
		h := elicitHub(t, e, true, nil)
		var got struct {
			Asked   int      `json:"asked"`
			Actions []string `json:"actions"`
		}
		if err := json.Unmarshal([]byte(call(t, h, "f", "loop", map[string]any{"n": 15}).Text()), &got); err != nil {
			t.Fatal(err)
		}
		want := strings.Repeat("accept ", mcpgram.MaxElicitations) + strings.Repeat("cancel ", 15-mcpgram.MaxElicitations)
		if strings.Join(got.Actions, " ")+" " != want {
			t.Errorf("the server got %v, want %s", got.Actions, want)
		}
		if n := len(e.questions()); n != mcpgram.MaxElicitations {
			t.Errorf("the user was asked %d times, want %d", n, mcpgram.MaxElicitations)
		}
	})
}

// The user's time does not count against the server's timeout.
func TestElicitTimeoutPaused(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			e := &scriptedElicitor{hold: make(chan struct{})}
			h := elicitHub(t, e, era.legacy, map[string]any{"timeout": 1})
			time.AfterFunc(3*time.Second, func() { close(e.hold) }) // the user takes three timeouts to answer
			res, err := h.CallTool(context.Background(), local, "f", "ask", nil)
			if err != nil {
				t.Fatalf("a call whose user took longer than the timeout: %v", err)
			}
			if got := res.Text(); !strings.Contains(got, `"accept"`) {
				t.Errorf("the server got %s", got)
			}
		})
	}
}

// A cancelled call ends the question: the Elicitor's context ends.
func TestElicitCallCancelled(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			e := &scriptedElicitor{hold: make(chan struct{}), held: make(chan mcpgram.Elicitation, 1)}
			h := elicitHub(t, e, era.legacy, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := h.CallTool(ctx, local, "f", "ask", nil)
				done <- err
			}()
			<-e.held
			cancel()
			if err := <-done; err == nil {
				t.Error("a cancelled call returned no error")
			}
		})
	}
}

// A 2025 server over stdio names no call in its elicitation/create: the
// hub asks the caller of the calls in flight when they are all one
// person's, and nobody (answering "cancel") when they are several
// people's, as whom to ask cannot be told.
func TestElicitLegacyAttribution(t *testing.T) {
	e := &scriptedElicitor{hold: make(chan struct{}), held: make(chan mcpgram.Elicitation, 4)}
	h := elicitHub(t, e, true, nil)
	ctx := context.Background()
	first := make(chan string, 1)
	go func() {
		res, err := h.CallTool(ctx, local, "f", "ask", nil)
		if err != nil {
			first <- err.Error()
			return
		}
		first <- res.Text()
	}()
	if q := <-e.held; q.Caller != local || q.Tool != "ask" {
		t.Errorf("first question %+v", q)
	}
	other := mcpgram.Caller{UserID: "7", ChatID: "7"}
	res, err := h.CallTool(ctx, other, "f", "ask", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Text(), `{"action":"cancel","content":null}`; got != want {
		t.Errorf("with another person's call in flight the server got %s, want %s", got, want)
	}
	close(e.hold)
	if got := <-first; !strings.Contains(got, `"accept"`) {
		t.Errorf("the first call got %s", got)
	}
	if n := len(e.questions()); n != 1 {
		t.Errorf("asked %d times, want 1: the second question must reach nobody", n)
	}
}

// Without an Elicitor a server that asks anyway gets "cancel".
func TestElicitNobodyToAsk(t *testing.T) {
	h := elicitHub(t, nil, false, nil)
	if got, want := call(t, h, "f", "ask", nil).Text(), `{"action":"cancel","content":null}`; got != want {
		t.Errorf("the server got %s, want %s", got, want)
	}
}
