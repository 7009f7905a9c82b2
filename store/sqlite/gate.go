package sqlite

import (
	"context"
	"slices"
	"sync"
)

// A gate lets one write at a time through to the writer connection, in
// arrival order except that urgent writes go ahead of every queued one.
//
// The poller's InboxPut is urgent: it must finish before the next batch of
// updates is fetched, so behind a queue of turns' writes (each handed the
// connection in turn by the scheduler, slow when the CPU is busy) it
// would hold up every new message.
type gate struct {
	mu     sync.Mutex
	busy   bool
	urgent []chan struct{}
	queued []chan struct{}
}

// enter waits for the gate, or for ctx to end. After a nil error the
// caller must call leave.
func (g *gate) enter(ctx context.Context, urgent bool) error {
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if urgent {
		g.urgent = append(g.urgent, ch)
	} else {
		g.queued = append(g.queued, ch)
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(g.urgent, ch); i >= 0 {
		g.urgent = slices.Delete(g.urgent, i, i+1)
		g.mu.Unlock()
		return ctx.Err()
	}
	if i := slices.Index(g.queued, ch); i >= 0 {
		g.queued = slices.Delete(g.queued, i, i+1)
		g.mu.Unlock()
		return ctx.Err()
	}
	g.mu.Unlock()
	// Handed the gate just as ctx ended: pass it on.
	g.leave()
	return ctx.Err()
}

// tryEnter takes the gate when nobody holds it, without waiting; after
// true the caller must call leave.
func (g *gate) tryEnter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.busy {
		return false
	}
	g.busy = true
	return true
}

// leave hands the gate to the next waiter, urgent ones first.
func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	var next chan struct{}
	switch {
	case len(g.urgent) > 0:
		next = g.urgent[0]
		g.urgent = slices.Delete(g.urgent, 0, 1)
	case len(g.queued) > 0:
		next = g.queued[0]
		g.queued = slices.Delete(g.queued, 0, 1)
	default:
		g.busy = false
		return
	}
	close(next) // the gate stays busy: it now belongs to next's owner
}
