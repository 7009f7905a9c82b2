package tasks

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// A result is a worker's word on an entry it polled: keep it, due again
// at its due time, or drop it (it ended, or another instance ended it).
type result struct {
	e    *entry
	keep bool
}

// run keeps the heap and hands due entries to the workers, never more
// than they can take, so that neither side ever waits on the other.
func (p *Poller) run(ctx context.Context) {
	work := make(chan *entry)
	results := make(chan result, p.opts.Workers)
	var wg sync.WaitGroup
	for range p.opts.Workers {
		wg.Go(func() {
			for e := range work {
				results <- result{e, p.poll(ctx, e)}
			}
		})
	}
	defer func() {
		close(work)
		wg.Wait()
	}()

	h := &dueHeap{}
	known := map[int64]bool{}
	follow := func(t store.Task) {
		if known[t.ID] || !t.Open() {
			return
		}
		known[t.ID] = true
		heap.Push(h, &entry{task: t, due: t.NextPoll, interval: p.opts.MinInterval})
		p.following.Add(1)
	}
	started := p.claim(ctx, follow, true)
	tick := p.nextTick(started)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	inflight := 0
	for {
		now := p.opts.Now()
		if !now.Before(tick) {
			if started {
				p.renew(ctx, known)
			}
			started = p.claim(ctx, follow, !started) || started
			tick = p.nextTick(started)
			p.ticks.Add(1)
		}
		for inflight < p.opts.Workers && h.Len() > 0 && !(*h)[0].due.After(now) {
			work <- heap.Pop(h).(*entry)
			inflight++
		}
		timer.Reset(p.wait(h, inflight, tick, now))
		select {
		case <-ctx.Done():
			p.release(ctx, known)
			return
		case t := <-p.add:
			follow(t)
		case r := <-results:
			inflight--
			if r.keep {
				heap.Push(h, r.e)
			} else {
				delete(known, r.e.task.ID)
				p.following.Add(-1)
			}
		case <-timer.C:
		}
	}
}

// wait is how long the loop may sleep: until the soonest entry is due,
// or the leases' next tick.
func (p *Poller) wait(h *dueHeap, inflight int, tick, now time.Time) time.Duration {
	d := max(tick.Sub(now), 0)
	if h.Len() > 0 && inflight < p.opts.Workers {
		d = min(d, max((*h)[0].due.Sub(now), 0))
	}
	return d
}
