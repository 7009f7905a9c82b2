package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// A lane is the ordered queue of one chat. Its worker goroutine lives
// while the lane has work and is not parked: a parked lane waits, without
// a goroutine, for the next read of the inbox (see RunAgain, unpark).
type lane struct {
	name   string
	jobs   []queued
	active bool
	parked bool
	// parkedIn is the pass of the inbox's reads that was the last to
	// begin when the lane parked (see unpark).
	parkedIn int64
}

type queued struct {
	id  int64
	run func(context.Context)
	// runs counts the times the item ran and asked to run again.
	runs int
}

func (q *Queue) route(it store.InboxItem) {
	job, ok := q.routeSafely(it)
	if !ok {
		q.markDone(it.UpdateID)
		return
	}
	switch {
	case job.Run == nil:
		q.markDone(it.UpdateID)
	case job.Lane == "":
		q.Go(func(ctx context.Context) { q.runJob(ctx, queued{id: it.UpdateID, run: job.Run}, false) })
	default:
		q.enqueue(job.Lane, queued{id: it.UpdateID, run: job.Run})
	}
}

// routeSafely is Route, with a panic logged and reported as false: the
// item would panic again at every start, so it is marked done.
func (q *Queue) routeSafely(it store.InboxItem) (job Job, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			q.logger.Error("panic routing an item; it is marked done", "update_id", it.UpdateID, "panic", fmt.Sprint(p))
			ok = false
		}
	}()
	return q.cfg.Route(it), true
}

func (q *Queue) enqueue(name string, j queued) {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.lanes[name]
	if l == nil {
		l = &lane{name: name}
		q.lanes[name] = l
	}
	l.jobs = append(l.jobs, j)
	if !l.active && !l.parked {
		l.active = true
		q.jobs.Add(1)
		go q.runLane(l)
	}
}

// runLane runs a lane's jobs in order, holding a slot while it runs one.
func (q *Queue) runLane(l *lane) {
	defer q.jobs.Done()
	for {
		j, ok := q.next(l)
		if !ok {
			return
		}
		slot := false
		select {
		case q.slots <- struct{}{}:
			slot = true
		case <-q.work.Done():
		}
		if !q.claim(l, slot) {
			return // cut short or stopping before it ran: it stays queued in the inbox
		}
		again := q.runJob(q.work, j, true)
		<-q.slots
		q.setCounts(0, -1)
		if again {
			q.park(l, j)
			return
		}
		if q.work.Err() != nil {
			return
		}
	}
}

// park puts j back at the head of its lane, which waits for the next read
// of the inbox (see unpark).
func (q *Queue) park(l *lane, j queued) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j.runs++
	l.jobs = append([]queued{j}, l.jobs...)
	l.active, l.parked, l.parkedIn = false, true, q.passes
}

// unpark starts the lanes parked before pass began, after pass read the
// whole inbox: the database answers again, and, over a shared inbox, the
// read has dropped the items of chats no longer this instance's
// (dropLost). A lane parked while the pass was under way waits for the
// next one: the pass may have read before the database went away.
func (q *Queue) unpark(pass int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopping {
		return
	}
	for name, l := range q.lanes {
		switch {
		case !l.parked, l.parkedIn >= pass:
		case len(l.jobs) == 0:
			delete(q.lanes, name)
		default:
			l.parked, l.active = false, true
			q.jobs.Add(1)
			go q.runLane(l)
		}
	}
}

// fresh reports whether this instance's leases may be trusted to be its
// own still: over a shared inbox, the last successful read began less
// than two thirds of a lease ago (reads come every third of one).
// Called with q.mu held.
func (q *Queue) fresh() bool {
	return q.claimer == nil || time.Since(q.claimed) < q.cfg.LeaseFor*2/3
}

// claim turns a waiting lane that got a slot into a running one. When it
// got none (cut short), or the queue is stopping, the slot goes back and
// the lane retires.
func (q *Queue) claim(l *lane, slot bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting--
	if !slot || q.stopping {
		l.active = false
		if slot {
			<-q.slots
		}
		return false
	}
	q.running++
	return true
}

// next takes the lane's next job, or retires the lane when it has none or
// the queue is stopping; the items of its jobs then stay queued in the inbox.
func (q *Queue) next(l *lane) (queued, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(l.jobs) == 0 || q.stopping {
		l.active = false
		if len(l.jobs) == 0 {
			delete(q.lanes, l.name)
		}
		return queued{}, false
	}
	if !q.fresh() {
		// The chat may be another instance's by now: wait for a read.
		l.active, l.parked, l.parkedIn = false, true, q.passes
		return queued{}, false
	}
	j := l.jobs[0]
	l.jobs = l.jobs[1:]
	q.waiting++
	return j, true
}

// setCounts adjusts the lane counts.
func (q *Queue) setCounts(waiting, running int) {
	q.mu.Lock()
	q.waiting += waiting
	q.running += running
	q.mu.Unlock()
}

// runJob runs j and marks its item done, unless it was cut short or asked
// to run again (again; only in a lane).
func (q *Queue) runJob(ctx context.Context, j queued, lane bool) (again bool) {
	defer func() {
		if p := recover(); p != nil {
			q.logger.Error("panic in a job; the item is marked done", "update_id", j.id, "panic", fmt.Sprint(p))
			q.markDone(j.id)
			again = false
		}
	}()
	st := &jobState{id: j.id, attempt: j.runs + 1}
	j.run(context.WithValue(ctx, jobKey{}, st))
	if ctx.Err() != nil {
		return false // cut short: it runs again after the restart
	}
	if st.again.Load() && lane {
		q.logger.Info("an item runs again once the inbox can be read", "update_id", j.id, "attempt", st.attempt)
		return true
	}
	q.markDone(j.id)
	return false
}
