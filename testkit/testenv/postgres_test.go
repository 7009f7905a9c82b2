package testenv

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := StopPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// Each test gets a database of its own, which it may change: with the
// schema postgres.Open gives, or empty where it asked for one.
func TestPostgresDatabasePerTest(t *testing.T) {
	ctx := t.Context()
	var names []string
	for i, db := range []func(testing.TB) string{Postgres, Postgres, PostgresEmpty} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			conn, err := pgx.Connect(ctx, db(t))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close(ctx) }()
			var name string
			var tables, mine, migrations int
			if err := conn.QueryRow(ctx, `SELECT current_database(),
				(SELECT count(*) FROM pg_tables WHERE schemaname = 'public'),
				(SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename = 'mine'),
				(SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename = 'schema_migrations')`).Scan(&name, &tables, &mine, &migrations); err != nil {
				t.Fatal(err)
			}
			switch {
			case mine != 0:
				t.Errorf("database %s has the table an earlier test made", name)
			case i < 2 && (migrations != 1 || tables < 10):
				t.Errorf("database %s has %d tables, schema_migrations %d times: not migrated", name, tables, migrations)
			case i == 2 && tables != 0:
				t.Errorf("database %s has %d tables, want 0", name, tables)
			}
			if _, err := conn.Exec(ctx, `CREATE TABLE mine (x int)`); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		})
	}
	if len(names) == 3 && (names[0] == names[1] || names[1] == names[2]) {
		t.Errorf("two tests shared a database: %v", names)
	}
}

// reaperChildEnv makes TestPostgresReaperChild start a cluster and exit
// without stopping it.
const reaperChildEnv = "MCPGRAM_TESTENV_REAPER_CHILD"

func TestPostgresReaperChild(t *testing.T) {
	if os.Getenv(reaperChildEnv) == "" {
		t.Skip("only run as a child of TestPostgresStopsWhenProcessDies")
	}
	Postgres(t)
	pid, err := os.ReadFile(filepath.Join(pg.srv.dir, "data", "postmaster.pid"))
	if err != nil {
		fmt.Println("pid file:", err)
		os.Exit(2)
	}
	first, _, _ := strings.Cut(string(pid), "\n")
	fmt.Printf("cluster %s %s\n", pg.srv.dir, first)
	// Killed by the parent: no TestMain, no cleanup runs.
	select {}
}

// A test process that dies without StopPostgres, even by SIGKILL, leaves
// neither a server nor its folder behind.
func TestPostgresStopsWhenProcessDies(t *testing.T) {
	Postgres(t) // skips where PostgreSQL is absent
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPostgresReaperChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), reaperChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dir string
	var pid int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if n, _ := fmt.Sscanf(sc.Text(), "cluster %s %d", &dir, &pid); n == 2 {
			break
		}
		t.Logf("child: %s", sc.Text())
	}
	if pid == 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the child printed no cluster")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("postmaster %d of the child is not running: %v", pid, err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	Eventually(t, time.Minute, "the child's cluster to stop and its folder to go", func() bool {
		_, statErr := os.Stat(dir)
		return os.IsNotExist(statErr) && !running(pid)
	})
}

// Where PostgreSQL is missing the test skips, saying what is missing and
// how to install it.
func TestPostgresMissingSkipsLoudly(t *testing.T) {
	t.Setenv(RequirePostgresEnv, "")
	c := &cluster{}
	c.once.Do(func() { c.missing = "no initdb in /usr/lib/postgresql/*/bin or on PATH" })
	var skipped bool
	var out string
	t.Run("needs postgres", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		rec := &skipRecorder{TB: t}
		defer func() { out = rec.msg }()
		c.database(rec, dbEmpty)
	})
	if !skipped {
		t.Fatal("the test was not skipped")
	}
	for _, want := range []string{"SKIPPED LOUDLY", "no initdb", "apt-get install -y postgresql"} {
		if !strings.Contains(out, want) {
			t.Errorf("skip message %q does not say %q", out, want)
		}
	}
}

// A skipRecorder keeps the message of Skip.
type skipRecorder struct {
	testing.TB
	msg string
}

func (r *skipRecorder) Skip(args ...any) {
	r.msg = fmt.Sprint(args...)
	r.TB.Skip(args...)
}

// A durable database waits for the disk at commit; the others do not.
// In a run of tests the server flushes nothing (fsync off); in a run of
// benchmarks it does, as a production server.
func TestPostgresDurable(t *testing.T) {
	ctx := t.Context()
	for dsn, want := range map[string]string{Postgres(t): "off", PostgresDurable(t): "on"} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var got, fsync string
		if err := conn.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), current_setting('fsync')`).Scan(&got, &fsync); err != nil {
			t.Fatal(err)
		}
		_ = conn.Close(ctx)
		if got != want || fsync != "off" {
			t.Errorf("%s: synchronous_commit %s, fsync %s; want %s, off", dsn, got, fsync, want)
		}
	}
	bench := flag.Lookup("test.bench")
	was := bench.Value.String()
	t.Cleanup(func() { _ = bench.Value.Set(was) })
	for run, want := range map[string]string{"": "off", ".": "on", "BenchmarkStore": "on"} {
		_ = bench.Value.Set(run)
		if got := fsyncSetting(); got != want {
			t.Errorf("with -test.bench=%q the server's fsync is %s, want %s", run, got, want)
		}
	}
}

// A cluster of a test's own can be stopped, started and restarted: a
// session open across a restart is ended with SQLSTATE 57P01, and a new
// one finds the data.
func TestClusterRestart(t *testing.T) {
	c := NewCluster(t)
	dsn := c.Database(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, `CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	c.Restart(t)
	if _, err := conn.Exec(ctx, `SELECT 1`); err == nil || !strings.Contains(err.Error(), "57P01") && !strings.Contains(err.Error(), "conn closed") && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("a session across the restart: %v, want it ended", err)
	}
	c.Stop(t)
	if _, err := pgx.Connect(ctx, dsn); err == nil {
		t.Error("a stopped cluster took a connection")
	}
	c.Start(t)
	again, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = again.Close(ctx) }()
	var x int
	if err := again.QueryRow(ctx, `SELECT x FROM kept`).Scan(&x); err != nil || x != 7 {
		t.Errorf("after a restart: %d, %v; want the row kept", x, err)
	}
}
