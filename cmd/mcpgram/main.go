// Command mcpgram is a Telegram bot whose model acts through MCP tools.
//
// Usage (mcpgram --help, and --help on each command, say more):
//
//	mcpgram run                      the Telegram bot
//	mcpgram chat                     the same agent in a terminal
//	mcpgram mcp list                 each MCP server with its status and tools
//	mcpgram mcp call SERVER TOOL ARGS  call one tool and print the result
//	mcpgram mcp login SERVER         sign in to a remote server, for every chat
//	mcpgram mcp logout SERVER        end that sign-in, revoking its tokens
//	mcpgram config                   the effective configuration, secrets masked
//	mcpgram health                   exit 0 while the running bot polls Telegram
//	mcpgram version                  the version set at build time
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/hub/confine"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/internal/harden"
	"github.com/mcpgram/mcpgram/internal/suggest"
	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// exitError carries a process exit code for errors already reported.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// A usageError is a mistake in the command line: it is printed with a hint
// and exits 2, as command-line tools do. cmd, when set, is the command
// whose --help the hint points to (else the one that ran).
type usageError struct {
	err error
	cmd *cobra.Command
}

func (e usageError) Error() string { return e.err.Error() }

func main() {
	// A server's process starts as this program, to take on its bounds
	// and user before it becomes the server (see package confine).
	confine.Main(os.Args)
	// A PDF is read by this program started again, as a child bounded in
	// time and memory (see package media).
	media.PDFMain(os.Args)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	// Ctrl-C goes to the command: the terminal chat stops the running
	// request with it, every other command stops.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	addOwnFolderToPath()
	// The configuration reads a copy of the environment, so that the
	// secrets it finds can leave the process's own (protectSecrets).
	env := snapshotEnv(os.Environ())
	protectSecrets = hardenProcess
	err := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, env, interrupts)
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	default:
		fmt.Fprintln(os.Stderr, "mcpgram:", err)
		os.Exit(1)
	}
}

// protectSecrets, when set (main sets it; a test calling Main does not,
// and so leaves its own process as it is), runs once the configuration is
// read, before any MCP server starts.
var protectSecrets func(*config.Config)

// hardenProcess takes the secrets the configuration read out of the
// process's environment, where /proc/<pid>/environ would show them to any
// process of the same user (a child MCP server among them), and makes the
// process non-dumpable, which closes its memory to those that are not
// root. Root's children are kept out by their sandbox (see package hub).
func hardenProcess(cfg *config.Config) {
	if err := harden.ForgetEnv(cfg.SecretEnv()); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgram: warning:", err)
	}
	if err := harden.NotDumpable(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgram: warning:", err)
	}
}

// snapshotEnv returns a lookup over a copy of env.
func snapshotEnv(env []string) func(string) (string, bool) {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			if _, dup := m[k]; !dup {
				m[k] = v
			}
		}
	}
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// addOwnFolderToPath lets bundled servers that sit beside the mcpgram
// binary (bin/ after make build, /usr/local/bin in the image) be found by
// their bare names in mcp-settings.json.
func addOwnFolderToPath() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	dir := filepath.Dir(exe)
	path := os.Getenv("PATH")
	if slices.Contains(filepath.SplitList(path), dir) {
		return
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+path)
}

// Main runs one mcpgram command; an end-to-end test calls it too.
//
// interrupts delivers Ctrl-C (nil: never); for all but the chat it ends the
// command as SIGTERM, through ctx, does.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) (string, bool), interrupts <-chan os.Signal) error {
	root, stop := newRoot(ctx, stdin, stdout, stderr, getenv, interrupts)
	defer stop()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	var ue usageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue) || isCobraUsage(err):
		if ue.cmd != nil {
			cmd = ue.cmd
		}
		fmt.Fprintf(stderr, "mcpgram: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
		return exitError{2}
	}
	return err
}

// isCobraUsage tells cobra's own command-line errors, which it returns as
// plain errors, from those of the commands.
func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command ") || strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "unknown shorthand flag")
}

// newRoot builds the command tree. Cobra prints help asked for to stdout
// and gives every subcommand its own --help; errors come back to Main.
func newRoot(parent context.Context, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) (string, bool), interrupts <-chan os.Signal) (*cobra.Command, context.CancelFunc) {
	// ctx ends on Ctrl-C too, for every command but the chat.
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-interrupts:
			cancel()
		case <-ctx.Done():
		}
	}()
	root := &cobra.Command{
		Use:   "mcpgram",
		Short: "A Telegram bot whose model acts through MCP tools",
		Long: "mcpgram is a Telegram bot whose model acts through MCP tools: it runs the servers of mcp-settings.json and lets any OpenAI-compatible model call them.\n\n" +
			"Settings come from mcpgram.yaml, .env, the environment and the flags below (`mcpgram config` shows them). " +
			"Exit codes: 0 done, 1 failed (the reason on stderr), 2 a mistake in the command line.",
		Example: "  TELEGRAM_BOT_TOKEN=123456:ABC OPENAI_API_KEY=sk-... mcpgram run\n" +
			"  mcpgram chat\n" +
			"  mcpgram mcp call calculator calculate '{\"expression\": \"2 + 2\"}'",
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          commandArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(stderr)
			_ = cmd.Usage()
			return exitError{2}
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("mcpgram {{.Version}}\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{err, cmd} })
	config.Flags(root.PersistentFlags())
	user := root.PersistentFlags().String("user", "local", "operator identity for chat and mcp (memories and history are kept per user)")

	con := console{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	root.AddCommand(
		&cobra.Command{
			Use: "run", Short: "Start the Telegram bot", Args: noArgs,
			Long: "Start the Telegram bot: it starts the MCP servers, polls Telegram (or serves its webhook, TELEGRAM_MODE=webhook) and answers until SIGINT or SIGTERM, " +
				"when it lets running turns finish for up to 20 s. It needs TELEGRAM_BOT_TOKEN and the model's key (OPENAI_API_KEY); " +
				"ALLOWED_USER_IDS limits who may use it.",
			Example: "  TELEGRAM_BOT_TOKEN=123456:ABC OPENAI_API_KEY=sk-... mcpgram run\n" +
				"  mcpgram run --mcp-settings ./my-servers.json --log-level debug",
			RunE: con.configured(func(con console, _ []string) error { return runCommand(ctx, con) }),
		},
		&cobra.Command{
			Use: "chat", Short: "Talk to the same agent in this terminal", Args: noArgs,
			Long: "Talk to the same agent, tools and database as the bot, in this terminal, as the operator (--user, default local). " +
				"Questions' options are numbered, approvals asked y/n; /help lists the chat's commands. " +
				"Ctrl-C stops the running request; at the prompt it ends the chat. The log goes to chat.log beside the database.",
			Example: "  OPENAI_API_KEY=sk-... mcpgram chat\n" +
				"  mcpgram chat --model gpt-4o --user alice",
			RunE: con.configured(func(con console, _ []string) error {
				cancel() // the chat takes Ctrl-C itself
				return chatCommand(parent, con, *user, interrupts)
			}),
		},
		mcpCommands(ctx, con, user),
	)
	root.AddCommand(infoCommands(con)...)
	// Cobra's own help command gets its description and example here,
	// like every other command.
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Long = "Print the help of a command, as --help on that command does: what it does, its flags and examples. Without a command, mcpgram's own help."
			c.Example = "  mcpgram help\n  mcpgram help mcp call"
			c.Run, c.RunE = nil, helpTopic
		}
	}
	return root, cancel
}

// infoCommands are config, health and version: what the bot is set to,
// whether it runs, and which it is.
func infoCommands(con console) []*cobra.Command {
	return []*cobra.Command{
		{
			Use: "config", Short: "Print the effective configuration, secrets masked", Args: noArgs,
			Long:    "Print every setting as mcpgram reads it from defaults, mcpgram.yaml, .env, the environment and the flags, one NAME=value a line; secrets, and the credentials in URLs, are masked.",
			Example: "  mcpgram config\n  mcpgram config --config ./prod.yaml | grep MODEL",
			RunE:    con.configured(func(con console, _ []string) error { return con.cfg.Print(con.stdout) }),
		},
		{
			Use: "health", Short: "Exit 0 while the running bot polls Telegram, 1 otherwise (for Docker's HEALTHCHECK)", Args: noArgs,
			Long: "Exit 0 while the running bot is ready, 1 saying why otherwise: with HTTP_LISTEN set it asks the bot's /readyz (database, Telegram, model), " +
				"else it reads the heartbeat file beside the database, which must be under 90 s old and not marked stopped (a clean stop marks it).",
			Example: "  mcpgram health && echo ready",
			RunE:    con.configured(func(con console, _ []string) error { return healthCommand(con) }),
		},
		{
			Use: "version", Short: "Print the version", Args: noArgs,
			Long:    "Print the version set at build time (make build sets it from git describe); --version on mcpgram prints the same.",
			Example: "  mcpgram version",
			Run:     func(*cobra.Command, []string) { fmt.Fprintln(con.stdout, "mcpgram", version) },
		},
	}
}

// helpTopic prints the help of the command args name, as cobra's help
// command does, but refuses one that does not exist as a mistyped command
// is refused (a usage error naming the one probably meant) instead of
// printing mcpgram's own help as if it had been found.
func helpTopic(help *cobra.Command, args []string) error {
	cmd, rest, err := help.Root().Find(args)
	if err != nil {
		return usageError{err, help.Root()}
	}
	if len(rest) > 0 && cmd.HasAvailableSubCommands() {
		return commandArgs(cmd, rest)
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	return cmd.Help()
}

// commandArgs refuses a command that does not exist, naming the one
// probably meant, at cmd's level or, failing that, at any other ("list"
// is "mcpgram mcp list"), and listing those of cmd.
func commandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if best, ok := suggest.Closest(args[0], names); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	} else if best, ok := suggest.ClosestPath(args[0], commandPaths(cmd.Root())); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return usageError{fmt.Errorf("%s; the commands are: %s", msg, strings.Join(names, ", ")), cmd}
}

// commandPaths lists every command below root that can be run, by its
// whole path ("mcpgram mcp list"), parents before their children.
func commandPaths(root *cobra.Command) []string {
	var out []string
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		out = append(out, c.CommandPath())
		out = append(out, commandPaths(c)...)
	}
	return out
}

// noArgs refuses arguments to a command that takes none, as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%q takes no arguments, got %q", cmd.CommandPath(), strings.Join(args, " ")), cmd}
	}
	return nil
}
