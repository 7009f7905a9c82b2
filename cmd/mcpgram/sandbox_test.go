package main_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A probeReport is what hub/testdata/hostile found.
type probeReport struct {
	PPID    int `json:"ppid"`
	Results []struct {
		Target string   `json:"target"`
		Err    string   `json:"err"`
		Bytes  int      `json:"bytes"`
		Found  []string `json:"found"`
	} `json:"results"`
}

// secrets is a bot's folder with real secrets: the Telegram token in the
// environment, the model key in .env, the transcription key in a file
// TRANSCRIPTION_API_KEY_FILE names, and a database, mcpgram.yaml, a
// heartbeat and a chat log holding one of their own.
type secrets struct {
	token, key, fileKey, dbSecret string
	env, secretFile, db           string
	others                        []string // mcpgram.yaml, heartbeat, chat.log, oauth.key
}

func newSecrets(t *testing.T, dir string) secrets {
	t.Helper()
	u := strconv.FormatInt(time.Now().UnixNano(), 36)
	s := secrets{
		token: "123456:tok" + u, key: "sk-key" + u, fileKey: "sk-file" + u, dbSecret: "row-" + u,
		env: filepath.Join(dir, ".env"), secretFile: filepath.Join(dir, "secrets", "transcription"), db: filepath.Join(dir, "data", "mcpgram.db"),
		others: []string{filepath.Join(dir, "mcpgram.yaml"), filepath.Join(dir, "data", "heartbeat"), filepath.Join(dir, "data", "chat.log"), filepath.Join(dir, "data", "oauth.key")},
	}
	files := map[string]string{
		s.env: "OPENAI_API_KEY=" + s.key + "\n", s.secretFile: s.fileKey, s.db: "SQLite format 3\x00" + s.dbSecret,
	}
	for _, o := range s.others {
		files[o] = "# " + s.dbSecret + "\n"
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s secrets) needles() []string { return []string{s.token, s.key, s.fileKey, s.dbSecret} }

// environ is the bot's environment: the token, where its secret file is,
// and where its database is.
func (s secrets) environ(mode string) []string {
	return []string{"TELEGRAM_BOT_TOKEN=" + s.token, "TRANSCRIPTION_API_KEY_FILE=" + s.secretFile, "DATABASE_PATH=./data/mcpgram.db", "MCP_SANDBOX=" + mode}
}

// probe has the real binary call the hostile server's probe, as an
// operator's `mcp call` does, and returns its report.
func probe(t *testing.T, b *binary, s secrets, settings, mode string, files []string) probeReport {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"needles": s.needles(), "files": files})
	stdout, stderr, code := b.run(s.environ(mode), "--mcp-settings", settings, "mcp", "call", "hostile", "probe", string(args))
	if code != 0 {
		t.Fatalf("mcp call in mode %s: exit %d\nstdout: %s\nstderr: %s", mode, code, stdout, stderr)
	}
	var rep probeReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("probe report: %v\n%s", err, stdout)
	}
	return rep
}

// A server is a stranger (docs/security.md): run by the real binary, with
// real secrets in its environment and files, the hostile test server gets
// none of them. In the sandbox (bubblewrap here, or Landlock), its reads
// of /proc/<ppid>/environ and /proc/<ppid>/mem, of every environment it
// can see, and of the database, the settings file, .env and the secret
// file (and mcpgram.yaml, the heartbeat and the chat log) are all refused
// or come back empty, though its own folder is in the database's. With
// the sandbox off, the same reads succeed where the files are open to
// others, and, where the bot does not run as root, the bot's memory too:
// only the environment, wiped by the bot, is clean.
func TestServersCannotReachTheBotsSecrets(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	s := newSecrets(t, b.dir)
	for _, mode := range []string{"auto", "landlock", "off"} {
		t.Run(mode, func(t *testing.T) {
			switch mode {
			case "auto":
				testenv.RequireSandbox(t, "bubblewrap")
			case "landlock":
				testenv.RequireSandbox(t, "landlock")
			}
			// A folder of its own in the bot's data folder, as the
			// memory server's.
			own := "./data/hostile/hostile.db"
			settings := testenv.WriteSettings(t, b.dir, map[string]any{"hostile": map[string]any{
				"command": testenv.TestServer(t, "hostile"), "env": map[string]string{"HOSTILE_DB_PATH": own},
			}})
			rep := probe(t, b, s, settings, mode, append([]string{s.db, settings, s.env, s.secretFile}, s.others...))
			if mode == "off" {
				checkUnconfined(t, s, settings, rep)
				return
			}
			if mode == "auto" && rep.PPID != 1 {
				t.Errorf("the server's parent is pid %d, want 1, bubblewrap's init: the bot must be out of its sight", rep.PPID)
			}
			for _, r := range rep.Results {
				if len(r.Found) > 0 {
					t.Errorf("%s: the server found %q", r.Target, r.Found)
				}
				if !strings.HasPrefix(r.Target, "/proc/") && r.Err == "" && r.Bytes > 0 {
					t.Errorf("%s: the server read %d bytes, want it refused", r.Target, r.Bytes)
				}
			}
		})
	}
}

// checkUnconfined is the control: with the sandbox off, the server reads
// the files, which are open to others, and so the test above can fail.
// The environment is read too, but holds no secret: the bot wiped it.
// Where the bot runs as root, the server runs as a user of its own, which
// reads neither the bot's environment nor its memory (TestServersNeverRunAsRoot).
func checkUnconfined(t *testing.T, s secrets, settings string, rep probeReport) {
	t.Helper()
	want := map[string][]string{
		s.db: {s.dbSecret}, s.env: {s.key}, s.secretFile: {s.fileKey}, settings: nil,
		s.others[0]: {s.dbSecret}, s.others[1]: {s.dbSecret}, s.others[2]: {s.dbSecret},
		"/proc/" + strconv.Itoa(rep.PPID) + "/environ": nil, "/proc/*/environ": nil,
	}
	for _, r := range rep.Results {
		w, ok := want[r.Target]
		if !ok {
			continue
		}
		if strings.HasSuffix(r.Target, "/environ") && r.Target != "/proc/*/environ" && os.Geteuid() == 0 && r.Bytes > 0 {
			t.Errorf("unconfined, %s was read by a server of the root bot: it runs as root", r.Target)
		}
		for _, n := range w {
			if !strings.Contains(strings.Join(r.Found, " "), n) {
				t.Errorf("unconfined, %s: found %q, want %q among them (%s)", r.Target, r.Found, n, r.Err)
			}
		}
		if w == nil && len(r.Found) > 0 {
			t.Errorf("unconfined, %s: found %q: the bot left a secret in its environment", r.Target, r.Found)
		}
	}
}

// Even unconfined, a server that runs as the bot's user but not as root
// cannot read the bot's environment or memory: the bot is not dumpable.
// The check runs the bot as nobody, which takes root to arrange.
func TestNonDumpableBotHidesFromItsUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("SKIPPED LOUDLY: running the bot as another user needs root")
	}
	b := buildBinary(t)
	dir := shared(t)
	bin := filepath.Join(dir, "bin")
	for _, src := range []string{b.path, testenv.TestServer(t, "hostile")} {
		copyExecutable(t, src, filepath.Join(bin, filepath.Base(src)))
	}
	s := newSecrets(t, dir)
	settings := testenv.WriteSettings(t, dir, map[string]any{"hostile": map[string]any{"command": filepath.Join(bin, "hostile")}})
	if err := os.Chmod(settings, 0o644); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"needles": s.needles()})
	cmd := exec.Command(filepath.Join(bin, "mcpgram"), "--mcp-settings", settings, "mcp", "call", "hostile", "probe", string(args))
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, s.environ("off")...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp call as nobody: %v\n%s", err, out)
	}
	var rep probeReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("probe report: %v\n%s", err, out)
	}
	proc := "/proc/" + strconv.Itoa(rep.PPID)
	for _, r := range rep.Results {
		if (r.Target == proc+"/environ" || r.Target == proc+"/mem") && (r.Err == "" || r.Bytes > 0 || len(r.Found) > 0) {
			t.Errorf("%s: read %d bytes (%q), want it refused to the bot's own user", r.Target, r.Bytes, r.Found)
		}
	}
}

// shared returns a temporary folder that another user may enter.
func shared(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	// The folders t.TempDir made, not the temporary folder itself.
	for d := dir; strings.HasPrefix(d, os.TempDir()+string(filepath.Separator)); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// mcp list says how each server runs: in which sandbox, or plainly that
// it is not sandboxed and why; a server whose entry would let it write
// beside the bot's database is refused, saying so and how to fix it (and
// is not called sandboxed: it runs in nothing), and mcp list exits 1; the
// log warns of each server that runs unconfined, and of MCP_SANDBOX=off.
func TestMCPListSaysHowServersAreSandboxed(t *testing.T) {
	testenv.RequireSandbox(t, "bubblewrap")
	path := settings(t, map[string]any{
		"own": map[string]any{"command": testenv.Bundled(t, "mcp-clock"), "sandbox": "off"},
		// A folder of its own in the bot's data folder, as the memory
		// server's.
		"neighbour": map[string]any{"command": testenv.Bundled(t, "mcp-clock"), "env": map[string]string{"CLOCK_DB": "./data/clock/clock.db"}},
		// Its file right beside the bot's database.
		"beside": map[string]any{"command": testenv.Bundled(t, "mcp-clock"), "env": map[string]string{"CLOCK_DB": "./data/clock.db"}},
	})
	db, _ := filepath.Abs(filepath.Join("data", "mcpgram.db"))
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	refused := `failed: not started: its env CLOCK_DB ("./data/clock.db") would let it write in ` + filepath.Dir(db) + ", which holds " + db + ", of the bot's own: point it at a folder of its own"
	// Unsandboxed, a server that runs as the bot's user may write what the
	// bot may; one of the root bot runs as a user of its own, and is
	// refused as it would be sandboxed.
	unsandboxed := "NOT SANDBOXED"
	if os.Geteuid() == 0 {
		unsandboxed = refused
	}
	tests := []struct {
		mode, calculator, own, neighbour, beside, log string
	}{
		{"auto", "sandboxed (bubblewrap)", "NOT SANDBOXED: its settings turn the sandbox off", "sandboxed (bubblewrap)", refused, ""},
		{"landlock", "sandboxed (landlock)", "NOT SANDBOXED: its settings turn the sandbox off", "sandboxed (landlock)", refused, ""},
		{"off", "NOT SANDBOXED: the sandbox is off for all servers", "NOT SANDBOXED: its settings turn the sandbox off", "NOT SANDBOXED", unsandboxed, "MCP servers run without a sandbox (MCP_SANDBOX=off)"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			if tt.mode == "landlock" {
				testenv.RequireSandbox(t, "landlock")
			}
			out, stderr, err := run(t, env{"MCP_SANDBOX": tt.mode}, "", "--mcp-settings", path, "mcp", "list")
			if failed := tt.beside == refused; (err != nil) != failed {
				t.Fatalf("mcp list: %v, want it to fail %v\n%s", err, failed, stderr)
			}
			for name, want := range map[string]string{"calculator": tt.calculator, "own": tt.own, "neighbour": tt.neighbour, "beside": tt.beside} {
				line := lineOf(out, name)
				if !strings.Contains(line, want) || (want != refused && !strings.Contains(line, "running")) {
					t.Errorf("%s: %q, want %q", name, line, want)
				}
				if want == refused && strings.Contains(line, "sandboxed") {
					t.Errorf("%s: %q calls a server that never ran sandboxed", name, line)
				}
			}
			if !strings.Contains(stderr, tt.log) || !strings.Contains(stderr, `server=own why="its settings turn the sandbox off"`) {
				t.Errorf("stderr = %q, want %q and a warning for own", stderr, tt.log)
			}
			if warned := strings.Contains(stderr, "server=calculator"); warned != (tt.mode == "off") {
				t.Errorf("stderr = %q: a warning for calculator %v, want %v", stderr, warned, tt.mode == "off")
			}
		})
	}
}

// A bot killed with SIGKILL takes its sandboxed servers along: bubblewrap
// ends the sandbox when the bot's thread that started it ends, and the
// hub starts every sandbox from a thread that lives as long as the hub.
func TestKilledBotTakesItsSandboxedServersAlong(t *testing.T) {
	t.Parallel()
	testenv.RequireSandbox(t, "bubblewrap")
	b := buildBinary(t)
	mark := strconv.FormatInt(time.Now().UnixNano(), 36)
	// A server deaf to its closed stdin and to SIGTERM: only the sandbox's
	// end ends it.
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"jobs": map[string]any{
		"command": testenv.TestServer(t, "echo"),
		"env":     map[string]string{"ECHO_MARK": mark, "ECHO_TERM_FILE": filepath.Join(b.dir, "state", "term"), "ECHO_IGNORE_TERM": "1"},
	}})
	t.Cleanup(func() { killMarked(mark) })
	// The terminal chat, waiting for a line that never comes: nothing is
	// in flight, so the server has nothing to write and no broken pipe to
	// end it when the bot dies.
	cmd := exec.Command(b.path, "--mcp-settings", settings, "chat")
	cmd.Dir = b.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "OPENAI_API_KEY=sk-x", "OPENAI_BASE_URL=http://127.0.0.1:9/v1"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out testenv.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testenv.Eventually(t, 30*time.Second, "the chat's prompt, its server running", func() bool {
		return strings.Contains(out.String(), "1 MCP servers running") && strings.Contains(out.String(), "> ")
	})
	if n := marked(mark); n < 2 {
		t.Fatalf("%d processes of the sandboxed server, want bubblewrap's and the server's", n)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	testenv.Eventually(t, 10*time.Second, "the sandbox to end with the bot", func() bool { return marked(mark) == 0 })
}

// marked counts the processes whose environment holds ECHO_MARK=mark.
func marked(mark string) int { return len(markedPIDs(mark)) }

func markedPIDs(mark string) []int {
	paths, _ := filepath.Glob("/proc/[0-9]*/environ")
	var pids []int
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "ECHO_MARK="+mark+"\x00") {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// killMarked kills what a failed test left running.
func killMarked(mark string) {
	for _, pid := range markedPIDs(mark) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// The bot takes its secrets out of its environment once read, and
// ${env:VAR} in the settings file still sees them: a server whose entry
// passes one on gets it, and only that one.
func TestSettingsStillExpandTheSecretsTheBotForgot(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"echo": map[string]any{
		"command": testenv.TestServer(t, "echo"), "env": map[string]string{"PASSED_ON": "${env:TELEGRAM_BOT_TOKEN}"},
	}})
	stdout, stderr, code := b.run([]string{"TELEGRAM_BOT_TOKEN=123:passed-on", "OPENAI_API_KEY=sk-kept-back"}, "--mcp-settings", settings, "mcp", "call", "echo", "env")
	if code != 0 || !strings.Contains(stdout, "PASSED_ON=123:passed-on") || strings.Contains(stdout, "sk-kept-back") {
		t.Errorf("exit %d, the server's environment:\n%s\nstderr: %s\nwant PASSED_ON=123:passed-on and no model key", code, stdout, stderr)
	}
}
