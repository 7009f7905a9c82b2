package testenv

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgram/mcpgram/store/postgres"
)

// RequirePostgresEnv, set to 1 (as .ci/run does), turns the skip of a test
// needing PostgreSQL on a machine without it into a failure.
const RequirePostgresEnv = "MCPGRAM_REQUIRE_POSTGRES"

// A cluster is the throwaway PostgreSQL server of this test process,
// started on first use.
type cluster struct {
	once    sync.Once
	missing string // why PostgreSQL cannot run here: skip
	err     error  // it could run but did not start
	srv     *server
	dbs     atomic.Int64

	// template is a database migrated once by postgres.Open, made on
	// first use, from which Postgres copies its databases: migrating each
	// of them again was most of the time a test database took.
	template     sync.Once
	templateErr  error
	templateName string
}

// A server is one initdb folder and the postmaster running on it, on a
// free TCP port of 127.0.0.1 and a unix socket in the folder, watched by a
// reaper process that stops it and deletes the folder once this process
// closes stop, or ends however it ends: only this process holds stop, the
// write end of the reaper's stdin, and the kernel closes it on any exit,
// SIGKILL included.
type server struct {
	dir    string
	port   int
	reaper *exec.Cmd
	stop   *os.File
	// said is what the reaper answers: the server's pid, at start and
	// after each "start" (see reaperScript).
	said     *bufio.Reader
	saidFile *os.File
	pid      int
	log      string

	stopOnce sync.Once
	stopErr  error
}

var pg cluster

// Postgres returns the URL of a new database of its own for the test,
// with the schema postgres.Open gives (copied from a database it migrated
// once per process, so opening it migrates nothing), on a PostgreSQL
// cluster started once per test process (Debian's postgresql 15, or
// initdb and postgres on PATH) and dropped when the test ends. The cluster stops when the process ends; a TestMain calls
// [StopPostgres] after m.Run so that no postgres process outlives the run
// even briefly.
//
// Where PostgreSQL is not installed the test is skipped, loudly, saying how
// to install it; with MCPGRAM_REQUIRE_POSTGRES=1 (as CI sets) it fails
// instead.
//
// Commits of these databases do not wait for the disk
// (synchronous_commit=off), and in a run of tests the server does not
// flush at all (see fsyncSetting): a crash of the machine could lose
// them, one of the server's processes cannot, and the cluster is deleted
// at the end anyway.
func Postgres(t testing.TB) (dsn string) {
	t.Helper()
	return pg.database(t, dbMigrated)
}

// PostgresEmpty is [Postgres] with an empty database, for the tests of
// the migrations themselves.
func PostgresEmpty(t testing.TB) (dsn string) {
	t.Helper()
	return pg.database(t, dbEmpty)
}

// PostgresDurable is [Postgres] with commits that return once flushed to
// disk, as on a production server: for benchmarks to set beside SQLite's.
func PostgresDurable(t testing.TB) (dsn string) {
	t.Helper()
	return pg.database(t, dbMigrated|dbDurable)
}

// The kinds of database [cluster.database] makes: flags, none of them
// for an empty one.
const (
	dbMigrated = 1 << iota
	dbDurable

	dbEmpty = 0
)

func (c *cluster) database(t testing.TB, kind int) string {
	t.Helper()
	c.once.Do(c.start)
	if c.missing != "" {
		skipWithout(t, c.missing)
	}
	if c.err != nil {
		t.Fatalf("start PostgreSQL for tests: %v", c.err)
	}
	// FILE_COPY: copying the template's files took a quarter of the CPU
	// of writing them to the WAL (the default), which also flushed.
	create := "CREATE DATABASE %s STRATEGY = FILE_COPY"
	if kind&dbMigrated != 0 {
		c.template.Do(c.makeTemplate)
		if c.templateErr != nil {
			t.Fatalf("migrate the test databases' template: %v", c.templateErr)
		}
		create += " TEMPLATE " + c.templateName
	}
	durable := kind&dbDurable != 0
	name := fmt.Sprintf("test_%d", c.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.srv.admin(ctx, fmt.Sprintf(create, name)); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	if durable {
		if err := c.srv.admin(ctx, "ALTER DATABASE "+name+" SET synchronous_commit = on"); err != nil {
			t.Fatalf("make the test database durable: %v", err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// FORCE ends sessions a test left open, so one leak does not
		// fail every later test.
		if err := c.srv.admin(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return c.srv.url(name)
}

// makeTemplate makes the database the migrated ones are copied from:
// postgres.Open migrates it, and closes every connection to it, as a
// template must have none while it is copied.
func (c *cluster) makeTemplate() {
	name := "test_template"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if c.templateErr = c.srv.admin(ctx, "CREATE DATABASE "+name); c.templateErr != nil {
		return
	}
	db, err := postgres.Open(ctx, c.srv.url(name))
	if err != nil {
		c.templateErr = err
		return
	}
	c.templateErr = db.Close()
	c.templateName = name
}

// skipWithout skips t, loudly, saying what is missing and how to install
// it; with RequirePostgresEnv=1 it fails t instead.
func skipWithout(t testing.TB, missing string) {
	t.Helper()
	msg := "SKIPPED LOUDLY: PostgreSQL is not installed (" + missing +
		"); install it with `apt-get install -y postgresql` (Debian) to run this test"
	if os.Getenv(RequirePostgresEnv) == "1" {
		t.Fatal(msg + "; " + RequirePostgresEnv + "=1 requires it")
	}
	t.Skip(msg)
}

// StopPostgres stops this process's test cluster, if it started one, and
// deletes its folder; later calls to [Postgres] fail. A package's TestMain
// calls it after m.Run: without it the cluster still stops, just after the
// process has exited.
func StopPostgres() error {
	if pg.srv == nil {
		return nil
	}
	return pg.srv.shutdown()
}

// shutdown ends the reaper's stdin and waits for it to stop the server
// and delete the folder.
func (s *server) shutdown() error {
	s.stopOnce.Do(func() {
		_ = s.stop.Close()
		if err := s.reaper.Wait(); err != nil {
			s.stopErr = fmt.Errorf("stop test PostgreSQL: %w", err)
		}
	})
	return s.stopErr
}

func (s *server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// admin runs one statement on the cluster's postgres database.
func (s *server) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	_, err = conn.Exec(ctx, sql)
	return err
}

// pgBin finds the folder of initdb and postgres: Debian keeps them out of
// PATH, in /usr/lib/postgresql/VERSION/bin; the newest there wins, 15 on
// the machines this project runs on.
func pgBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return "", errors.New("no initdb in /usr/lib/postgresql/*/bin or on PATH")
	}
	d := filepath.Dir(initdb)
	if !isExec(filepath.Join(d, "postgres")) {
		return "", fmt.Errorf("no postgres beside %s", initdb)
	}
	return d, nil
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// start starts the cluster, recording why it could not.
func (c *cluster) start() {
	bin, err := pgBin()
	if err != nil {
		c.missing = err.Error()
		return
	}
	// A port free when chosen may be taken before the server binds it:
	// then a new cluster tries another.
	for attempt := 0; ; attempt++ {
		srv, retry, err := startServer(bin)
		if err == nil {
			c.srv = srv
			return
		}
		if srv != nil {
			_ = srv.shutdown()
		}
		if !retry || attempt == 3 {
			c.err = err
			return
		}
	}
}

// fsyncSetting is the test server's fsync (and full_page_writes): on in a
// run of benchmarks, whose durable figures must be a production server's,
// and off in a run of tests, where it cost most of each new database's
// time. A process that crashes loses nothing either way, only a machine
// that does, and a test's cluster does not outlive that.
func fsyncSetting() string {
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		return "on"
	}
	return "off"
}

// reaperScript runs as the server's user: it creates the cluster, runs the
// server as its child, prints the server's pid (0 when initdb failed), and
// once its stdin ends stops the server, reaps it and deletes the folder.
// The server is the script's child rather than a daemon of pg_ctl so that
// it is reaped the moment it exits, not left a zombie for init to collect.
//
// Meanwhile it takes commands, a line each: "stop" shuts the server down
// as pg_ctl stop -m fast does (SIGINT: the sessions are ended, each client
// told "terminating connection due to administrator command", SQLSTATE
// 57P01), waits for it to exit and prints 0; "start" starts it again and
// prints its pid. Only a Cluster of a test's own sends them.
const reaperScript = `bin=$1 dir=$2 port=$3 fsync=$4
start() {
	"$bin/postgres" -D "$dir/data" -p "$port" -k "$dir/sock" -c listen_addresses=127.0.0.1 \
		-c synchronous_commit=off -c shared_buffers=32MB -c fsync="$fsync" -c full_page_writes="$fsync" \
		</dev/null >>"$dir/server.log" 2>&1 &
	pid=$!
}
pid=0
if "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync --no-instructions >>"$dir/server.log" 2>&1; then
	start
fi
echo "$pid"
while read -r cmd; do
	case "$cmd" in
	stop) if [ "$pid" != 0 ]; then kill -INT "$pid" 2>/dev/null; wait "$pid"; fi; pid=0; echo 0 ;;
	start) if [ "$pid" = 0 ]; then start; fi; echo "$pid" ;;
	esac
done
if [ "$pid" != 0 ]; then kill -QUIT "$pid" 2>/dev/null; wait "$pid"; fi
rm -rf "$dir"
`

// startServer starts a cluster with the binaries in bin. On error, a
// non-nil server still needs shutdown; retry reports a failure that
// another port may not have. Commits do not wait for the disk unless a
// database asks (see PostgresDurable): the cluster is deleted at the end.
func startServer(bin string) (srv *server, retry bool, err error) {
	// initdb and postgres refuse to run as root: root runs them as
	// postgres, the user Debian's package creates.
	argv := []string{"sh", "-c", reaperScript, "reaper"}
	uid, gid := -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, false, fmt.Errorf("running as root, and there is no postgres user to run the server as: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		argv = append([]string{"runuser", "-u", "postgres", "--"}, argv...)
	}
	dir, err := os.MkdirTemp(reachableTemp(), "mcpgram-pg-")
	if err != nil {
		return nil, false, err
	}
	port, err := freePort()
	if err == nil {
		err = os.Mkdir(filepath.Join(dir, "sock"), 0o700)
	}
	for _, p := range []string{dir, filepath.Join(dir, "sock")} {
		if err == nil {
			err = os.Lchown(p, uid, gid)
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, false, err
	}
	srv = &server{dir: dir, port: port}
	pid, err := srv.startReaper(append(argv, bin, dir, strconv.Itoa(port), fsyncSetting()))
	if err != nil {
		return srv, false, err
	}
	logFile := filepath.Join(dir, "server.log")
	srv.pid, srv.log = pid, logFile
	if pid == 0 {
		log, _ := os.ReadFile(logFile)
		return srv, false, fmt.Errorf("initdb failed:\n%s", log)
	}
	retry, err = srv.waitReady(pid, logFile)
	return srv, retry, err
}

// waitReady waits until the server answers, exits, or a minute passes.
func (s *server) waitReady(pid int, logFile string) (retry bool, err error) {
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := s.admin(ctx, "SELECT 1")
		cancel()
		if err == nil {
			return false, nil
		}
		if !running(pid) || time.Now().After(deadline) {
			log, _ := os.ReadFile(logFile)
			return strings.Contains(string(log), "Address already in use"),
				fmt.Errorf("the server did not start: %w\n%s", err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startReaper starts argv, the reaper, and reads the server's pid from it.
// The reaper runs in a process group of its own, so that a Ctrl-C meant
// for the tests does not end it before it has stopped the server.
func (s *server) startReaper(argv []string) (pid int, err error) {
	stdin, stop, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer func() { _ = stdin.Close() }()
	said, stdout, err := os.Pipe()
	if err != nil {
		_ = stop.Close()
		return 0, err
	}
	// The read end stays open with the reaper, which answers commands on
	// it; it goes with this process.
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Dir(s.dir) // the server's user may not enter the test's folder
	// Stderr stays /dev/null: go test waits for the pipes it gave.
	cmd.Stdin, cmd.Stdout = stdin, stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = stdout.Close()
	if err != nil {
		_ = stop.Close()
		_ = os.RemoveAll(s.dir)
		return 0, fmt.Errorf("start the reaper: %w", err)
	}
	s.reaper, s.stop, s.said, s.saidFile = cmd, stop, bufio.NewReader(said), said
	return s.readPid()
}

// readPid reads the server's pid, or 0, as the reaper answers.
func (s *server) readPid() (int, error) {
	_ = s.saidFile.SetReadDeadline(time.Now().Add(2 * time.Minute))
	line, err := s.said.ReadString('\n')
	pid := 0
	if err == nil {
		pid, err = strconv.Atoi(strings.TrimSpace(line))
	}
	if err != nil {
		return 0, fmt.Errorf("read the server's pid from the reaper: %w", err)
	}
	return pid, nil
}

// reachableTemp is the temp folder, unless others may not enter it (a
// TMPDIR private to root): then /tmp, where the postgres user may.
func reachableTemp() string {
	if fi, err := os.Stat(os.TempDir()); err == nil && fi.Mode().Perm()&0o001 != 0 {
		return os.TempDir()
	}
	return "/tmp"
}

// running reports whether pid is a live process (a zombie is not).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows "(comm) ".
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// freePort returns a TCP port of 127.0.0.1 nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// OpenPostgres opens a store on the database dsn, as one instance of the
// bot would, and closes it when the test ends.
func OpenPostgres(t testing.TB, dsn string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
