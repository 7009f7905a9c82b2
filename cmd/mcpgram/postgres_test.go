package main_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/oauthfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// parallelWaiters is how many of this package's parallel tests run at
// once unless -parallel says: go test's default is one per CPU, but these
// tests spend most of their time waiting on the bots, servers, databases
// and browsers they start, not running, and on a 2-core machine the
// package ran on alone, half idle, at the end of make test.
const parallelWaiters = 6

// waitersInParallel sets -test.parallel to parallelWaiters where the
// command line did not set it.
func waitersInParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelWaiters))
	}
}

// TestMain stops the test PostgreSQL cluster, if a test started one, before
// the process ends.
func TestMain(m *testing.M) {
	testenv.Prepare()
	if os.Getenv("MCPGRAM_TEST_BROWSER") == "1" {
		// Run as $BROWSER by mcpgram mcp login: be the browser, signing
		// in as MCPGRAM_TEST_ACCOUNT when set.
		authURL := os.Args[len(os.Args)-1]
		if a := os.Getenv("MCPGRAM_TEST_ACCOUNT"); a != "" {
			authURL = oauthfake.As(authURL, a)
		}
		if err := oauthfake.Browse(context.Background(), authURL); err != nil {
			fmt.Fprintln(os.Stderr, "browser:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	waitersInParallel()
	code := m.Run()
	if err := testenv.StopPostgres(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// `mcpgram run` with DATABASE_URL keeps everything in PostgreSQL: the
// update, the conversation, the audit row; no SQLite file is made, and the
// URL's password stays out of the log.
func TestRunOnPostgreSQL(t *testing.T) {
	dsn := testenv.Postgres(t)
	// The test cluster trusts every local connection, so any password is
	// accepted: enough to see where it goes.
	const password = "pg-s3cr3t-password"
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("postgres", password)

	path := settings(t, nil)
	tg := tgfake.New(t)
	model := llmfake.New(t, llmfake.Script(
		llmfake.Text(`<use_mcp_tool><server_name>calculator</server_name><tool_name>calculate</tool_name><arguments>{"expression": "6 * 7"}</arguments></use_mcp_tool>`),
		llmfake.Text(`<attempt_completion><result>It is 42.</result></attempt_completion>`),
	))
	e := runEnv(t, tg, model.URL())
	e["DATABASE_URL"], e["LOG_LEVEL"] = u.String(), "debug"
	logs, stop := startRun(t, e, path)

	tg.Text(42, 42, "what is 6 * 7?")
	tg.WaitFor(t, 30*time.Second, "the answer", func() bool {
		return slices.ContainsFunc(tg.Messages(42), func(m tgfake.Message) bool {
			return m.FromID == tgfake.BotUser.ID && strings.Contains(m.Plain, "It is 42") && !m.Deleted
		})
	})
	stop()
	if log := logs.String(); strings.Contains(log, password) {
		t.Errorf("the log shows the database password:\n%s", log)
	} else if !strings.Contains(log, "using PostgreSQL") {
		t.Errorf("the log does not say PostgreSQL is in use:\n%s", log)
	}
	if _, err := os.Stat(e["DATABASE_PATH"]); !os.IsNotExist(err) {
		t.Errorf("a SQLite file was made at DATABASE_PATH: %v", err)
	}

	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	conv, err := db.CurrentConversation(t.Context(), "42")
	if err != nil {
		t.Fatalf("chat 42 has no conversation in PostgreSQL: %v", err)
	}
	msgs, err := db.Messages(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(msgs, func(m store.Message) bool { return strings.Contains(m.Content, "It is 42") }) {
		t.Errorf("the answer is not in PostgreSQL: %+v", msgs)
	}
	if calls, err := db.ToolCalls(t.Context(), 0); err != nil || len(calls) != 1 || calls[0].Tool != "calculate" {
		t.Errorf("audit log = %+v, %v; want the one calculate call", calls, err)
	}
	if n, _, err := db.InboxBacklog(t.Context()); err != nil || n != 0 {
		t.Errorf("inbox backlog %d, %v; want every update done", n, err)
	}
	if max, err := db.InboxMaxUpdateID(t.Context()); err != nil || max == 0 {
		t.Errorf("InboxMaxUpdateID = %d, %v; want the update stored", max, err)
	}
}

// A DATABASE_URL nothing answers at ends the start in one line naming
// DATABASE_URL, without its password.
func TestRunDatabaseURLUnreachable(t *testing.T) {
	path := settings(t, nil)
	e := env{
		"TELEGRAM_BOT_TOKEN": tgfake.Token, "OPENAI_API_KEY": "sk-test",
		"DATABASE_URL": "postgres://mcpgram:pg-s3cr3t-password@127.0.0.1:1/mcpgram?connect_timeout=5",
	}
	_, stderr, err := run(t, e, "", "--mcp-settings", path, "run")
	if err == nil {
		t.Fatal("run with an unreachable DATABASE_URL: got nil error")
	}
	msg := err.Error() + stderr
	if !strings.Contains(msg, "DATABASE_URL") || strings.Contains(msg, "pg-s3cr3t") {
		t.Errorf("error %q, stderr %q: want DATABASE_URL named and the password hidden", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "data")); !os.IsNotExist(err) {
		t.Errorf("a SQLite folder was made: %v", err)
	}
}

// /healthz and /readyz turn unhealthy while the database cannot be
// reached (its connections cut, new ones refused), naming the database,
// and healthy again once it is back.
func TestHealthWhenTheDatabaseIsDown(t *testing.T) {
	dsn := testenv.Postgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	path := settings(t, nil)
	tg := tgfake.New(t)
	e := runEnv(t, tg, llmfake.New(t, llmfake.Script(llmfake.Text("Hello."))).URL())
	e["DATABASE_URL"], e["HTTP_LISTEN"] = dsn, freeAddr(t)
	base := "http://" + e["HTTP_LISTEN"]
	_, stop := startRun(t, e, path)
	defer stop()

	tg.Text(42, 42, "hi")
	tg.WaitText(t, 42, "Hello.")
	if code, checks := check(t, base+"/healthz"); code != http.StatusOK || checks["database"] != "ok" {
		t.Fatalf("/healthz = %d %v, want 200", code, checks)
	}

	// As superuser, on the cluster's own database: refuse new connections
	// to the bot's, and end the ones it has.
	admin := *u
	admin.Path = "/postgres"
	conn, err := pgx.Connect(t.Context(), admin.String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(t.Context(), sql, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec(`ALTER DATABASE ` + pgx.Identifier{name}.Sanitize() + ` WITH ALLOW_CONNECTIONS false`)
	exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, name)
	tg.WaitFor(t, 30*time.Second, "unhealthy", func() bool {
		code, checks := check(t, base+"/healthz")
		return code == http.StatusServiceUnavailable && checks["database"] != "ok" && checks["database"] != ""
	})
	if code, checks := check(t, base+"/readyz"); code != http.StatusServiceUnavailable || checks["database"] == "ok" {
		t.Errorf("/readyz with the database down = %d %v, want 503 naming the database", code, checks)
	}

	exec(`ALTER DATABASE ` + pgx.Identifier{name}.Sanitize() + ` WITH ALLOW_CONNECTIONS true`)
	tg.WaitFor(t, 30*time.Second, "healthy again", func() bool {
		code, checks := check(t, base+"/healthz")
		return code == http.StatusOK && checks["database"] == "ok"
	})
}
