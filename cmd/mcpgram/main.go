// Command mcpgram is a Telegram bot whose model acts through MCP tools.
//
// Usage:
//
//	mcpgram run                      the Telegram bot
//	mcpgram chat                     the same agent in a terminal
//	mcpgram mcp list                 each MCP server with its status and tools
//	mcpgram mcp call SERVER TOOL ARGS  call one tool and print the result
//	mcpgram config                   the effective configuration, secrets masked
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
	"strings"
	"syscall"

	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `mcpgram: a Telegram bot whose model acts through MCP tools.

Usage:
  mcpgram run                          start the Telegram bot
  mcpgram chat                         talk to the same agent in this terminal
  mcpgram mcp list                     list MCP servers, their status and tools
  mcpgram mcp call SERVER TOOL [JSON]  call one tool and print the result
  mcpgram config                       print the effective configuration (secrets masked)
  mcpgram version                      print the version

Flags:
`

// exitError carries a process exit code for errors already reported.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	addOwnFolderToPath()
	err := Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv)
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
	for _, p := range filepath.SplitList(path) {
		if p == dir {
			return
		}
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+path)
}

// Main runs one mcpgram command; an end-to-end test calls it too.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) (string, bool)) error {
	fs := pflag.NewFlagSet("mcpgram", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	config.Flags(fs)
	user := fs.String("user", "local", "operator identity for `chat` and `mcp` (memories and history are kept per user)")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.SetInterspersed(true)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return exitError{2}
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return exitError{2}
	}
	if rest[0] == "version" {
		fmt.Fprintln(stdout, "mcpgram", version)
		return nil
	}
	cfg, err := config.Load(fs, getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	switch rest[0] {
	case "config":
		return cfg.Print(stdout)
	case "mcp":
		return mcpCommand(ctx, cfg, *user, rest[1:], stdout, stderr)
	case "chat":
		return chatCommand(ctx, cfg, *user, stdin, stdout, stderr)
	case "run":
		return runCommand(ctx, cfg, stderr)
	default:
		fmt.Fprintf(stderr, "mcpgram: unknown command %q\n\n", strings.Join(rest, " "))
		fs.Usage()
		return exitError{2}
	}
}
