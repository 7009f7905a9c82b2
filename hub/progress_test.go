package hub_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub"
)

// progressLog records the progress a call reports.
type progressLog struct {
	mu   sync.Mutex
	seen []mcpgram.Progress
	// first is closed at the first report.
	first chan struct{}
	once  sync.Once
}

// stopMidway runs do with a context that carries a progress log,
// cancels that context at the first report (the request is running), and
// checks that do ends as cancelled.
func stopMidway(t *testing.T, do func(ctx context.Context) error) {
	t.Helper()
	log := newProgressLog()
	ctx, cancel := context.WithCancel(mcpgram.WithProgress(context.Background(), log.add))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- do(ctx) }()
	<-log.first
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// awaitCancelled asks the features server until it has counted one
// cancellation; any other count than 0 or 1 fails.
func awaitCancelled(t *testing.T, h *hub.Hub, caller mcpgram.Caller) {
	t.Helper()
	for {
		res, err := h.CallTool(context.Background(), caller, "f", "cancelled", nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Text(), `"cancelled":1`) {
			return
		}
		if !strings.Contains(res.Text(), `"cancelled":0`) {
			t.Fatalf("got %q", res.Text())
		}
	}
}

func newProgressLog() *progressLog { return &progressLog{first: make(chan struct{})} }

func (l *progressLog) add(p mcpgram.Progress) {
	l.mu.Lock()
	l.seen = append(l.seen, p)
	l.mu.Unlock()
	l.once.Do(func() { close(l.first) })
}

func (l *progressLog) all() []mcpgram.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]mcpgram.Progress(nil), l.seen...)
}

// A tool call carries a progress token; what the server reports under it
// reaches the call's ProgressFunc, in order, on either revision.
func TestProgressReachesTheCall(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			h := elicitHub(t, nil, era.legacy, nil)
			log := newProgressLog()
			ctx := mcpgram.WithProgress(context.Background(), log.add)
			res, err := h.CallTool(ctx, mcpgram.Caller{UserID: "1", ChatID: "1"}, "f", "index",
				map[string]any{"count": 3, "total": 300, "message": "indexing\nfiles " + strings.Repeat("x", 500)})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text(), "3 progress notifications sent") {
				t.Fatalf("the server saw no progress token: %q", res.Text())
			}
			// The notifications precede the result on the one stream.
			got := log.all()
			if len(got) != 3 {
				t.Fatalf("got %d reports, want 3: %+v", len(got), got)
			}
			for i, p := range got {
				if p.Progress != float64(i+1) || p.Total != 300 {
					t.Errorf("report %d = %+v, want %d of 300", i, p, i+1)
				}
				if strings.Contains(p.Message, "\n") || len(p.Message) > mcpgram.MaxProgressMessage || !strings.HasPrefix(p.Message, "indexing files x") {
					t.Errorf("message %q: want one line of at most %d bytes", p.Message, mcpgram.MaxProgressMessage)
				}
			}
		})
	}
}

// A call made without a ProgressFunc still works, and a flood of reports
// costs the caller nothing but its function's calls.
func TestProgressFlood(t *testing.T) {
	h := elicitHub(t, nil, false, nil)
	caller := mcpgram.Caller{UserID: "1", ChatID: "1"}
	if _, err := h.CallTool(context.Background(), caller, "f", "index", map[string]any{"flood": 1000}); err != nil {
		t.Fatal(err)
	}
	var n int
	var mu sync.Mutex
	ctx := mcpgram.WithProgress(context.Background(), func(mcpgram.Progress) { mu.Lock(); n++; mu.Unlock() })
	if _, err := h.CallTool(ctx, caller, "f", "index", map[string]any{"flood": 1000}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 1003 {
		t.Errorf("got %d reports, want 1003", n)
	}
}

// Cancelling a call's context cancels it on the server
// (notifications/cancelled over stdio), which stays usable.
func TestCancelReachesTheServer(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			h := elicitHub(t, nil, era.legacy, nil)
			caller := mcpgram.Caller{UserID: "1", ChatID: "1"}
			stopMidway(t, func(ctx context.Context) error {
				_, err := h.CallTool(ctx, caller, "f", "wait", nil)
				return err
			})
			// The server counts the cancellation before it can answer
			// the next request on its one stdin.
			awaitCancelled(t, h, caller)
		})
	}
}

// A resource read carries a progress token too: what the server reports
// under it reaches the read's ProgressFunc, in order, on either revision,
// and cancelling the read's context cancels it on the server.
func TestReadProgressAndCancel(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			h := elicitHub(t, nil, era.legacy, nil)
			caller := mcpgram.Caller{UserID: "1", ChatID: "1"}
			log := newProgressLog()
			res, err := h.ReadResource(mcpgram.WithProgress(context.Background(), log.add), caller, "f", "features://slow/steps")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text(), "3 progress notifications sent") {
				t.Fatalf("the server saw no progress token: %q", res.Text())
			}
			got := log.all()
			if len(got) != 3 {
				t.Fatalf("got %d reports, want 3: %+v", len(got), got)
			}
			for i, p := range got {
				if p.Progress != float64(i+1) || p.Total != 3 || p.Message != "reading" {
					t.Errorf("report %d = %+v, want %d of 3, reading", i, p, i+1)
				}
			}

			stopMidway(t, func(ctx context.Context) error {
				_, err := h.ReadResource(ctx, caller, "f", "features://slow/wait")
				return err
			})
			awaitCancelled(t, h, caller)
		})
	}
}
