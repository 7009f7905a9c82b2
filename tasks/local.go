// In-process calls: a plain tool call (its server runs no task) that kept
// its chat waiting too long goes on in the process that started it. It is
// kept in the store as a task whose handle is this process's own (see
// LocalHandle), so that /tasks lists it, its card's Stop stops it, and its
// end is stored and delivered as a task's is; the Poller that adopted it
// owns it from then on, and holds its lease while it runs. Nothing
// outlives the process: whichever poller takes the row over once that
// lease lapses (a restart's, or another instance's) finds it open and
// tells its chat that the call was cut short; while the lease lives, the
// call is left to the instance that runs it.

package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// EndInterrupted: the bot stopped or restarted while the in-process call
// ran, which cut it short.
const EndInterrupted = "interrupted"

// Plain words for the ends of in-process calls.
const (
	msgRestarted    = "The bot restarted while this call ran in the background, which cut it short: its result is lost."
	msgShutdown     = "The bot stopped while this call ran in the background, which cut it short: its result is lost."
	msgLocalStopped = "The call was stopped at the user's request."
)

// Why the poller cancelled an in-process call.
var (
	errStopped  = errors.New("stopped at a Stop button")
	errShutdown = errors.New("the bot is stopping")
)

// localPrefix starts the handle of an in-process call. No server's task
// id holds a space (the hub refuses one that does), so no server's task
// is ever taken for one, nor one of these sent to a server.
const localPrefix = "in-process "

// process names this process in the handles of its in-process calls;
// seq numbers them.
var (
	process = newProcessName()
	seq     atomic.Int64
)

func newProcessName() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// LocalHandle returns the handle of a new in-process call of this
// process, never the same twice.
func LocalHandle() string {
	return localPrefix + process + " " + strconv.FormatInt(seq.Add(1), 10)
}

// Local reports whether t is an in-process call, of any process.
func Local(t store.Task) bool { return strings.HasPrefix(t.Handle, localPrefix) }

// ours reports whether t is an in-process call of this process.
func ours(t store.Task) bool { return strings.HasPrefix(t.Handle, localPrefix+process+" ") }

// locals are the in-process calls a Poller runs: each one's cancel, and
// why the poller cancelled it (nil while it did not).
type locals struct {
	mu     sync.Mutex
	calls  map[int64]*localCall
	closed bool
	wg     sync.WaitGroup
}

type localCall struct {
	cancel context.CancelCauseFunc
	why    error
}

// Adopt takes over in-process call t, stored with a LocalHandle: wait
// waits for its end, and cancel cuts it short (with a cause; the hub then
// tells the server). Its end is stored and handed to Finished as a task's
// is; Stop cancels it at its user's request, and Close at the bot's stop,
// which its chat is told. Adopted after Close, it is cancelled at once.
func (p *Poller) Adopt(ctx context.Context, t store.Task, cancel context.CancelCauseFunc, wait func() (*mcpgram.Result, error)) {
	ctx = context.WithoutCancel(ctx)
	now := p.opts.Now()
	if _, err := p.st.ClaimTask(ctx, t.ID, p.opts.Owner, now, now.Add(p.opts.Lease)); err != nil {
		// Unclaimed, the row is taken for lost a lease after it was
		// stored, and its end here is then refused as a second one.
		p.log.Error("claim a call in the background", "task", t.ID, "err", err)
	}
	c := &localCall{cancel: cancel}
	p.local.mu.Lock()
	if p.local.closed {
		p.local.mu.Unlock()
		c.why = errShutdown
		cancel(errShutdown)
		p.endLocal(ctx, t, c, wait)
		return
	}
	if p.local.calls == nil {
		p.local.calls = map[int64]*localCall{}
	}
	p.local.calls[t.ID] = c
	p.local.wg.Add(1)
	p.local.mu.Unlock()
	go func() {
		defer p.local.wg.Done()
		p.endLocal(ctx, t, c, wait)
	}()
}

// endLocal waits for in-process call t to end, and stores how it ended.
func (p *Poller) endLocal(ctx context.Context, t store.Task, c *localCall, wait func() (*mcpgram.Result, error)) {
	res, err := wait()
	p.local.mu.Lock()
	delete(p.local.calls, t.ID)
	why := c.why
	p.local.mu.Unlock()
	var o Outcome
	switch {
	case err == nil && res != nil:
		// A result that came first stands, whatever cancelled it after.
		o = newOutcome(EndCompleted, res.Text(), res.IsError)
	case errors.Is(why, errStopped):
		o = newOutcome(EndCancelled, msgLocalStopped, false)
	case errors.Is(why, errShutdown):
		p.log.Warn("a call in the background was cut short by the stop", "task", t.ID, "server", t.Server, "tool", t.Tool)
		o = newOutcome(EndInterrupted, msgShutdown, false)
	case err != nil:
		o = newOutcome(EndFailed, err.Error(), true)
	default:
		o = newOutcome(EndCompleted, "", false)
	}
	if p.finish(ctx, &entry{task: t}, o) {
		// Still open: the next start tells its chat that it was cut short.
		p.log.Error("store how a call in the background ended; its chat is told at the next start that it was lost", "task", t.ID)
	}
}

// Stop cancels the in-process call of task id at its user's request, and
// reports whether this process runs it. Its end is stored as cancelled,
// unless its result came first.
func (p *Poller) Stop(id int64) bool {
	p.local.mu.Lock()
	defer p.local.mu.Unlock()
	c, ok := p.local.calls[id]
	if ok && c.why == nil {
		c.why = errStopped
		c.cancel(errStopped)
	}
	return ok
}

// localIDs are the ids of the in-process calls running.
func (p *Poller) localIDs() []int64 {
	p.local.mu.Lock()
	defer p.local.mu.Unlock()
	ids := make([]int64, 0, len(p.local.calls))
	for id := range p.local.calls {
		ids = append(ids, id)
	}
	return ids
}

// closeLocal cancels the in-process calls, and waits until each one's
// end is stored.
func (p *Poller) closeLocal() {
	p.local.mu.Lock()
	p.local.closed = true
	for _, c := range p.local.calls {
		if c.why == nil {
			c.why = errShutdown
		}
		c.cancel(errShutdown)
	}
	p.local.mu.Unlock()
	p.local.wg.Wait()
}

// pollLocal is poll for an in-process call: one of this process's is
// followed by the goroutine that waits for it, not by polls; one of a
// process whose lease lapsed (it stopped, or died) was cut short, which is
// its end.
func (p *Poller) pollLocal(ctx context.Context, e *entry) bool {
	if ours(e.task) {
		return false
	}
	return p.finish(ctx, e, newOutcome(EndInterrupted, msgRestarted, false))
}
