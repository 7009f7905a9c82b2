// Package tasks follows the tool calls MCP servers run in the background
// (MCP Tasks) until they end. A Poller asks each task's server how it
// stands, as often as the server asks and less often while nothing
// changes, stores a change of status (and only a change: a poll that
// learns nothing writes nothing), and stores how the task ended with the
// task, once, however many pollers try: the store's FinishTask decides.
//
// One goroutine keeps every followed task in a heap by when it is due,
// under one timer; a fixed number of workers make the polls. Idle, it
// costs that timer; a thousand tasks cost a thousand heap entries, not a
// goroutine each.
//
// Several instances on one database divide the tasks by lease (see
// store.Tasks): each poller polls the tasks it claimed, renews its leases
// in one write every RenewEvery, whatever their number, and on the same
// tick takes over the tasks whose lease lapsed, those of an instance that
// died. An instance that dies mid-task thus costs its tasks a lease's
// delay, never their end.
package tasks

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/store"
)

// A Store keeps the tasks; *sqlite.DB and *postgres.DB are ones.
type Store interface {
	ClaimTask(ctx context.Context, id int64, owner string, now, until time.Time) (store.Task, error)
	ClaimTasks(ctx context.Context, owner string, lapsed, unowned, until time.Time) ([]store.Task, error)
	RenewTasks(ctx context.Context, owner string, ids []int64, until time.Time) (int64, error)
	UpdateTask(ctx context.Context, id int64, status, message string, nextPoll time.Time) error
	FinishTask(ctx context.Context, id int64, status, message string, outcome []byte) error
}

// A Hub asks servers about tasks; *hub.Hub is one.
type Hub interface {
	GetTask(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Task, error)
	TaskResult(ctx context.Context, caller mcpgram.Caller, server, id string) (*mcpgram.Result, error)
}

// Defaults of Options.
const (
	DefaultWorkers     = 8
	DefaultMinInterval = time.Second
	DefaultMaxInterval = 5 * time.Minute
	DefaultLease       = 30 * time.Second
	DefaultRenewEvery  = 10 * time.Second
)

// Options tune a Poller; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// Workers caps the polls in flight at once.
	Workers int
	// MinInterval is the soonest a task is asked again, whatever its
	// server says; MaxInterval the latest, which a task that does not
	// change backs off toward, and a server that fails is asked again
	// after.
	MinInterval, MaxInterval time.Duration
	// Owner names this instance in the leases of the tasks it polls;
	// empty: a random name, new at each start of the process.
	Owner string
	// Lease is how long a claim on a task lasts unless renewed, which
	// the poller does every RenewEvery (less than Lease), when it also
	// takes over the tasks whose lease lapsed.
	Lease, RenewEvery time.Duration
	// Shared says that other instances share the store (PostgreSQL): the
	// poller then starts with the tasks whose lease lapsed. Otherwise
	// (one SQLite file) it starts by taking every open task at once,
	// whoever held it: the process that held them is gone, and waiting a
	// lease for it would only delay their ends.
	Shared bool
	// Holds reports whether this instance holds the chat, whose tasks it
	// then polls; nil: every chat.
	Holds func(chat string) bool
	// Changed is told of each stored change of an open task; Finished,
	// once, of each task this poller finished, after its end was stored.
	// They run on a worker: they must not block for long.
	Changed  func(store.Task)
	Finished func(store.Task, Outcome)
	Now      func() time.Time
	// Metrics counts the tasks this poller finished, by outcome, and how
	// long they ran; nil counts nothing.
	Metrics *metrics.Metrics
}

// A Poller follows the open tasks of a store. Start it once, then Close
// it.
type Poller struct {
	st   Store
	hub  Hub
	opts Options
	log  *slog.Logger

	add       chan store.Task
	cancel    context.CancelFunc
	done      chan struct{}
	startOnce sync.Once
	closeOnce sync.Once

	local     locals       // the in-process calls adopted (see Adopt)
	polls     atomic.Int64 // tasks/get requests made
	renewals  atomic.Int64 // lease renewals written
	ticks     atomic.Int64 // lease ticks: renewals and claims tried
	following atomic.Int64 // tasks followed, due or in a poll
}

// New returns a Poller of the tasks of st, asked through h, not started.
func New(st Store, h Hub, opts Options) *Poller {
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.MinInterval <= 0 {
		opts.MinInterval = DefaultMinInterval
	}
	if opts.MaxInterval < opts.MinInterval {
		opts.MaxInterval = max(DefaultMaxInterval, opts.MinInterval)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Owner == "" {
		opts.Owner = process
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.RenewEvery <= 0 || opts.RenewEvery >= opts.Lease {
		opts.RenewEvery = min(DefaultRenewEvery, opts.Lease/3)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Poller{st: st, hub: h, opts: opts, log: log, add: make(chan store.Task), done: make(chan struct{})}
}

// Start claims the store's open tasks it may take (see Options.Shared)
// and follows them, those Add and Follow hand it, and those it takes over
// later, until Close.
func (p *Poller) Start() {
	p.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		p.cancel = cancel
		go func() {
			defer close(p.done)
			p.run(ctx)
		}()
	})
}

// Close stops polling and waits for the polls under way, which their
// cancelled context cuts short; it cancels the in-process calls, and
// waits until their ends are stored (see Adopt). Closing twice, or before
// Start, is harmless.
func (p *Poller) Close() error {
	p.closeOnce.Do(func() {
		p.closeLocal()
		p.startOnce.Do(func() { close(p.done) }) // never started
		if p.cancel != nil {
			p.cancel()
		}
	})
	<-p.done
	return nil
}

// Add follows t, a task just stored and claimed (see Follow), from its
// NextPoll on. It returns at once once the poller is closed.
func (p *Poller) Add(t store.Task) {
	select {
	case p.add <- t:
	case <-p.done:
	}
}

// Follow claims the stored task id and follows it (see Add): the instance
// whose turn started a task polls it while it lives. A task another
// instance holds is left to it (store.ErrLeased).
func (p *Poller) Follow(ctx context.Context, id int64) error {
	now := p.opts.Now()
	t, err := p.st.ClaimTask(ctx, id, p.opts.Owner, now, now.Add(p.opts.Lease))
	if err != nil {
		return fmt.Errorf("follow task %d: %w", id, err)
	}
	p.Add(t)
	return nil
}

// Polls is how many times servers were asked about tasks.
func (p *Poller) Polls() int64 { return p.polls.Load() }

// Renewals is how many times the poller renewed its leases, each in one
// write whatever the number of tasks.
func (p *Poller) Renewals() int64 { return p.renewals.Load() }

// Ticks is how many times the poller renewed its leases and tried to
// take over lapsed ones, after its start.
func (p *Poller) Ticks() int64 { return p.ticks.Load() }

// Following is how many tasks the poller follows.
func (p *Poller) Following() int64 { return p.following.Load() }

// An entry is a followed task: when it is next due, and the interval it
// was last given.
type entry struct {
	task     store.Task
	due      time.Time
	interval time.Duration
	index    int
}

// dueHeap orders entries soonest due first.
type dueHeap []*entry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index, h[j].index = i, j }
func (h *dueHeap) Push(x any)        { e := x.(*entry); e.index = len(*h); *h = append(*h, e) }
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}
