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
	loaded := p.load(ctx, follow)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	inflight := 0
	for {
		now := p.opts.Now()
		for inflight < p.opts.Workers && h.Len() > 0 && !(*h)[0].due.After(now) {
			work <- heap.Pop(h).(*entry)
			inflight++
		}
		timer.Reset(p.wait(h, inflight, loaded, now))
		select {
		case <-ctx.Done():
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
			if !loaded {
				loaded = p.load(ctx, follow)
			}
		}
	}
}

// wait is how long the loop may sleep: until the soonest entry is due,
// or, while the store's tasks are not loaded, until loading is tried
// again.
func (p *Poller) wait(h *dueHeap, inflight int, loaded bool, now time.Time) time.Duration {
	d := time.Hour
	if !loaded {
		d = p.opts.MinInterval
	}
	if h.Len() > 0 && inflight < p.opts.Workers {
		d = min(d, max((*h)[0].due.Sub(now), 0))
	}
	return d
}

// load follows the store's open tasks; false if it could not read them.
func (p *Poller) load(ctx context.Context, follow func(store.Task)) bool {
	open, err := p.st.OpenTasks(ctx, 0)
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("read the open tasks; trying again", "err", err)
		}
		return false
	}
	for _, t := range open {
		follow(t)
	}
	if len(open) > 0 {
		p.log.Info("following the open tasks", "tasks", len(open))
	}
	return true
}
