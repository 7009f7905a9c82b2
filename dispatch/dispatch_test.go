package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpgram/mcpgram/dispatch"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// openInbox opens a real SQLite inbox holding one item per lane name, in
// order; the item ids are 1, 2, 3…
func openInbox(t *testing.T, lanes ...string) *sqlite.DB {
	t.Helper()
	db := testenv.SQLite(t, "")
	put(t, db, lanes...)
	return db
}

// put puts one item per lane name in db's inbox, in order; the item ids
// are 1, 2, 3…
func put(t *testing.T, db interface {
	InboxPut(context.Context, ...store.InboxItem) error
}, lanes ...string) {
	t.Helper()
	var items []store.InboxItem
	for i, l := range lanes {
		items = append(items, store.InboxItem{UpdateID: int64(i + 1), ChatID: l, Payload: []byte(`{}`)})
	}
	if err := db.InboxPut(context.Background(), items...); err != nil {
		t.Fatal(err)
	}
}

func queued(t *testing.T, db *sqlite.DB) []int64 {
	t.Helper()
	items, err := db.InboxQueued(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, it := range items {
		ids = append(ids, it.UpdateID)
	}
	return ids
}

func start(t *testing.T, inbox dispatch.Inbox, route func(store.InboxItem) dispatch.Job, opts dispatch.Options) *dispatch.Queue {
	t.Helper()
	q, err := dispatch.New(inbox, route, opts)
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	return q
}

func closeQueue(t *testing.T, q *dispatch.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// One lane's items run in order and one at a time, while another lane's
// go ahead of them; every item is marked done.
func TestLanesOrderedAndIndependent(t *testing.T) {
	db := openInbox(t, "a", "a", "b", "a")
	var rec testenv.List[int64] // the order jobs run in
	bRan := make(chan struct{})
	q := start(t, db, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			if it.UpdateID == 1 {
				<-bRan // lane a's first job waits for lane b
			}
			rec.Add(it.UpdateID)
			if it.ChatID == "b" {
				close(bRan)
			}
		}}
	}, dispatch.Options{})
	waitFor(t, func() bool { return len(rec.All()) == 4 })
	closeQueue(t, q)
	if got, want := rec.All(), []int64{3, 1, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want %v", got, want)
	}
	if p := queued(t, db); len(p) != 0 {
		t.Errorf("queued after every job ran: %v", p)
	}
}

// At most MaxRunning lanes run at once; out-of-band jobs run beside them.
func TestBoundedConcurrency(t *testing.T) {
	db := openInbox(t, "a", "b", "c", "")
	release := make(chan struct{})
	oob := make(chan struct{})
	var rec testenv.List[int64]
	q := start(t, db, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			if it.ChatID == "" {
				close(oob)
				return
			}
			<-release
			rec.Add(it.UpdateID)
		}}
	}, dispatch.Options{MaxRunning: 2})
	<-oob // the out-of-band job did not wait for a slot
	waitFor(t, func() bool { return q.Stats() == dispatch.Stats{Running: 2, Waiting: 1, Lanes: 3} })
	close(release)
	waitFor(t, func() bool { return len(rec.All()) == 3 })
	closeQueue(t, q)
	if s := q.Stats(); s != (dispatch.Stats{}) {
		t.Errorf("stats after close: %+v", s)
	}
	if p := queued(t, db); len(p) != 0 {
		t.Errorf("queued: %v", p)
	}
}

// A job cut short by Close and the jobs queued behind it stay queued, and
// the next queue over the inbox runs them, in order.
func TestCutShortRunsAgain(t *testing.T) {
	db := openInbox(t, "a", "a", "b")
	started := make(chan struct{})
	q := start(t, db, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			if it.UpdateID == 1 {
				close(started)
				<-ctx.Done()
			}
		}}
	}, dispatch.Options{})
	<-started
	waitFor(t, func() bool { return slices.Equal(queued(t, db), []int64{1, 2}) }) // b is done
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Close(ctx); !errors.Is(err, dispatch.ErrCutShort) {
		t.Fatalf("Close = %v, want ErrCutShort", err)
	}
	if got, want := queued(t, db), []int64{1, 2}; !slices.Equal(got, want) {
		t.Fatalf("queued after a cut-short close: %v, want %v", got, want)
	}

	var rec testenv.List[int64]
	q = start(t, db, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(context.Context) { rec.Add(it.UpdateID) }}
	}, dispatch.Options{})
	waitFor(t, func() bool { return len(rec.All()) == 2 })
	closeQueue(t, q)
	if got, want := rec.All(), []int64{1, 2}; !slices.Equal(got, want) {
		t.Errorf("the restart ran %v, want %v", got, want)
	}
	if p := queued(t, db); len(p) != 0 {
		t.Errorf("queued after the restart: %v", p)
	}
}

// Items with nothing to do, and jobs that panic, are marked done; the lane
// goes on.
func TestNothingAndPanicsAreDone(t *testing.T) {
	db := openInbox(t, "skip", "a", "a")
	var rec testenv.List[int64]
	q := start(t, db, func(it store.InboxItem) dispatch.Job {
		if it.ChatID == "skip" {
			return dispatch.Job{}
		}
		return dispatch.Job{Lane: it.ChatID, Run: func(context.Context) {
			rec.Add(it.UpdateID)
			if it.UpdateID == 2 {
				panic("boom " + strconv.Itoa(2))
			}
		}}
	}, dispatch.Options{})
	waitFor(t, func() bool { return len(queued(t, db)) == 0 })
	closeQueue(t, q)
	if got, want := rec.All(), []int64{2, 3}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want %v", got, want)
	}
}

// A Route that panics on one item does not stop the queue: the item is
// logged and marked done, and the items after it run.
func TestRoutePanicIsDone(t *testing.T) {
	db := openInbox(t, "a", "a", "b")
	var rec testenv.List[int64]
	log := &testenv.Buffer{}
	q := start(t, db, func(it store.InboxItem) dispatch.Job {
		if it.UpdateID == 1 {
			panic("boom")
		}
		return dispatch.Job{Lane: it.ChatID, Run: func(context.Context) { rec.Add(it.UpdateID) }}
	}, dispatch.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	waitFor(t, func() bool { return len(queued(t, db)) == 0 })
	closeQueue(t, q)
	if got, want := rec.All(), []int64{2, 3}; !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Errorf("ran %v, want %v", got, want)
	}
	if !strings.Contains(log.String(), "update_id=1 ") || !strings.Contains(log.String(), "boom") {
		t.Errorf("the panic was not logged with its update:\n%s", log.String())
	}
}

// Wake hands out items stored after Start at once, without the interval.
func TestWake(t *testing.T) {
	db := openInbox(t)
	var rec testenv.List[int64]
	q := start(t, db, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(context.Context) { rec.Add(it.UpdateID) }}
	}, dispatch.Options{Interval: time.Hour})
	defer closeQueue(t, q)
	if err := db.InboxPut(context.Background(), store.InboxItem{UpdateID: 7, ChatID: "a", Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	q.Wake()
	waitFor(t, func() bool { return len(rec.All()) == 1 })
}

// slowMarks blocks its first InboxDone until released, closing writing as
// it starts.
type slowMarks struct {
	*sqlite.DB
	writing chan struct{}
	release chan struct{}
	mu      sync.Mutex
	calls   [][]int64
}

func (d *slowMarks) InboxDone(ctx context.Context, ids ...int64) error {
	d.mu.Lock()
	first := len(d.calls) == 0
	d.calls = append(d.calls, slices.Clone(ids))
	d.mu.Unlock()
	if first {
		close(d.writing)
		<-d.release
	}
	return d.DB.InboxDone(ctx, ids...)
}

// Items that finish while a done mark is being written share the next
// write (one fsync) instead of queueing one each.
func TestMarksShareWrites(t *testing.T) {
	const n = 30
	lanes := make([]string, n)
	for i := range lanes {
		lanes[i] = strconv.Itoa(i)
	}
	db := openInbox(t, lanes...)
	inbox := &slowMarks{DB: db, writing: make(chan struct{}), release: make(chan struct{})}
	q := start(t, inbox, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(context.Context) {
			if it.UpdateID != 1 {
				<-inbox.writing // the others finish while the first mark is written
			}
		}}
	}, dispatch.Options{})
	// The first mark is being written (and blocked); the others wait for it.
	waitFor(t, func() bool { return q.Stats().Marks == n-1 })
	close(inbox.release)
	waitFor(t, func() bool { return len(queued(t, db)) == 0 })
	closeQueue(t, q)
	inbox.mu.Lock()
	defer inbox.mu.Unlock()
	if len(inbox.calls) != 2 || len(inbox.calls[1]) != n-1 {
		t.Errorf("InboxDone calls %v; want one of 1 id, then one of %d", inbox.calls, n-1)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := dispatch.New(nil, nil, dispatch.Options{}); err == nil {
		t.Error("New without Inbox and Route succeeded")
	}
}

// waitFor polls cond until it holds, failing the test after a while.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 20*time.Second, "the condition", cond)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := testenv.StopPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// An item stored below what was already handed out (a webhook delivering
// out of order) is still handed out, once, when Arrived announces it; none
// of the others goes out twice.
func TestArrivedOutOfOrder(t *testing.T) {
	db := openInbox(t)
	var rec testenv.List[int64]
	q := start(t, db, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(context.Context) { rec.Add(it.UpdateID) }}
	}, dispatch.Options{Interval: time.Hour})
	defer closeQueue(t, q)
	put := func(id int64) {
		t.Helper()
		if err := db.InboxPut(context.Background(), store.InboxItem{UpdateID: id, ChatID: strconv.FormatInt(id, 10), Payload: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		q.Arrived(id)
	}
	put(10)
	put(12)
	waitFor(t, func() bool { return len(rec.All()) == 2 })
	put(11)
	waitFor(t, func() bool { return len(rec.All()) == 3 })
	put(13)
	waitFor(t, func() bool { return len(rec.All()) == 4 && len(queued(t, db)) == 0 })
	got := rec.All()
	slices.Sort(got)
	if want := []int64{10, 11, 12, 13}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want each of %v once", got, want)
	}
}

// A job that handles later items of its lane with its own absorbs them:
// all are marked done in one write, and their queued jobs never run,
// while the lane's other items still do, in order.
func TestAbsorb(t *testing.T) {
	db := openInbox(t, "a", "a", "a", "a", "b")
	var rec testenv.List[int64]
	bRan := make(chan struct{})
	var q *dispatch.Queue
	q, err := dispatch.New(db, func(it store.InboxItem) dispatch.Job {
		return dispatch.Job{Lane: it.ChatID, Run: func(ctx context.Context) {
			defer rec.Add(it.UpdateID)
			switch it.UpdateID {
			case 1:
				// Lane b's item was routed after items 2 to 4: once it
				// ran, they are queued behind this job.
				<-bRan
				if err := q.Absorb(ctx, 1, 2, 3); err != nil {
					t.Error(err)
				}
			case 5:
				close(bRan)
			}
		}}
	}, dispatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	waitFor(t, func() bool { return len(rec.All()) == 3 && len(queued(t, db)) == 0 })
	closeQueue(t, q)
	if got, want := rec.All(), []int64{5, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want %v", got, want)
	}
}
