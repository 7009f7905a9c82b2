package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mcpgram/mcpgram/hub/confine"
)

// childEnvKeys are the only variables of the bot's environment a child
// inherits: the bot's environment holds the Telegram token and the model's
// API key, which no server should see unless its settings pass them.
var childEnvKeys = []string{"PATH", "HOME", "USER", "LANG", "TMPDIR", "TERM"}

// spawn starts the child process of a stdio server, in its sandbox.
func (s *server) spawn(c *conn, cfg config) (err error) {
	defer func() {
		if err != nil {
			c.removeTmp()
		}
	}()
	path := cfg.command
	if !strings.ContainsRune(path, '/') {
		found, err := findCommand(path)
		if err != nil {
			return err
		}
		path = found
	}
	// A path through a folder the sandbox does not show (/srv/a/../bin)
	// would not be found there.
	path = filepath.Clean(path)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("command %s: %w", path, errors.Unwrap(err))
	}
	cmd := exec.Command(path, cfg.args...)
	cmd.Dir = cfg.workDir()
	setProcessGroup(cmd)
	start, err := s.confine(c, cmd, cfg)
	if err != nil {
		return err
	}
	// Files, not writers or exec's pipes: exec would copy a writer in a
	// goroutine that Wait waits for (a grandchild holding the pipe would
	// keep it from returning), and it closes its own pipes in Wait, which
	// may lose the last reply still unread.
	stdin, toChild, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("stdin pipe: %w", err)
	}
	fromChild, stdout, err := os.Pipe()
	if err != nil {
		stdin.Close()
		toChild.Close()
		return fmt.Errorf("stdout pipe: %w", err)
	}
	errRead, errWrite, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{stdin, toChild, fromChild, stdout} {
			f.Close()
		}
		return fmt.Errorf("stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, errWrite
	err = start()
	// The child has its ends now; ours would keep the pipes open.
	stdin.Close()
	stdout.Close()
	errWrite.Close()
	if err != nil {
		for _, f := range []*os.File{toChild, fromChild, errRead} {
			f.Close()
		}
		return fmt.Errorf("start %s: %w", filepath.Base(path), err)
	}
	c.cmd, c.stdout = cmd, fromChild
	go c.stderr.readFrom(errRead, s.log, func(line string) { s.stderrBound(c, cfg.bounds, line) })
	go s.watchBounds(c, cfg.bounds)
	go func() {
		// Wait reaps the child; with the pipes ours, it closes none.
		_ = cmd.Wait()
		close(c.exited)
		c.markLost()
	}()
	return s.attach(c, cmd, filepath.Base(path), toChild, fromChild)
}

// attach connects an MCP client to the started child's pipes.
func (s *server) attach(c *conn, cmd *exec.Cmd, name string, toChild, fromChild *os.File) error {
	lines, toTransport := io.Pipe()
	guard := &stdoutGuard{
		max:      s.hub.opts.MaxMessage,
		inFlight: c.requests.list,
		asks:     c.schemas.put,
		overflow: func(err error) {
			c.setReason(err)
			s.log.Error("stopping server", "err", err)
			kill(cmd)
		},
	}
	go guard.run(fromChild, toTransport)
	c.lines = toTransport
	c.tr = transport.NewIO(lines, toChild, nil)
	c.client = client.NewClient(c.tr, s.clientOptions(TypeStdio)...)
	if err := c.client.Start(context.Background()); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	s.answerRequests(c)
	return nil
}

// confine gives cmd its environment, its bounds, its user (never root)
// and, as the server's sandbox plan says, its sandbox, and returns what
// starts it. Every server runs through the program of package confine,
// which takes on the bounds and user at the last moment, inside the
// sandbox, and then becomes the server.
func (s *server) confine(c *conn, cmd *exec.Cmd, cfg config) (start func() error, err error) {
	h := s.hub
	plan := h.plan(cfg)
	if plan.err != nil {
		return nil, plan.err
	}
	cmd.Env = childEnv(cfg.env)
	command := filepath.Clean(cmd.Path)
	u := h.serverUser(s.name)
	// Unsandboxed, a server that runs as the bot's user can write what the
	// bot can anyway; one with a user of its own is refused what it would
	// be refused sandboxed, for the hub gives it its folders.
	v, err := newView(cfg, h.viewPlan(s.name, cfg, command, envMap(cmd.Env)))
	if err != nil && (plan.engine != "" || u.uid != 0) {
		return nil, err
	}
	if err := s.prepare(v, u, command, plan.engine); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.last.writable, s.last.sandboxed, s.last.uid, s.last.refusal = v.rw, plan.engine != "", u.uid, ""
	s.mu.Unlock()
	for k, dir := range v.cacheEnv {
		cmd.Env = withEnv(cmd.Env, k, dir)
	}
	// The processes bound counts the server alone where it has a user of
	// its own, or a user namespace (bubblewrap run by anyone but root).
	spec := confine.Spec{UID: u.uid, GID: u.gid, Limits: limits(cfg.bounds, u.uid != 0 || plan.engine == engineBubblewrap)}
	prog := h.opts.Confine
	switch plan.engine {
	case engineBubblewrap:
		cmd.Env = withTmp(cmd.Env, cfg, "/tmp")
		cmd.Path = h.support().Bubblewrap
		cmd.Args = append([]string{"bwrap"}, bwrapArgs(v, jail{confine: prog, spec: spec, command: command, args: cfg.args, tmp: cfg.bounds.Tmp})...)
		c.sandboxed, c.depth = true, 2
		return func() error { return h.launcher.start(cmd) }, nil
	case engineLandlock:
		// Landlock cannot give the server a /tmp of its own: it gets a
		// private folder instead.
		if c.tmp, err = os.MkdirTemp("", "mcpgram-server-"); err != nil {
			return nil, fmt.Errorf("private temporary folder: %w", err)
		}
		if u.uid != 0 {
			if err := os.Chown(c.tmp, u.uid, u.gid); err != nil {
				return nil, fmt.Errorf("private temporary folder: %w", err)
			}
		}
		cmd.Env = withTmp(cmd.Env, cfg, c.tmp)
		v.addRW(c.tmp)
		v.addRO(prog)
	default:
		s.log.Warn("server runs without a sandbox: it can read whatever its user can", "why", plan.why, "uid", u.uid)
	}
	args, err := confine.Command(spec, command, cfg.args)
	if err != nil {
		return nil, err
	}
	cmd.Path, cmd.Args = prog, append([]string{prog}, args...)
	if plan.engine == engineLandlock {
		return func() error { return startLandlocked(cmd, v, h.support().LandlockABI) }, nil
	}
	return cmd.Start, nil
}

// prepare makes what view v shows that is not there yet, for the server's
// user u, and, where that is not the bot's, gives it what of its folders
// root holds, and checks that it may run command and, outside a
// bubblewrap sandbox (which makes the folders on the way itself), reach
// what it must: its command, its folders and the paths its entry names.
func (s *server) prepare(v view, u user, command, engine string) error {
	if u.uid != 0 {
		var st syscall.Stat_t
		if err := syscall.Stat(command, &st); err == nil && st.Mode&0o001 == 0 && int(st.Uid) != u.uid {
			return fmt.Errorf("%w: it runs as user %d (the bot runs as root, and no server does), which may not run %s: let others run it (chmod o+rx %s)", errView, u.uid, command, command)
		}
	}
	if u.uid != 0 && engine != engineBubblewrap {
		for _, p := range slices.Concat([]string{command}, v.rw, v.named) {
			if d := unreachable(p, u); d != "" {
				return fmt.Errorf("%w: it runs as user %d (the bot runs as root, and no server does), which cannot pass %s on the way to %s: open it to others (chmod o+x %s), keep the server's files elsewhere, or install bubblewrap", errView, u.uid, d, p, d)
			}
		}
	}
	if err := v.make(u); err != nil {
		return err
	}
	if u.uid == 0 {
		return nil
	}
	given, err := adopt(v.rw, u)
	if len(given) > 0 {
		s.log.Info("gave the server's user what root held of its folders", "uid", u.uid, "paths", given)
	}
	return err
}

// withEnv sets k=v in env.
func withEnv(env []string, k, v string) []string {
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	return append(env, k+"="+v)
}

// withTmp points TMPDIR at the sandbox's temporary folder, unless the
// server's own env sets it.
func withTmp(env []string, cfg config, tmp string) []string {
	if _, own := cfg.env["TMPDIR"]; own {
		return env
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") })
	return append(env, "TMPDIR="+tmp)
}

// envMap reads an environment list into a map.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// childEnv is the environment of a child: a few harmless variables of
// ours and the server's own env entries.
func childEnv(own map[string]string) []string {
	var env []string
	for _, k := range childEnvKeys {
		if _, set := own[k]; set {
			continue
		}
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(own)) {
		env = append(env, k+"="+own[k])
	}
	return env
}
