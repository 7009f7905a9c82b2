package keylock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpgram/mcpgram/internal/keylock"
)

// One holder per key at a time, and a key held does not hold up another;
// once nobody holds or waits for a key, it is forgotten.
func TestLocks(t *testing.T) {
	var l keylock.Locks
	ctx := t.Context()
	unlockB, err := l.Lock(ctx, "b") // held throughout: a's holders never wait for it
	if err != nil {
		t.Fatal(err)
	}
	var in atomic.Int32
	var twice atomic.Bool
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				unlock, err := l.Lock(ctx, "a")
				if err != nil {
					t.Error(err)
					return
				}
				if in.Add(1) != 1 {
					twice.Store(true)
				}
				in.Add(-1)
				unlock()
			}
		})
	}
	wg.Wait()
	if twice.Load() {
		t.Error("a held by two at once")
	}
	if n := l.Len(); n != 1 {
		t.Errorf("Len = %d with b held, want 1", n)
	}
	unlockB()
	if n := l.Len(); n != 0 {
		t.Errorf("Len = %d once every lock is let go, want 0", n)
	}
}

// A waiter whose context ends gives up, and leaves no trace.
func TestLockCancelled(t *testing.T) {
	var l keylock.Locks
	unlock, err := l.Lock(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.Lock(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock of a held key, cancelled: %v, want context.Canceled", err)
	}
	unlock()
	if n := l.Len(); n != 0 {
		t.Errorf("Len = %d after the waiter gave up and the holder let go, want 0", n)
	}
}
