package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/internal/lines"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// startHub starts every enabled server of the settings file, asking
// through ask (nil: declaring no elicitation) what a server asks mid-call.
// The CLI logs only warnings: an operator reads the table, not the
// start-up chatter.
func startHub(ctx context.Context, cfg *config.Config, logger *slog.Logger, ask hub.Elicitor, auth hub.Authorizer) (*hub.Hub, error) {
	h, err := newHub(cfg, logger, false, nil, ask, auth)
	if err != nil {
		return nil, err
	}
	logSandboxes(cfg, logger)
	if err := h.Start(ctx); err != nil {
		closeAndWarn(h, logger)
		return nil, err
	}
	return h, nil
}

func cliLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	c := *cfg
	if c.LogLevel < slog.LevelWarn {
		c.LogLevel = slog.LevelWarn
	}
	return c.Logger(w)
}

// mcpCommands builds "mcp list", "mcp call" and "mcp login", the
// operator's view of the servers without the model. list and call sign in
// to a server that asks, in the browser, when someone is there to: stdin
// is a terminal, or $BROWSER names a program.
func mcpCommands(ctx context.Context, withConfig func(func(*config.Config, []string) error) func(*cobra.Command, []string) error, user *string, getenv func(string) (string, bool), stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	mcp := &cobra.Command{Use: "mcp", Short: "List the MCP servers, call one tool, or sign in to one", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{errors.New("mcp needs a command: list, call or login")}
		}}
	browser, _ := getenv("BROWSER")
	interactive := isTerminal(stdin) || strings.TrimSpace(browser) != ""
	mcp.AddCommand(
		&cobra.Command{
			Use: "list", Short: "Each server with its status and tools; exits 1 if any failed", Args: noArgs,
			RunE: withConfig(func(cfg *config.Config, _ []string) error {
				logger := cliLogger(cfg, stderr)
				auth, err := newCLIAuth(ctx, cfg, logger, getenv, stderr, interactive)
				if err != nil {
					return err
				}
				defer closeAndWarn(auth, logger)
				h, err := startHub(ctx, cfg, logger, nil, auth)
				if err != nil {
					return err
				}
				defer closeAndWarn(h, logger)
				cat := h.Catalog()
				if err := printServers(stdout, cat); err != nil {
					return err
				}
				if n := failedServers(cat); n > 0 {
					fmt.Fprintf(stderr, "mcpgram: %d of %d servers failed\n", n, len(cat.Servers))
					return exitError{1}
				}
				return nil
			}),
		},
		&cobra.Command{
			Use: "call SERVER TOOL ['{\"arg\": \"value\"}']", Short: "Call one tool and print the result; exits 1 on error",
			Long: "Call one tool and print the result; exits 1 on error.\n\n" +
				"What the server asks mid-call is asked on stderr and answered on stdin when stdin is a terminal; " +
				"otherwise a form is answered with each field's default (declined when a required field has none) and a URL declined.",
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) < 2 || len(args) > 3 {
					return usageError{fmt.Errorf("mcp call takes SERVER TOOL and optional JSON arguments, got %d arguments", len(args))}
				}
				return nil
			},
			RunE: withConfig(func(cfg *config.Config, args []string) error {
				return callTool(ctx, cfg, *user, args, getenv, interactive, stdin, stdout, stderr)
			}),
		},
		&cobra.Command{
			Use:   "login SERVER",
			Short: "Sign in to a remote server that asks for it, for every chat",
			Long: "Sign in to a remote MCP server that asks for it (MCP authorization, OAuth 2.1), as the operator: " +
				"the sign-in serves every chat. It prints the address to open in a browser, and opens it with $BROWSER when set; " +
				"the browser comes back to a port of 127.0.0.1 that mcpgram listens on. The tokens are kept in the database, " +
				"sealed with OAUTH_KEY.",
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) != 1 {
					return usageError{fmt.Errorf("mcp login takes one SERVER, got %d arguments", len(args))}
				}
				return nil
			},
			RunE: withConfig(func(cfg *config.Config, args []string) error {
				return loginCommand(ctx, cfg, args[0], getenv, stdout, stderr)
			}),
		},
	)
	return mcp
}

func failedServers(cat hub.Catalog) int {
	n := 0
	for _, s := range cat.Servers {
		if s.Status == hub.StatusFailed {
			n++
		}
	}
	return n
}

func callTool(ctx context.Context, cfg *config.Config, user string, args []string, getenv func(string) (string, bool), interactive bool, stdin io.Reader, stdout, stderr io.Writer) error {
	callArgs := map[string]any{}
	if len(args) == 3 && strings.TrimSpace(args[2]) != "" {
		if err := json.Unmarshal([]byte(args[2]), &callArgs); err != nil {
			return fmt.Errorf("arguments must be a JSON object: %w", err)
		}
	}
	logger := cliLogger(cfg, stderr)
	ask := &terminalAsker{out: stderr, interactive: isTerminal(stdin)}
	if ask.interactive {
		ask.lines = readLines(stdin)
	}
	auth, err := newCLIAuth(ctx, cfg, logger, getenv, stderr, interactive)
	if err != nil {
		return err
	}
	defer closeAndWarn(auth, logger)
	h, err := startHub(ctx, cfg, logger, ask, auth)
	if err != nil {
		return err
	}
	defer closeAndWarn(h, logger)
	res, err := h.CallTool(ctx, hub.Caller{UserID: user, ChatID: user}, args[0], args[1], callArgs)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	if res.IsError {
		return exitError{1}
	}
	return nil
}

// isTerminal reports whether r is a terminal a person types into (not
// /dev/null, which is a character device too).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printServers writes one line per server, one indented line per tool,
// and a line marked "!" for each note of what the hub refused or cut of
// the server's catalog. What a server wrote goes through render.Visible:
// an escape sequence or a direction override would rewrite the terminal.
func printServers(w io.Writer, cat hub.Catalog) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range cat.Servers {
		fmt.Fprintf(tw, "%s\t%s\n", render.Visible(s.Name), render.Visible(serverState(s)))
		for _, t := range s.Tools {
			fmt.Fprintf(tw, "  %s\t%s\n", t.Name, render.Visible(summary(t.Description, 90)))
		}
		for _, n := range s.Notes {
			fmt.Fprintf(tw, "  ! %s\n", render.Visible(n))
		}
	}
	return tw.Flush()
}

// serverState says in a few words how a server is, and how it is
// confined.
func serverState(s hub.ServerInfo) string {
	var out string
	switch s.Status {
	case hub.StatusRunning:
		out = fmt.Sprintf("running, %d tools", len(s.Tools))
		if len(s.Tools) == 1 {
			out = "running, 1 tool"
		}
	case hub.StatusFailed:
		out = "failed: " + s.Error
		if s.LastStderr != "" && !strings.Contains(s.Error, s.LastStderr) {
			out += " (stderr: " + s.LastStderr + ")"
		}
	default:
		out = string(s.Status)
	}
	return out + sandboxState(s)
}

// sandboxState says how a stdio server is confined; a server that would
// run unconfined, or whose sandbox cannot hide some of the bot's files,
// is said so plainly. Remote servers run elsewhere: nothing to say.
func sandboxState(s hub.ServerInfo) string {
	switch {
	case s.Sandbox != "" && len(s.Exposed) > 0:
		return "; sandboxed (" + s.Sandbox + ") but it can read " + strings.Join(s.Exposed, ", ") + ", in a folder it needs"
	case s.Sandbox != "":
		return "; sandboxed (" + s.Sandbox + ")"
	case s.NotSandboxed != "" && s.Status == hub.StatusFailed && strings.Contains(s.Error, s.NotSandboxed):
		return ""
	case s.NotSandboxed != "":
		return "; NOT SANDBOXED: " + s.NotSandboxed
	}
	return ""
}

// summary is the first line of a description, cut to max runes so that
// the table stays readable.
func summary(s string, max int) string {
	s = lines.First(s)
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// printResult writes text parts as they are and describes the others.
func printResult(w io.Writer, res *hub.Result) {
	if res.IsError {
		fmt.Fprintln(w, "error:")
	}
	for _, c := range res.Content {
		switch {
		case c.Text != "":
			fmt.Fprintln(w, c.Text)
		case c.Type == hub.ContentResourceLink:
			fmt.Fprintf(w, "[link %s %s]\n", c.Name, c.URI)
		default:
			fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, c.MIMEType, len(c.Data))
		}
	}
}
