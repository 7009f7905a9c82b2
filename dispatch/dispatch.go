// Package dispatch hands the items of a durable inbox to their handlers.
//
// A Queue reads the inbox in update order and gives each item to a lane,
// usually one per chat. Its guarantees:
//   - Order: the items of one lane run one at a time, in inbox order.
//   - Bounded concurrency: at most MaxRunning lanes run at once; items
//     routed out of band (lane "") run at once beside them, for what must
//     not wait behind a lane (stopping it, say).
//   - At least once: an item is marked done only after its job returned
//     without being cut short. Items queued when Close is called, and jobs
//     Close had to cancel, stay queued in the inbox for the next Queue.
//     A crash between a job's end and its mark (a few milliseconds) runs
//     the item again; marking first would risk losing it instead. A mark
//     that cannot be written is written again until it is.
//   - Later, not lost: a job that cannot do its work now (its database is
//     away) asks to run again (RunAgain). Its item stays in the inbox and
//     runs again once the queue has read the inbox again, its lane
//     waiting for it meanwhile, so that the chat's order holds.
//
// Several instances can share one inbox when they are given its
// [Claimer] (Options.Leases; the PostgreSQL store is one): each then runs
// only the items of the chats it holds a lease on, so that a chat's items
// run on one instance at a time, in order. Every read of the inbox renews
// the instance's leases, all of them with one write (a heartbeat of the
// instance, in the PostgreSQL store), so that a lease can be short: 3 s by
// default, read every second. An instance whose reads failed for two
// thirds of a lease starts no next item until a read shows the chat still
// its own: its lease may have gone to another instance meanwhile. An
// instance that dies stops renewing; once its leases expire another takes
// its chats with every item of theirs not marked done, the one that was
// running included: the same at-least-once replay as a restart. Close
// hands the leases back.
// A lease is a chat's, whatever lanes its items take: the lanes of a
// chat's parts (a forum's topics, in the bot) all run on the instance
// holding it.
//
// The queue knows nothing of Telegram: the front end decodes items and
// chooses lanes in its Route function.
package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
)

// An Inbox holds received items until they are marked done, and a while
// after: the part of store.Inbox the queue uses. *sqlite.DB and
// *postgres.DB are Inboxes.
type Inbox interface {
	InboxQueued(ctx context.Context, afterID int64, limit int) ([]store.InboxItem, error)
	InboxDone(ctx context.Context, updateIDs ...int64) error
	// InboxPrune forgets the items done before a time; the queue prunes
	// every hour.
	InboxPrune(ctx context.Context, before time.Time) (int64, error)
	// InboxBacklog is what Register reports of the inbox.
	InboxBacklog(ctx context.Context) (int, time.Time, error)
}

// A Claimer leases the chats of an Inbox that several instances share
// (store.Leases); *postgres.DB is one. ClaimQueued renews the instance's
// leases, takes more chats, and returns the queued items of the chats it
// holds.
type Claimer interface {
	store.Leases
}

// A Job is the work for one inbox item.
type Job struct {
	// Lane orders jobs: those of one lane run one at a time, in inbox
	// order. "" runs the job at once, outside every lane.
	Lane string
	// Run does the work. Its context ends when Close runs out of time;
	// a job cut short that way is not marked done.
	Run func(ctx context.Context)
}

// Options are a Queue's optional settings; the zero value takes the
// defaults.
type Options struct {
	// Leases, when set, shares the inbox with other instances: this one
	// runs only the chats it leases there. nil: this process owns the
	// whole inbox.
	Leases Claimer
	// MaxRunning caps the lanes running at once; default 64.
	MaxRunning int
	// Interval is how often the inbox is read without a Wake; default 5s.
	Interval time.Duration
	// Retain is how long done items are kept before pruning; default 48h.
	Retain time.Duration
	// Instance names this process among those sharing the inbox (with
	// Leases); default: host name, process id and a random suffix.
	Instance string
	// LeaseFor is how long a chat stays with this instance after it was
	// last heard of (with Leases): the takeover time after a crash.
	// Default 3s ([DefaultLease]); the inbox is read at least three times
	// as often.
	LeaseFor time.Duration
	Logger   *slog.Logger
}

// config is what New was given, the defaults filled in.
type config struct {
	Options
	Inbox Inbox
	Route func(store.InboxItem) Job
}

// DefaultLease is how long a dead instance keeps its chats by default:
// after it, plus up to a third of it for the next read of another
// instance, that one takes them. Renewing is one write per instance
// whatever the chats it holds, so a short lease costs a write a second
// per instance, not per chat (see docs/operations.md).
const DefaultLease = 3 * time.Second

// ErrCutShort is returned by Close when jobs had to be cancelled.
var ErrCutShort = errors.New("dispatch: jobs were cut short")

// A Queue dispatches inbox items to lanes. Start it once, then Close it.
type Queue struct {
	cfg     config
	logger  *slog.Logger
	claimer Claimer // nil: this process owns the whole inbox
	wake    chan struct{}
	slots   chan struct{} // one per running lane

	// work is the context of running jobs; Close cancels it when out of time.
	work       context.Context
	cancelWork context.CancelFunc
	stop       context.CancelFunc // ends the dispatcher
	dispatcher sync.WaitGroup
	jobs       sync.WaitGroup // lanes, out-of-band jobs and Go's

	done        chan int64    // ids to mark, for the marker
	doneStopped chan struct{} // closed when the marker has written every mark

	mu       sync.Mutex
	lanes    map[string]*lane
	stopping bool
	// dispatched is the highest id handed out; the dispatcher reads on
	// from there, or from rewind when Arrived saw an item below it.
	dispatched int64
	rewind     int64
	// handed are the items handed out and not yet known to be marked done,
	// so that a rewound read hands none out twice. marked are the items
	// whose marks are written: the next read, which starts after those
	// writes and cannot see them queued, forgets them from handed. (A read
	// under way may have seen them queued, so forgetting them at once
	// would hand them out again.)
	handed map[int64]bool
	// passes counts the passes over the inbox begun (see unpark).
	passes  int64
	marked  []int64
	running int // lanes holding a slot
	waiting int // lanes waiting for one
	// claimed is when the last successful read of a shared inbox began:
	// this instance's leases run from then (see fresh).
	claimed time.Time
}

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

// New returns a Queue over inbox that has not started. route turns an
// item into a job; a Job with a nil Run means there is nothing to do, and
// the item is marked done. route runs on the dispatching goroutine: it
// must be quick.
func New(inbox Inbox, route func(store.InboxItem) Job, opts Options) (*Queue, error) {
	if inbox == nil || route == nil {
		return nil, errors.New("dispatch: an inbox and a route are required")
	}
	cfg := config{Options: opts, Inbox: inbox, Route: route}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = 64
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.Retain <= 0 {
		cfg.Retain = 48 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Leases != nil {
		if cfg.LeaseFor <= 0 {
			cfg.LeaseFor = DefaultLease
		}
		cfg.Interval = min(cfg.Interval, cfg.LeaseFor/3)
		if cfg.Instance == "" {
			cfg.Instance = instanceName()
		}
		cfg.Logger = cfg.Logger.With("instance", cfg.Instance)
	}
	q := &Queue{
		cfg: cfg, logger: cfg.Logger, claimer: cfg.Leases,
		wake:        make(chan struct{}, 1),
		slots:       make(chan struct{}, cfg.MaxRunning),
		done:        make(chan int64, 1024),
		doneStopped: make(chan struct{}),
		lanes:       map[string]*lane{},
		handed:      map[int64]bool{},
	}
	q.work, q.cancelWork = context.WithCancel(context.Background())
	return q, nil
}

// Start begins dispatching: first the items a previous run left queued,
// then whatever Wake announces.
func (q *Queue) Start() {
	ctx, stop := context.WithCancel(context.Background())
	q.stop = stop
	go q.mark()
	q.dispatcher.Add(2)
	go func() {
		defer q.dispatcher.Done()
		q.dispatchLoop(ctx)
	}()
	go func() {
		defer q.dispatcher.Done()
		q.pruneLoop(ctx)
	}()
}

// Wake tells the queue that new items are in the inbox, above every item
// it was told of before (as a poller stores them).
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Arrived tells the queue that item id is in the inbox, wherever it falls:
// webhooks may deliver out of order, and the next read goes back for it.
func (q *Queue) Arrived(id int64) {
	q.mu.Lock()
	if q.rewind == 0 || id < q.rewind {
		q.rewind = id
	}
	q.mu.Unlock()
	q.Wake()
}

// Go runs fn outside every lane as a job of the queue: Close waits for it
// and cancels its context when out of time, as for the lanes.
func (q *Queue) Go(fn func(ctx context.Context)) {
	q.jobs.Add(1)
	go func() {
		defer q.jobs.Done()
		fn(q.work)
	}()
}

// A jobState is what a running job tells the queue, through its context.
type jobState struct {
	attempt int
	again   atomic.Bool
}

type jobKey struct{}

// RunAgain asks that the item of the job running with ctx stay in the
// inbox and run again, once the queue has read the inbox again (and, over
// a shared inbox, found the chat still this instance's): for work that
// cannot be done now and can be later, such as a turn whose database is
// away. The job returns as usual; its lane waits for the item, so the
// items behind it stay behind it. A job outside every lane is marked
// done all the same. Outside a job, RunAgain does nothing.
func RunAgain(ctx context.Context) {
	if st, ok := ctx.Value(jobKey{}).(*jobState); ok {
		st.again.Store(true)
	}
}

// Attempt returns which run of its item the job running with ctx is: 1
// the first time, 2 after one RunAgain, and so on; 0 outside a job.
func Attempt(ctx context.Context) int {
	if st, ok := ctx.Value(jobKey{}).(*jobState); ok {
		return st.attempt
	}
	return 0
}

// Absorb marks items done that a running job handled together with its
// own (an album gathered into one turn): its own id and theirs, in one
// write, so that after a crash either all of them run again or none does.
// Their queued jobs are dropped, and a read under way hands none of them
// out again.
func (q *Queue) Absorb(ctx context.Context, ids ...int64) error {
	drop := make(map[int64]bool, len(ids))
	q.mu.Lock()
	for _, id := range ids {
		drop[id] = true
		q.handed[id] = true
	}
	for _, l := range q.lanes {
		l.jobs = slices.DeleteFunc(l.jobs, func(j queued) bool { return drop[j.id] })
	}
	q.mu.Unlock()
	if err := q.cfg.Inbox.InboxDone(ctx, ids...); err != nil && !errors.Is(err, store.ErrNotFound) {
		// Still handed out: they run again after a restart, not before.
		return fmt.Errorf("dispatch: mark %s done: %w", store.DescribeUpdates(ids), err)
	}
	q.mu.Lock()
	q.marked = append(q.marked, ids...)
	q.mu.Unlock()
	return nil
}

// Close stops handing out items and waits for the running jobs until ctx
// ends; then it cancels them and waits for them to return. It returns
// after every mark of a finished job is written, with ErrCutShort if jobs
// had to be cancelled. Close without Start is allowed.
func (q *Queue) Close(ctx context.Context) error {
	if q.stop != nil {
		q.stop()
		q.dispatcher.Wait()
	}
	q.mu.Lock()
	q.stopping = true
	q.mu.Unlock()
	finished := make(chan struct{})
	go func() { q.jobs.Wait(); close(finished) }()
	var err error
	select {
	case <-finished:
	case <-ctx.Done():
		q.cancelWork()
		<-finished
		err = ErrCutShort
	}
	q.cancelWork()
	if q.stop != nil {
		close(q.done)
		<-q.doneStopped
		q.releaseLeases()
	}
	return err
}

// releaseLeases hands this instance's chats back once its marks are
// written, so another instance runs what is left of them at once rather
// than after the leases expire.
func (q *Queue) releaseLeases() {
	if q.claimer == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := q.claimer.ReleaseLeases(ctx, q.cfg.Instance); err != nil {
		q.logger.Warn("hand back the chats; other instances take them when the leases expire", "lease", q.cfg.LeaseFor, "err", err)
	}
}

// Stats is a snapshot of the lanes.
type Stats struct {
	Running int // lanes running a job
	Waiting int // lanes with work, waiting for a slot
	Marks   int // done marks waiting to be written
	// Lanes are the chats (or topics) the queue holds a lane for: those
	// with work, running, waiting or parked. A lane whose work is done is
	// dropped, and made again for the chat's next item.
	Lanes int
}

// Stats reports how many lanes are running and waiting.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return Stats{Running: q.running, Waiting: q.waiting, Marks: len(q.done), Lanes: len(q.lanes)}
}

func (q *Queue) dispatchLoop(ctx context.Context) {
	tick := time.NewTicker(q.cfg.Interval)
	defer tick.Stop()
	for {
		q.dispatch(ctx)
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-tick.C:
		}
	}
}

// pruneLoop prunes the inbox hourly, beside the dispatcher rather than in
// its loop: over a shared inbox every read renews this instance's leases,
// and a prune of a large inbox may take longer than a short lease.
func (q *Queue) pruneLoop(ctx context.Context) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			q.prune(ctx)
		}
	}
}

// page is how many inbox items the dispatcher reads at a time.
const page = 1000

// chatsPerClaim caps the chats a shared inbox hands one instance per read:
// a few at a time, with a read again at once when it took them all, so
// that instances woken together share a burst of new chats rather than
// the first one taking every chat.
const chatsPerClaim = 4

func (q *Queue) dispatch(ctx context.Context) {
	// Read on past the items already handed out: those still queued
	// behind a long job would otherwise fill every page, and no lane would
	// get anything newer until that backlog cleared. A poller stores items
	// in update order, so nothing new appears below the mark; an item
	// that did (Arrived) makes this read start below it, and handed keeps
	// what is already out from going out twice. At start the mark is 0 and
	// everything left queued by the last run is read.
	q.mu.Lock()
	after := q.dispatched
	if q.rewind != 0 && q.rewind <= after {
		after = q.rewind - 1
	}
	q.rewind = 0
	for _, id := range q.marked {
		delete(q.handed, id)
	}
	q.marked = q.marked[:0]
	ask := max(min(q.cfg.MaxRunning-len(q.lanes), chatsPerClaim), 0)
	q.passes++
	pass := q.passes
	q.mu.Unlock()
	if q.claimer != nil {
		// Only this instance's chats are read, and a chat taken over may
		// have items anywhere: read them all, every time.
		after = 0
	}
	newChats, took, seen := ask, map[string]bool{}, map[int64]bool{}
	defer func() {
		if ask > 0 && len(took) >= ask {
			q.Wake() // there may be more chats waiting: take them next
		}
	}()
	for ctx.Err() == nil {
		items, err := q.read(ctx, after, newChats)
		newChats = 0 // taken with the first page
		if err != nil {
			if ctx.Err() == nil {
				q.logger.Error("read inbox", "err", err)
			}
			return
		}
		for _, it := range items {
			after = it.UpdateID
			seen[it.UpdateID] = true
			q.mu.Lock()
			fresh := !q.handed[it.UpdateID]
			q.handed[it.UpdateID] = true
			if fresh && q.claimer != nil && q.lanes[it.ChatID] == nil {
				took[it.ChatID] = true
			}
			q.dispatched = max(q.dispatched, it.UpdateID)
			q.mu.Unlock()
			if fresh {
				q.route(it)
			}
		}
		if len(items) < page {
			if q.claimer != nil {
				q.dropLost(seen)
			}
			q.unpark(pass)
			return
		}
	}
}

// dropLost forgets the queued jobs of chats this instance no longer holds:
// a full read of its chats' queued items, seen, lacks them, so their
// lease went to another instance (this one could not renew it in time)
// and that one runs them now. A job already running goes on: the item
// runs twice then, as after a crash.
func (q *Queue) dropLost(seen map[int64]bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, l := range q.lanes {
		kept := l.jobs[:0]
		for _, j := range l.jobs {
			if seen[j.id] {
				kept = append(kept, j)
				continue
			}
			delete(q.handed, j.id)
		}
		if n := len(l.jobs) - len(kept); n > 0 {
			q.logger.Warn("lost the lease of a chat to another instance; its queued updates run there", "chat", l.name, "updates", n)
		}
		clear(l.jobs[len(kept):])
		l.jobs = kept
	}
}

// read returns the next page of queued items after the given id: from a
// Claimer, those of the chats this instance holds, taking up to newChats
// more of them.
func (q *Queue) read(ctx context.Context, after int64, newChats int) ([]store.InboxItem, error) {
	if q.claimer == nil {
		return q.cfg.Inbox.InboxQueued(ctx, after, page)
	}
	began := time.Now()
	items, err := q.claimer.ClaimQueued(ctx, store.Claim{
		Instance: q.cfg.Instance, After: after, Limit: page,
		NewChats: newChats, LeaseFor: q.cfg.LeaseFor,
	})
	if err == nil {
		q.mu.Lock()
		q.claimed = began
		q.mu.Unlock()
	}
	return items, err
}

// instanceName names this process among the instances: unique across
// machines and restarts, and telling an operator where it runs.
func instanceName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "instance"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Instance returns the name this queue claims chats under, or "" when it
// owns the whole inbox.
func (q *Queue) Instance() string {
	if q.claimer == nil {
		return ""
	}
	return q.cfg.Instance
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
	st := &jobState{attempt: j.runs + 1}
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

// prune drops done items older than Retain. Telegram keeps updates for
// 24 hours, so older ones can never come again.
func (q *Queue) prune(ctx context.Context) {
	if n, err := q.cfg.Inbox.InboxPrune(ctx, time.Now().Add(-q.cfg.Retain)); err != nil {
		q.logger.Warn("prune inbox", "err", err)
	} else if n > 0 {
		q.logger.Debug("pruned inbox", "items", n)
	}
}

func (q *Queue) markDone(id int64) {
	q.done <- id
}

// maxMarks caps the marks written together.
const maxMarks = 256

// A mark that could not be written is tried again after markRetryFirst,
// doubling up to markRetryMax: the inbox's database is away, and the
// item, done, must not run again once it is back.
const (
	markRetryFirst = 100 * time.Millisecond
	markRetryMax   = 5 * time.Second
)

// mark writes done marks until q.done is closed, off the jobs' path: each
// write may be an fsync on the store's one writer, and hundreds of lanes
// finishing at once would otherwise queue their fsyncs in front of the
// jobs' own writes. Every mark waiting when a write starts goes into it,
// so one fsync serves all the items that finished during the previous
// one, and a lone mark is not delayed. Marks whose write failed are
// written again, with the marks that came meanwhile; those still failing
// when the queue closes run again after a restart.
func (q *Queue) mark() {
	defer close(q.doneStopped)
	var ids []int64
	var retry <-chan time.Time
	wait := markRetryFirst
	open := true
	for {
		if len(ids) == 0 {
			id, ok := <-q.done
			if !ok {
				return
			}
			ids = append(ids, id)
		} else if retry != nil {
			select {
			case id, ok := <-q.done:
				if ok {
					ids = append(ids, id)
					continue // wait out the retry
				}
				open = false
			case <-retry:
			}
		}
		ids, open = q.gather(ids, open)
		if !open {
			// Closing: each mark gets one last try.
			for len(ids) > 0 {
				n := min(len(ids), maxMarks)
				q.writeMarks(ids[:n], false)
				ids = ids[n:]
			}
			return
		}
		n := min(len(ids), maxMarks)
		if !q.writeMarks(ids[:n], true) {
			retry = time.After(wait)
			wait = min(2*wait, markRetryMax)
			continue
		}
		ids, retry, wait = slices.Delete(ids, 0, n), nil, markRetryFirst
	}
}

// gather adds the marks waiting in q.done to ids, up to maxMarks, and
// says whether q.done is still open.
func (q *Queue) gather(ids []int64, open bool) ([]int64, bool) {
	for open && len(ids) < maxMarks {
		select {
		case id, ok := <-q.done:
			if !ok {
				return ids, false
			}
			ids = append(ids, id)
		default:
			return ids, open
		}
	}
	return ids, open
}

// writeMarks writes the marks of ids, and reports whether it did; open
// is false when the queue is closing, and a failure is the last word.
func (q *Queue) writeMarks(ids []int64, open bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := q.cfg.Inbox.InboxDone(ctx, ids...)
	cancel()
	switch {
	case errors.Is(err, store.ErrNotFound):
		q.logger.Warn("mark items done: some were not in the inbox", "err", err)
	case err != nil && open:
		q.logger.Warn("mark items done; trying again", "updates", len(ids), "err", err)
		return false
	case err != nil:
		q.logger.Error("mark items done; they run again after a restart", "update_ids", ids, "err", err)
		return false
	}
	q.mu.Lock()
	q.marked = append(q.marked, ids...)
	q.mu.Unlock()
	if q.claimer != nil {
		// The next claim hands back chats left with nothing queued,
		// and takes new ones for the slots freed.
		q.Wake()
	}
	return true
}

// Register reports the lanes running and waiting on m, and the inbox's
// backlog, read at each scrape. A nil m registers nothing.
func (q *Queue) Register(m *metrics.Metrics) {
	m.Gauge("chats_running", "Chats whose turn is running.", func() float64 { return float64(q.Stats().Running) })
	m.Gauge("chats_waiting", "Chats with work waiting for MAX_CONCURRENT_TURNS.", func() float64 { return float64(q.Stats().Waiting) })
	backlog := func() (int, time.Time) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n, oldest, err := q.cfg.Inbox.InboxBacklog(ctx)
		if err != nil {
			q.logger.Warn("read the inbox backlog for metrics", "err", err)
		}
		return n, oldest
	}
	m.Gauge("inbox_pending", "Updates received and not yet handled.", func() float64 { n, _ := backlog(); return float64(n) })
	m.Gauge("inbox_oldest_pending_seconds", "Age of the oldest update not yet handled; 0 when none.", func() float64 {
		if _, oldest := backlog(); !oldest.IsZero() {
			return time.Since(oldest).Seconds()
		}
		return 0
	})
}
