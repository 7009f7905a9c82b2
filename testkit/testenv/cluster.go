package testenv

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// A Cluster is a throwaway PostgreSQL server of one test's own, which the
// test may stop, start and restart, as an operator or a managed service
// does to a production server; the cluster of [Postgres] is shared by the
// process's tests and must not be. It is stopped and deleted when the test
// ends, or when the process ends, however it ends.
type Cluster struct {
	mu  sync.Mutex
	srv *server
	n   int
}

// NewCluster starts a cluster for t, skipping (or failing, see
// [RequirePostgresEnv]) as [Postgres] does where PostgreSQL is missing.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	bin, err := pgBin()
	if err != nil {
		skipWithout(t, err.Error())
	}
	var srv *server
	for attempt := 0; ; attempt++ {
		var retry bool
		srv, retry, err = startServer(bin)
		if err == nil {
			break
		}
		if srv != nil {
			_ = srv.shutdown()
		}
		if !retry || attempt == 3 {
			t.Fatalf("start a PostgreSQL cluster: %v", err)
		}
	}
	c := &Cluster{srv: srv}
	t.Cleanup(func() {
		if err := srv.shutdown(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// Database returns the URL of a new, empty database on the cluster.
func (c *Cluster) Database(t testing.TB) string {
	t.Helper()
	c.mu.Lock()
	c.n++
	name := fmt.Sprintf("test_%d", c.n)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.srv.admin(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	return c.srv.url(name)
}

// Stop shuts the server down as `pg_ctl stop -m fast` does (SIGINT to the
// postmaster): every session is ended, its client told "terminating
// connection due to administrator command" (SQLSTATE 57P01), and new
// connections are refused until Start. It returns once the server exited.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.command("stop"); err != nil {
		t.Fatal(err)
	}
}

// Start starts the server again, on the same port, and returns once it
// answers.
func (c *Cluster) Start(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.command("start"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.srv.waitReady(c.srv.pid, c.srv.log); err != nil {
		t.Fatal(err)
	}
}

// Restart is Stop and Start at once, as `pg_ctl restart -m fast` is.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	c.Stop(t)
	c.Start(t)
}

// command sends the reaper one of its commands and reads the pid it
// answers.
func (c *Cluster) command(cmd string) error {
	if _, err := fmt.Fprintln(c.srv.stop, cmd); err != nil {
		return fmt.Errorf("%s the test PostgreSQL: %w", cmd, err)
	}
	pid, err := c.srv.readPid()
	if err != nil {
		return fmt.Errorf("%s the test PostgreSQL: %w", cmd, err)
	}
	if cmd == "start" && pid == 0 {
		log, _ := os.ReadFile(c.srv.log)
		return fmt.Errorf("start the test PostgreSQL again: it did not start\n%s", log)
	}
	c.srv.pid = pid
	return nil
}
