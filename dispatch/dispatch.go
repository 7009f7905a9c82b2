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
	id      int64
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

// ItemID returns the id of the item (the Telegram update) the job running
// with ctx runs, the same at every run of it; 0 outside a job.
func ItemID(ctx context.Context) int64 {
	if st, ok := ctx.Value(jobKey{}).(*jobState); ok {
		return st.id
	}
	return 0
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
