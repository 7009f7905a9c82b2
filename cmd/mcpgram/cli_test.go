package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// binary is the real mcpgram, run as a person would, in a folder of its
// own with an environment that holds only what the test gives it.
type binary struct {
	t    testing.TB
	path string
	dir  string
}

func buildBinary(t testing.TB) *binary {
	t.Helper()
	return &binary{t: t, path: testenv.BuildPackage(t, "./cmd/mcpgram"), dir: testenv.OpenDir(t)}
}

// run returns stdout, stderr and the exit code.
func (b *binary) run(env []string, args ...string) (string, string, int) {
	b.t.Helper()
	cmd := exec.Command(b.path, args...)
	cmd.Dir = b.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// Each way a first start can go wrong ends in one line that names what is
// wrong and how to fix it, and exit 1: never a panic.
func TestStartupFailures(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	broken := filepath.Join(b.dir, "broken.json")
	if err := os.WriteFile(broken, []byte("{\n  \"mcpServers\": {\n    \"x\": {\"command\": }\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(b.dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"mcpServers": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file where a folder should be: unwritable even for root.
	notDir := filepath.Join(b.dir, "a-file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	model := []string{"OPENAI_API_KEY=sk-x", "OPENAI_BASE_URL=http://127.0.0.1:9/v1"}
	tests := []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"chat without a settings file", model, []string{"chat"}, []string{"no MCP settings file at " + filepath.Join(b.dir, "mcp-settings.json"), "--mcp-settings", "MCP_SETTINGS"}},
		{"run without a settings file", append(model, "TELEGRAM_BOT_TOKEN=1:x"), []string{"run"}, []string{"no MCP settings file", "--mcp-settings"}},
		{"mcp list without a settings file", nil, []string{"mcp", "list"}, []string{"no MCP settings file"}},
		{"broken settings file", model, []string{"--mcp-settings", broken, "chat"}, []string{"broken.json:3:", "fix the file"}},
		{"chat, unwritable database folder", append(model, "DATABASE_PATH="+filepath.Join(notDir, "db.sqlite")), []string{"--mcp-settings", empty, "chat"}, []string{"mkdir " + notDir + ": not a directory", "DATABASE_PATH", "to a file in a folder you may write"}},
		{"run, unwritable database folder", append(model, "TELEGRAM_BOT_TOKEN=1:x", "DATABASE_PATH="+filepath.Join(notDir, "db.sqlite")), []string{"--mcp-settings", empty, "run"}, []string{`mcpgram: open database "` + filepath.Join(notDir, "db.sqlite") + `": mkdir ` + notDir + ": not a directory (set DATABASE_PATH", "a-file", "DATABASE_PATH"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := b.run(tt.env, tt.args...)
			if code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr)
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Fatalf("it panicked:\n%s", stderr)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "mcpgram: ") {
				t.Errorf("stderr is not one line starting mcpgram: %q", stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if n := strings.Count(stderr, "open database"); n > 1 {
				t.Errorf("stderr %q says open database %d times, want once", stderr, n)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // part of it; "" means it must be empty
		stderr     string
		emptyOther bool
	}{
		{"unknown flag", []string{"--bogus"}, 2, "", "unknown flag: --bogus\nRun 'mcpgram --help' for usage.", true},
		{"unknown flag of a command", []string{"mcp", "list", "--bogus"}, 2, "", "unknown flag: --bogus\nRun 'mcpgram mcp list --help' for usage.", true},
		{"--version", []string{"--version"}, 0, "mcpgram ", "", true},
		{"version", []string{"version"}, 0, "mcpgram ", "", true},
		{"help", []string{"help"}, 0, "Available Commands:", "", true},
		{"--help", []string{"--help"}, 0, "mcp", "", true},
		{"run --help", []string{"run", "--help"}, 0, "Start the Telegram bot", "", true},
		{"mcp call --help", []string{"mcp", "call", "--help"}, 0, "mcpgram mcp call SERVER TOOL", "", true},
		{"no command", nil, 2, "", "Available Commands:", true},
		{"unknown command", []string{"fly"}, 2, "", `unknown command "fly" for "mcpgram"; the commands are: chat, config, health, mcp, run, version`, true},
		{"mistyped command", []string{"rn"}, 2, "", `unknown command "rn" for "mcpgram" (did you mean "run"?); the commands are: chat, config, health, mcp, run, version`, true},
		{"mistyped mcp command", []string{"mcp", "lst"}, 2, "", `unknown command "lst" for "mcpgram mcp" (did you mean "list"?); the commands are: call, list`, true},
		{"a command's usage points to its help", []string{"mcp", "lst"}, 2, "", "\nRun 'mcpgram mcp --help' for usage.", true},
		{"command of another level", []string{"list"}, 2, "", `unknown command "list" for "mcpgram" (did you mean "mcpgram mcp list"?)`, true},
		{"mistyped command of another level", []string{"lst"}, 2, "", `unknown command "lst" for "mcpgram" (did you mean "mcpgram mcp list"?)`, true},
		{"help of a command of another level", []string{"help", "lst"}, 2, "", `unknown command "lst" for "mcpgram" (did you mean "mcpgram mcp list"?)`, true},
		{"command of a level above", []string{"mcp", "config"}, 2, "", `unknown command "config" for "mcpgram mcp" (did you mean "mcpgram config"?)`, true},
		{"help of a command", []string{"help", "mcp", "call"}, 0, "mcpgram mcp call SERVER TOOL", "", true},
		{"help of a mistyped command", []string{"help", "rn"}, 2, "", `unknown command "rn" for "mcpgram" (did you mean "run"?); the commands are: chat, config, health, mcp, run, version`, true},
		{"help of a mistyped mcp command", []string{"help", "mcp", "lst"}, 2, "", `unknown command "lst" for "mcpgram mcp" (did you mean "list"?); the commands are: call, list`, true},
		{"help of an unknown command", []string{"help", "fly"}, 2, "", `unknown command "fly" for "mcpgram"; the commands are:`, true},
		{"mcp call with no argument", []string{"mcp", "call"}, 2, "", "mcp call needs SERVER and TOOL: `mcpgram mcp list` names them\nRun 'mcpgram mcp call --help' for usage.", true},
		{"mcp call with its JSON unquoted", []string{"mcp", "call", "calculator", "calculate", `{"expression":`, `"2"}`}, 2, "", "got 4 arguments: quote the JSON as one", true},
		{"mcp login with no server", []string{"mcp", "login"}, 2, "", "mcp login needs the SERVER to sign in to: `mcpgram mcp list` names them", true},
		{"mcp prompt with one argument", []string{"mcp", "prompt", "f"}, 2, "", "mcp prompt needs SERVER and the prompt's NAME", true},
		{"run with an argument", []string{"run", "now"}, 2, "", `"mcpgram run" takes no arguments`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := b.run(nil, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			check := func(what, got, want string) {
				if want != "" && !strings.Contains(got, want) {
					t.Errorf("%s %q lacks %q", what, got, want)
				}
				if want == "" && tt.emptyOther && got != "" {
					t.Errorf("%s = %q, want nothing", what, got)
				}
			}
			check("stdout", stdout, tt.stdout)
			check("stderr", stderr, tt.stderr)
		})
	}
}

// ${env:VAR} in mcp-settings.json is expanded from .env too, as
// docs/configuration.md says of every setting: the environment first, then .env.
func TestDotEnvReachesSettings(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"calculator": map[string]any{
			"command": testenv.Bundled(t, "mcp-calculator"),
			"env":     map[string]string{"FROM_DOTENV": "${env:ONLY_IN_DOTENV}"},
		},
	})
	stdout, stderr, code := b.run(nil, "--mcp-settings", settings, "mcp", "list")
	if code != 1 || !strings.Contains(stdout, "ONLY_IN_DOTENV") {
		t.Fatalf("without .env: exit %d, stdout %q; want the server failed naming ONLY_IN_DOTENV (stderr %q)", code, stdout, stderr)
	}
	if err := os.WriteFile(filepath.Join(b.dir, ".env"), []byte("ONLY_IN_DOTENV=yes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = b.run(nil, "--mcp-settings", settings, "mcp", "list")
	if code != 0 || !strings.Contains(stdout, "running") {
		t.Errorf("with .env: exit %d, stdout %q, stderr %q; want the server running", code, stdout, stderr)
	}
}

// The repository's mcp-settings.json works from any folder: its relative
// paths (the memory server's ./data/memory/memory.db) are relative to the
// settings file's folder, in every sandbox, and nothing lands in the
// folder mcpgram runs in.
func TestShippedSettingsWorkFromAnywhere(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	shipped, err := os.ReadFile(filepath.Join(testenv.Root(t), "mcp-settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + filepath.Dir(testenv.Bundled(t, "mcp-memory")) + string(os.PathListSeparator) + os.Getenv("PATH")
	for _, mode := range []string{"auto", "landlock", "off"} {
		t.Run(mode, func(t *testing.T) {
			switch mode {
			case "auto":
				testenv.RequireSandbox(t, "bubblewrap")
			case "landlock":
				testenv.RequireSandbox(t, "landlock")
			}
			dir := testenv.OpenDir(t)
			settings := filepath.Join(dir, "mcp-settings.json")
			if err := os.WriteFile(settings, shipped, 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := b.run([]string{path, "MCP_SANDBOX=" + mode}, "--mcp-settings", settings, "mcp", "list")
			if code != 0 || !strings.Contains(lineOf(stdout, "memory"), "running") {
				t.Fatalf("mcp list: exit %d\n%s\n%s", code, stdout, stderr)
			}
			// A server that does not run is in no sandbox, and not said to be.
			if line := lineOf(stdout, "filesystem"); !strings.Contains(line, "disabled") || strings.Contains(line, "sandboxed (") {
				t.Errorf("filesystem: %q, want disabled and not called sandboxed", line)
			}
			if _, err := os.Stat(filepath.Join(dir, "data", "memory", "memory.db")); err != nil {
				t.Errorf("the memory server's database is not beside the settings file: %v", err)
			}
			if _, err := os.Stat(filepath.Join(b.dir, "data")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("data/ was made in the folder mcpgram runs in: %v", err)
			}
		})
	}
}

// An install of the layout mcpgram shipped before servers had folders of
// their own (the memory server's ./data/memory.db beside the bot's
// ./data/mcpgram.db) keeps working: at the first start the memory
// server's database and journals move, as they are, into ./data/memory/,
// the entry is pointed there, the log says so, and the next start finds
// nothing to move.
func TestUpgradeMovesTheMemoryServersFile(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	shipped, err := os.ReadFile(filepath.Join(testenv.Root(t), "mcp-settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(shipped), "./data/memory/memory.db", "./data/memory.db", 1)
	dir := testenv.OpenDir(t)
	settings := filepath.Join(dir, "mcp-settings.json")
	if err := os.WriteFile(settings, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + filepath.Dir(testenv.Bundled(t, "mcp-memory")) + string(os.PathListSeparator) + os.Getenv("PATH")
	// The old layout, made by the old rules: the bot's database elsewhere
	// for now, so that the memory server may still write in data/.
	env := []string{path, "DATABASE_PATH=" + filepath.Join(testenv.OpenDir(t), "mcpgram.db")}
	if stdout, stderr, code := b.run(env, "--mcp-settings", settings, "mcp", "list"); code != 0 {
		t.Fatalf("old layout: exit %d\n%s\n%s", code, stdout, stderr)
	}
	oldDB := filepath.Join(dir, "data", "memory.db")
	before, err := os.Stat(oldDB)
	if err != nil {
		t.Fatal(err)
	}
	// The bot's database in data/, as the old install had it.
	env[1] = "DATABASE_PATH=" + filepath.Join(dir, "data", "mcpgram.db")
	stdout, stderr, code := b.run(env, "--mcp-settings", settings, "mcp", "list")
	if code != 0 || !strings.Contains(lineOf(stdout, "memory"), "running") {
		t.Fatalf("upgraded: exit %d\n%s\n%s", code, stdout, stderr)
	}
	newDB := filepath.Join(dir, "data", "memory", "memory.db")
	after, err := os.Stat(newDB)
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("%s: %v, want the same file as the old %s", newDB, err, oldDB)
	}
	if _, err := os.Stat(oldDB); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there: %v", oldDB, err)
	}
	if got, _ := os.ReadFile(settings); !strings.Contains(string(got), `"MEMORY_DB_PATH": "./data/memory/memory.db"`) {
		t.Errorf("settings file not pointed at the new place:\n%s", got)
	}
	if !strings.Contains(stderr, "moved a server's file out of the bot's data folder") {
		t.Errorf("the log does not say what moved:\n%s", stderr)
	}
	if _, stderr, _ := b.run(env, "--mcp-settings", settings, "mcp", "list"); strings.Contains(stderr, "moved a server's file") {
		t.Errorf("the next start moved something again:\n%s", stderr)
	}
}

// mcp list names what the settings file holds and mcpgram does not read,
// with the field probably meant, and reads a VS Code mcp.json: warnings,
// not failures.
func TestMCPListWarnsOfUnreadFields(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := filepath.Join(b.dir, "mcp.json")
	calc := testenv.Bundled(t, "mcp-calculator")
	if err := os.WriteFile(settings, []byte(`{"servers": {"calculator": {"type": "stdio", "command": "`+calc+`", "disable": true}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := b.run(nil, "--mcp-settings", settings, "mcp", "list")
	if code != 0 || !strings.Contains(lineOf(stdout, "calculator"), "running") {
		t.Errorf("exit %d, stdout %q; want calculator running", code, stdout)
	}
	if want := "mcpgram: warning: " + settings + `:1: server "calculator": unknown field "disable" (did you mean "disabled"?): ignored`; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}
}

// mcp call starts the server it calls and no other, says what exists when
// the server or tool named does not, puts a tool's error on stderr, and
// exits as docs/commands.md says: 0 done, 1 failed, 2 a mistake in the command line.
func TestMCPCall(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	mark := filepath.Join(t.TempDir(), "started")
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"calculator": map[string]any{"command": testenv.Bundled(t, "mcp-calculator")},
		"clock":      map[string]any{"command": testenv.Bundled(t, "mcp-clock")},
		"broken":     map[string]any{"command": "./no-such-server"},
		// Started, it would leave its mark before answering: Start
		// waits for every server's answer.
		"marker": map[string]any{"command": "sh", "args": []string{"-c", "touch " + mark + "; exec " + testenv.TestServer(t, "echo")}, "sandbox": "off"},
		"off":    map[string]any{"command": testenv.Bundled(t, "mcp-clock"), "disabled": true},
	})
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string // parts; "" means empty
	}{
		{"arithmetic", []string{"calculator", "calculate", `{"expression": "25 * 48 + 120 / 4"}`}, 0, "1230", ""},
		{"no arguments", []string{"clock", "current_time"}, 0, "UTC", ""},
		{"tool error", []string{"calculator", "calculate", `{"expression": "2 +"}`}, 1, "", "error:"},
		{"bad json", []string{"calculator", "calculate", `{expression`}, 2, "", `arguments must be a JSON object, such as '{"message": "hi"}'`},
		{"json that is no object", []string{"calculator", "calculate", `[1, 2]`}, 2, "", "arguments must be a JSON object"},
		{"mistyped server", []string{"calculater", "calculate", `{}`}, 2, "", `no server "calculater" in ` + settings + ` (did you mean "calculator"?); the servers are: broken, calculator, clock, marker, off`},
		{"mistyped tool", []string{"calculator", "calcualte", `{}`}, 2, "", `server "calculator" has no tool "calcualte" (did you mean "calculate"?); its tools are: calculate`},
		{"no tool", []string{"calculator"}, 2, "", "mcp call calculator needs the TOOL to call after the server; its tools are: calculate\nRun 'mcpgram mcp call --help' for usage."},
		{"server that fails", []string{"broken", "x"}, 1, "", `server "broken" did not start: command ` + filepath.Join(b.dir, "no-such-server")},
		{"disabled server", []string{"off", "current_time"}, 1, "", `server "off" is disabled in ` + settings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := b.run(nil, append([]string{"--mcp-settings", settings, "mcp", "call"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stdout %q, stderr %q)", code, tt.code, stdout, stderr)
			}
			for _, c := range []struct{ what, got, want string }{{"stdout", stdout, tt.stdout}, {"stderr", stderr, tt.stderr}} {
				if c.want == "" && c.got != "" {
					t.Errorf("%s = %q, want nothing: no other server started, none failed", c.what, c.got)
				}
				if !strings.Contains(c.got, c.want) {
					t.Errorf("%s %q lacks %q", c.what, c.got, c.want)
				}
			}
		})
	}
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a call to another server started marker: %v", err)
	}
}

// Every command's --help says what it does, its flags and an example.
// The commands are found by walking the help itself, from the root's
// "Available Commands" down, so that a command added later is checked too.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	var seen []string
	var walk func(cmd []string)
	walk = func(cmd []string) {
		name := strings.Join(append([]string{"mcpgram"}, cmd...), " ")
		seen = append(seen, name)
		stdout, stderr, code := b.run(nil, append(cmd, "--help")...)
		t.Run(name, func(t *testing.T) {
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			desc, _, _ := strings.Cut(stdout, "\n\nUsage:")
			if len(desc) < 60 {
				t.Errorf("the description is %q, want a sentence or two", desc)
			}
			for _, want := range []string{"Usage:\n  " + name, "Flags:\n", "-h, --help", "--mcp-settings"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("--help lacks %q:\n%s", want, stdout)
				}
			}
			if ex := strings.Join(helpSection(stdout, "Examples:"), "\n"); !strings.Contains(ex, name) {
				t.Errorf("--help has no example of %s:\n%s", name, stdout)
			}
			for _, f := range helpFlags(stdout) {
				if !flagLineRE.MatchString(f) {
					t.Errorf("the flag line %q says nothing of the flag", f)
				}
			}
		})
		for _, sub := range helpCommands(stdout) {
			walk(append(slices.Clip(cmd), sub))
		}
	}
	walk(nil)
	for _, want := range []string{"mcpgram run", "mcpgram chat", "mcpgram mcp list", "mcpgram mcp call", "mcpgram config", "mcpgram health", "mcpgram version", "mcpgram help"} {
		if !slices.Contains(seen, want) {
			t.Errorf("the walk did not reach %s; it reached %q", want, seen)
		}
	}
}

// flagLineRE is a flag line of a help: the flag, two spaces or more, and
// what it is.
var flagLineRE = regexp.MustCompile(`^\s+(-\w, )?--[\w-]+( \w+)?\s{2,}\S`)

// helpCommands are the names under "Available Commands:" of a help.
func helpCommands(help string) []string {
	var names []string
	for _, line := range helpSection(help, "Available Commands:") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// helpFlags are the lines under "Flags:" and "Global Flags:" of a help.
func helpFlags(help string) []string {
	return append(helpSection(help, "Flags:"), helpSection(help, "Global Flags:")...)
}

// helpSection is the lines of a help's section, from its title to the
// next blank line.
func helpSection(help, title string) []string {
	_, rest, ok := strings.Cut(help, "\n"+title+"\n")
	if !ok {
		return nil
	}
	body, _, _ := strings.Cut(rest, "\n\n")
	return strings.Split(strings.TrimRight(body, "\n"), "\n")
}

// A server the settings file does not have is a mistake in the command
// line for every command that takes one: exit 2, naming the one probably
// meant and those there are, and pointing to that command's help.
func TestUnknownServerIsAUsageError(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{
		"calculator": map[string]any{"command": testenv.Bundled(t, "mcp-calculator")},
	})
	for _, args := range [][]string{
		{"mcp", "call", "calculater", "calculate"},
		{"mcp", "prompt", "calculater", "greet"},
		{"mcp", "login", "calculater"},
		{"mcp", "logout", "calculater"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			_, stderr, code := b.run(nil, append([]string{"--mcp-settings", settings}, args...)...)
			want := `no server "calculater" in ` + settings + ` (did you mean "calculator"?); the servers are: calculator` +
				"\nRun 'mcpgram " + strings.Join(args[:2], " ") + " --help' for usage."
			if code != 2 || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
			}
		})
	}
}
