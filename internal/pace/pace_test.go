package pace_test

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpgram/mcpgram/internal/pace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The first wake flushes at once; a flood of wakes within an interval
// costs one more flush after it, not one each; Close ends the loop.
func TestLoop(t *testing.T) {
	flushed := make(chan struct{}, 100)
	var n atomic.Int64
	l := pace.Start(time.Hour, func() { n.Add(1); flushed <- struct{}{} })
	l.Wake()
	<-flushed
	for range 1000 {
		l.Wake()
	}
	l.Close()
	// Within the hour nothing more ran; the wakes were one pending flush,
	// which Close drops.
	if got := n.Load(); got != 1 {
		t.Errorf("flushes = %d, want 1 within the interval", got)
	}
}

// A short interval lets the pending flush run once it has passed.
func TestLoopAfterInterval(t *testing.T) {
	flushed := make(chan struct{}, 100)
	l := pace.Start(time.Millisecond, func() { flushed <- struct{}{} })
	defer l.Close()
	l.Wake()
	<-flushed
	l.Wake()
	<-flushed // a second flush comes, after the interval
}
