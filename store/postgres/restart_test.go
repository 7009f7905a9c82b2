package postgres_test

import (
	"bytes"
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// warm uses every connection of db's pool at once, so that none is idle
// long enough to be checked before its next use.
func warm(t *testing.T, db *postgres.DB) {
	t.Helper()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := postgres.QueryInt(t.Context(), db, `SELECT count(*) FROM pg_sleep(0.05)`); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// A restart of the server (as pg_ctl restart -m fast, which ends every
// session with SQLSTATE 57P01) loses no call: reads, the idempotent writes
// and a turn's write run again on fresh connections, and succeed.
func TestRestartLosesNoCall(t *testing.T) {
	t.Parallel()
	c := testenv.NewCluster(t)
	db := testenv.OpenPostgres(t, c.Database(t))
	ctx := t.Context()
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "before"}}})
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		name string
		run  func() error
	}{
		{"CurrentConversation", func() error { _, err := db.CurrentConversation(ctx, "c"); return err }},
		{"Messages", func() error { _, err := db.Messages(ctx, conv); return err }},
		{"ChatInstructions", func() error { _, err := db.ChatInstructions(ctx, "c"); return err }},
		{"AppendTurn", func() error {
			_, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "after"}}})
			return err
		}},
		{"InboxPut", func() error {
			return db.InboxPut(ctx, store.InboxItem{UpdateID: 1, ChatID: "c", Payload: []byte("{}")})
		}},
		{"InboxDone", func() error { return db.InboxDone(ctx, 1) }},
		{"ClaimQueued", func() error {
			_, err := db.ClaimQueued(ctx, store.Claim{Instance: "i", NewChats: 1, LeaseFor: time.Second})
			return err
		}},
		{"DayUsage", func() error { _, err := db.DayUsage(ctx, "u", time.Now()); return err }},
	}
	for _, call := range calls {
		warm(t, db)
		c.Restart(t)
		if err := call.run(); err != nil {
			t.Errorf("%s right after a restart: %v", call.name, err)
		}
	}
	msgs, err := db.Messages(ctx, conv)
	if err != nil || len(msgs) != 2 {
		t.Errorf("messages after the restarts: %d, %v; want 2, each stored once", len(msgs), err)
	}
}

// With the server down longer than the retries last, a call fails with
// store.ErrUnavailable; with it back within them, the call succeeds.
func TestStoppedServer(t *testing.T) {
	t.Parallel()
	c := testenv.NewCluster(t)
	db := testenv.OpenPostgres(t, c.Database(t))
	ctx := t.Context()
	c.Stop(t)
	postgres.SetRetryFor(db, 200*time.Millisecond)
	if _, err := db.CurrentConversation(ctx, "c"); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("a call to a stopped server: %v, want ErrUnavailable", err)
	}
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping of a stopped server succeeded")
	}
	postgres.SetRetryFor(db, time.Minute)
	done := make(chan error, 1)
	go func() {
		_, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "waited"}}})
		done <- err
	}()
	// The outage the call rides out: not a wait for a signal.
	time.Sleep(500 * time.Millisecond)
	c.Start(t)
	if err := <-done; err != nil {
		t.Errorf("a call while the server came back: %v", err)
	}
}

// A turn's write whose commit went in but whose answer was lost (the
// connection cut right after COMMIT was sent) runs again and finds its
// key: stored once, not twice.
func TestAppendTurnLostCommitAnswer(t *testing.T) {
	t.Parallel()
	c := testenv.NewCluster(t)
	dsn := c.Database(t)
	testenv.OpenPostgres(t, dsn).Close() // migrate directly
	proxy := newCutProxy(t, dsn)
	db := testenv.OpenPostgres(t, proxy.dsn)
	ctx := t.Context()
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "first"}}})
	if err != nil {
		t.Fatal(err)
	}
	proxy.cutAfterCommit.Store(true)
	if _, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c", Messages: []store.Message{{Role: "user", Content: "once"}}}); err != nil {
		t.Fatalf("a write whose commit's answer was lost: %v", err)
	}
	if proxy.cuts.Load() != 1 {
		t.Fatalf("the proxy cut %d connections after a commit, want 1", proxy.cuts.Load())
	}
	msgs, err := db.Messages(ctx, conv)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range msgs {
		if m.Content == "once" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the write is stored %d times, want once", n)
	}
}

// A cutProxy passes connections to PostgreSQL through, and, armed, cuts
// the next one that sends a COMMIT right after the COMMIT is passed on,
// before the server's answer comes back.
type cutProxy struct {
	dsn            string
	cutAfterCommit atomic.Bool
	cuts           atomic.Int64
}

func newCutProxy(t *testing.T, dsn string) *cutProxy {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{}
	target := u.Host
	u.Host = l.Addr().String()
	p.dsn = u.String()
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { p.serve(client, target) })
		}
	})
	return p
}

func (p *cutProxy) serve(client net.Conn, target string) {
	defer client.Close()
	server, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer server.Close()
	var cut atomic.Bool
	answered := make(chan struct{}) // closed once the server answered the cut COMMIT
	go func() {
		defer close(answered)
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if cut.Load() {
				_ = client.Close() // the answer is lost
				return
			}
			if n > 0 {
				if _, werr := client.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_ = client.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			if p.cutAfterCommit.Load() && bytes.Contains(bytes.ToLower(buf[:n]), []byte("commit")) && p.cutAfterCommit.CompareAndSwap(true, false) {
				cut.Store(true)
				p.cuts.Add(1)
				_, _ = server.Write(buf[:n])
				<-answered // the server answered: it committed
				return
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
