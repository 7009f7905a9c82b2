package tasks

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/mcpgram/mcpgram"

	"github.com/mcpgram/mcpgram/store"
)

// nextTick is when the leases are next renewed and the lapsed ones taken
// over: a RenewEvery on, or, while the start's claim has not gone
// through, a MinInterval on, when it is tried again.
func (p *Poller) nextTick(started bool) time.Time {
	if !started {
		return p.opts.Now().Add(p.opts.MinInterval)
	}
	return p.opts.Now().Add(p.opts.RenewEvery)
}

// claim takes over the tasks whose lease lapsed, and those nobody claimed
// within a lease of being stored, and follows them; at start, alone on
// its store (see Options.Shared), every open task. It reports whether
// the store answered.
func (p *Poller) claim(ctx context.Context, follow func(store.Task), start bool) bool {
	now := p.opts.Now()
	lapsed, unowned := now, now.Add(-p.opts.Lease)
	if start && !p.opts.Shared {
		lapsed, unowned = endOfTime, endOfTime
	}
	ts, err := p.st.ClaimTasks(ctx, p.opts.Owner, lapsed, unowned, now.Add(p.opts.Lease))
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("take over the tasks nobody polls; trying again", "err", err)
		}
		return false
	}
	for _, t := range ts {
		follow(t)
		// Its question was asked by an instance gone, or before a
		// restart: it is asked again now, not only at its next change.
		if t.Status == string(mcpgram.TaskInputRequired) && p.opts.Changed != nil {
			p.opts.Changed(t)
		}
	}
	if len(ts) > 0 {
		p.log.Info("following the tasks nobody polled", "tasks", len(ts), "start", start)
	}
	return true
}

// endOfTime is later than any lease.
var endOfTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// renew extends the leases of the tasks followed and of the in-process
// calls running, in one write: a task another instance took meanwhile is
// left to it, and ends once, whoever polls it.
func (p *Poller) renew(ctx context.Context, known map[int64]bool) {
	ids := append(slices.Collect(maps.Keys(known)), p.localIDs()...)
	if len(ids) == 0 {
		return
	}
	n, err := p.st.RenewTasks(ctx, p.opts.Owner, ids, p.opts.Now().Add(p.opts.Lease))
	switch {
	case err != nil && ctx.Err() == nil:
		p.log.Warn("renew the tasks' leases; trying again at the next tick", "err", err)
	case err == nil && n < int64(len(ids)):
		p.log.Debug("renewed fewer task leases than followed; another instance took some, or they ended", "renewed", n, "followed", len(ids))
	}
	p.renewals.Add(1)
}

// releaseWait bounds the release of the leases at Close.
const releaseWait = 5 * time.Second

// release hands the leases of the tasks followed back at Close, so that
// another instance takes them at its next tick rather than a lease on:
// their leases are renewed to have lapsed already. An instance killed
// releases nothing, and its leases lapse.
func (p *Poller) release(ctx context.Context, known map[int64]bool) {
	if len(known) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseWait)
	defer cancel()
	ids := slices.Collect(maps.Keys(known))
	if _, err := p.st.RenewTasks(ctx, p.opts.Owner, ids, p.opts.Now().Add(-time.Millisecond)); err != nil {
		p.log.Warn("hand the tasks' leases back; they lapse in a lease", "tasks", len(ids), "err", err)
	}
}
