package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/internal/lines"
	"github.com/mcpgram/mcpgram/internal/suggest"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// startHub starts every enabled server of the settings file, asking
// nobody what a server asks mid-call (declaring no elicitation). The CLI
// logs only warnings: an operator reads the table, not the start-up
// chatter.
func startHub(ctx context.Context, cfg *config.Config, logger *slog.Logger, auth mcpgram.Authorizer) (*hub.Hub, error) {
	h, err := newHub(cfg, logger, hubParts{Auth: auth})
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

// startSigned starts every enabled server of an operator's command,
// signing in to one that asks when someone is there to; done closes both.
func startSigned(ctx context.Context, con console) (h *hub.Hub, done func(), err error) {
	logger := cliLogger(con.cfg, con.stderr)
	auth, err := newCLIAuth(ctx, con, logger, con.interactive())
	if err != nil {
		return nil, nil, err
	}
	if h, err = startHub(ctx, con.cfg, logger, auth); err != nil {
		closeAndWarn(auth, logger)
		return nil, nil, err
	}
	return h, func() { closeAndWarn(h, logger); closeAndWarn(auth, logger) }, nil
}

func cliLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	c := *cfg
	if c.LogLevel < slog.LevelWarn {
		c.LogLevel = slog.LevelWarn
	}
	return c.Logger(w)
}

// mcpCommands builds "mcp list", "mcp call", "mcp prompts", "mcp prompt"
// and "mcp login", the operator's view of the servers without the model.
// list and call sign in to a server that asks, in the browser, when
// someone is there to: stdin is a terminal, or $BROWSER names a program.
func mcpCommands(ctx context.Context, con console, user *string) *cobra.Command {
	mcp := &cobra.Command{Use: "mcp", Short: "List the MCP servers, call one tool, get one prompt, or sign in to one or out of it", Args: commandArgs,
		Long:    "The operator's view of the MCP servers of the settings file, without the model: list them, call one tool, list and get their prompts, or sign in to one that asks, and out again.",
		Example: "  mcpgram mcp list\n  mcpgram mcp call clock current_time '{\"timezone\": \"Asia/Tokyo\"}'\n  mcpgram mcp prompts\n  mcpgram mcp login notes\n  mcpgram mcp logout notes",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{err: errors.New("mcp needs a command: list, call, prompts, prompt, login or logout")}
		}}
	mcp.AddCommand(
		&cobra.Command{
			Use: "list", Short: "Each server with its status and tools; exits 1 if any is down", Args: noArgs,
			Long: "Start every enabled server of the settings file and print each with its status and how it is sandboxed: running with its tools, disabled, " +
				"or why it is down and the fix (failed or restarting with the reason and the last line of its stderr; a remote server's needs sign-in, sign-in unusable or unreachable). " +
				"What the settings file holds that mcpgram does not read is warned of on stderr. Exits 1 if any server is down, remote ones too.",
			Example: "  mcpgram mcp list\n  mcpgram mcp list --mcp-settings ~/.vscode/mcp.json",
			RunE: con.configured(func(con console, _ []string) error {
				h, done, err := startSigned(ctx, con)
				if err != nil {
					return err
				}
				defer done()
				cat := h.Catalog()
				if err := printServers(con.stdout, cat); err != nil {
					return err
				}
				// Ignored, not failed: a file shared with other hosts
				// may hold what they read and mcpgram does not.
				for _, w := range h.Warnings() {
					fmt.Fprintln(con.stderr, "mcpgram: warning: "+w)
				}
				if n := failedServers(cat); n > 0 {
					fmt.Fprintf(con.stderr, "mcpgram: %d of %d servers failed\n", n, len(cat.Servers))
					return exitError{1}
				}
				return nil
			}),
		},
		&cobra.Command{
			Use: "call SERVER TOOL ['{\"arg\": \"value\"}']", Short: "Call one tool and print the result; exits 1 on error",
			Long: "Start SERVER alone, call its TOOL with the JSON object of arguments (none: {}), and print the result on stdout. " +
				"A tool's error goes to stderr and exits 1, as does a server that does not start; " +
				"a server or tool that does not exist, or arguments that are no JSON object, exit 2, naming what exists.\n\n" +
				"What the server asks mid-call is asked on stderr and answered on stdin when stdin is a terminal; " +
				"otherwise a form is answered with each field's default (declined when a required field has none) and a URL declined. " +
				"A server that acts as each user's own account is called as --user (default local); one not yet connected is signed in to, as mcp login does, " +
				"when stdin is a terminal or $BROWSER is set, and otherwise the call fails saying nobody can be asked to connect.",
			Example: "  mcpgram mcp call calculator calculate '{\"expression\": \"25 * 48 + 120 / 4\"}'\n" +
				"  mcpgram mcp call clock current_time",
			Args: callArgs,
			RunE: con.configured(func(con console, args []string) error {
				return callTool(ctx, con, *user, args)
			}),
		},
	)
	mcp.AddCommand(signInCommands(ctx, con)...)
	mcp.AddCommand(promptCommands(ctx, con, user)...)
	return mcp
}

// signInCommands are mcp login and mcp logout: the operator's sign-in to a
// remote server that asks for one, and its end.
func signInCommands(ctx context.Context, con console) []*cobra.Command {
	return []*cobra.Command{
		{
			Use:   "login SERVER",
			Short: "Sign in to a remote server that asks for it, for every chat",
			Long: "Sign in to a remote MCP server that asks for it (MCP authorization, OAuth 2.1), as the operator: " +
				"the sign-in serves every chat. It prints the address to open in a browser, and opens it with $BROWSER when set; " +
				"the browser comes back to a port of 127.0.0.1 that mcpgram listens on. The tokens are kept in the database, " +
				"sealed with OAUTH_KEY, or, where none is set on SQLite, with a key this first sign-in makes in oauth.key beside the database (keep it with the database). " +
				"With DATABASE_URL, every instance must share one OAUTH_KEY, so it must be set.",
			Example: "  mcpgram mcp login tracker\n" +
				"  BROWSER=firefox mcpgram mcp login tracker",
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) != 1 {
					return usageError{err: oneServer("mcp login", "to sign in to", len(args))}
				}
				return nil
			},
			RunE: con.configured(func(con console, args []string) error {
				return loginCommand(ctx, con, args[0])
			}),
		},
		{
			Use:   "logout SERVER",
			Short: "End the operator's sign-in to a remote server, revoking its tokens",
			Long: "End the operator's sign-in to a remote MCP server (the one `mcpgram mcp login` made, which every chat shares): " +
				"its tokens are deleted from the database, which every instance sharing it sees at its next request to the server, " +
				"and revoked by the server's authorization server where it offers revocation (RFC 7009). " +
				"Exits 1 if the revocation fails (the tokens are deleted all the same, and stay good at the authorization server until they expire), " +
				"and 2 if SERVER is not in the settings file and not signed in to; not signed in is nothing to do.",
			Example: "  mcpgram mcp logout tracker",
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) != 1 {
					return usageError{err: oneServer("mcp logout", "to sign out of", len(args))}
				}
				return nil
			},
			RunE: con.configured(func(con console, args []string) error {
				return logoutCommand(ctx, con, args[0])
			}),
		},
	}
}

// failedServers counts the servers that cannot serve: failed, or
// failed and being retried (a remote server that needs a sign-in or
// cannot be reached).
// callArgs refuses an mcp call with no SERVER, or with more than SERVER,
// TOOL and one JSON object, saying what is missing or too many. SERVER
// alone is left to callTool, which names the server's tools.
func callArgs(_ *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return usageError{err: errors.New("mcp call needs SERVER and TOOL: `mcpgram mcp list` names them")}
	case len(args) > 3:
		return usageError{err: fmt.Errorf(`mcp call takes SERVER, TOOL and one JSON object of arguments, got %d arguments: quote the JSON as one, such as '{"a": 1, "b": 2}'`, len(args))}
	}
	return nil
}

// oneServer is the usage error of a command that takes one SERVER and
// got n arguments: what is missing, or what is too many.
func oneServer(command, what string, n int) error {
	if n == 0 {
		return fmt.Errorf("%s needs the SERVER %s: `mcpgram mcp list` names them", command, what)
	}
	return fmt.Errorf("%s takes one SERVER, got %d arguments", command, n)
}

// knownServer refuses name where the settings file has no such server,
// as a usage error (exit 2) naming the one probably meant and those
// there are: one rule for every command that takes a SERVER.
func knownServer(cfg *config.Config, cat mcpgram.Catalog, name string) error {
	if _, ok := cat.Server(name); ok {
		return nil
	}
	var names []string
	for _, s := range cat.Servers {
		names = append(names, s.Name)
	}
	return usageError{err: unknownName(fmt.Sprintf("no server %q in %s", name, cfg.MCPSettings), name, "the servers are", names)}
}

func failedServers(cat mcpgram.Catalog) int {
	n := 0
	for _, s := range cat.Servers {
		if s.Down() {
			n++
		}
	}
	return n
}

// callTool calls one tool of one server, starting that server alone. A
// mistake in the command line (arguments that are no JSON object, a
// server or tool that does not exist) is a usage error, with what was
// probably meant and what exists; a tool's own error goes to stderr and
// exits 1, as does a server that does not start. user is who the call is
// made for; args are the command's: SERVER, TOOL and the JSON arguments.
func callTool(ctx context.Context, con console, user string, args []string) error {
	cfg, stdin, stdout, stderr, interactive := con.cfg, con.stdin, con.stdout, con.stderr, con.interactive()
	callArgs := map[string]any{}
	if len(args) == 3 && strings.TrimSpace(args[2]) != "" {
		if err := json.Unmarshal([]byte(args[2]), &callArgs); err != nil {
			return usageError{err: fmt.Errorf(`arguments must be a JSON object, such as '{"message": "hi"}': %w`, err)}
		}
	}
	name, tool := args[0], ""
	if len(args) > 1 {
		tool = args[1]
	}
	logger := cliLogger(cfg, stderr)
	ask := &terminalAsker{out: stderr, interactive: isTerminal(stdin)}
	if ask.interactive {
		ask.lines = readLines(stdin)
	}
	auth, err := newCLIAuth(ctx, con, logger, interactive)
	if err != nil {
		return err
	}
	defer closeAndWarn(auth, logger)
	var connect mcpgram.Connector
	if f := terminalConnect(interactive, con.getenv, stderr); f != nil {
		connect = f(auth.Manager)
	}
	h, err := newHub(cfg, logger, hubParts{Auth: auth})
	if err != nil {
		return err
	}
	defer closeAndWarn(h, logger)
	if err := h.AskThrough(hub.Askers{Elicitor: ask, Connector: connect}); err != nil {
		return err
	}
	if err := knownServer(cfg, h.Catalog(), name); err != nil {
		return err
	}
	logSandboxes(cfg, logger)
	s, err := startOne(ctx, cfg, h, name)
	if err != nil {
		return err
	}
	if _, ok := s.Tool(tool); !ok && s.Account == hub.AccountUser && tool != hub.ConnectTool {
		// A per-user server's tools are known once someone connected:
		// connect first (signing the caller in if need be), then look.
		if s, err = connectFirst(ctx, h, user, name); err != nil {
			return err
		}
	}
	if _, ok := s.Tool(tool); !ok {
		var names []string
		for _, t := range s.Tools {
			names = append(names, t.Name)
		}
		if tool == "" {
			return usageError{err: fmt.Errorf("mcp call %s needs the TOOL to call after the server; its tools are: %s", name, strings.Join(names, ", "))}
		}
		return usageError{err: unknownName(fmt.Sprintf("server %q has no tool %q", name, tool), tool, "its tools are", names)}
	}
	// Progress goes to stderr, as the chat shows it: stdout is the result.
	progress := startProgressPrinter(stderr, name, tool, agent.DefaultProgressInterval)
	res, err := h.CallTool(mcpgram.WithProgress(ctx, progress.report), mcpgram.Caller{UserID: user, ChatID: user}, name, tool, callArgs)
	progress.close()
	if err != nil {
		return err
	}
	if res.IsError {
		printResult(stderr, res)
		return exitError{1}
	}
	printResult(stdout, res)
	return nil
}

// startOne starts the server name alone and returns it running, or an
// error saying why it is not, in the words of mcp list.
func startOne(ctx context.Context, cfg *config.Config, h *hub.Hub, name string) (mcpgram.ServerInfo, error) {
	if err := h.StartServers(ctx, name); err != nil {
		return mcpgram.ServerInfo{}, err
	}
	s, _ := h.Catalog().Server(name)
	switch {
	case s.Status == mcpgram.StatusRunning:
		return s, nil
	case s.Status == mcpgram.StatusDisabled:
		return s, fmt.Errorf("server %q is disabled in %s: set \"disabled\" to false to call it", name, cfg.MCPSettings)
	case s.Cause != "":
		return s, fmt.Errorf("server %q: %s", name, s.Error)
	}
	why := s.Error
	if s.LastStderr != "" && !strings.Contains(why, s.LastStderr) {
		why += " (stderr: " + s.LastStderr + ")"
	}
	return s, fmt.Errorf("server %q did not start: %s", name, why)
}

// connectFirst calls the per-user server name's connect tool for user,
// which signs them in if they have not yet, and returns the server as the
// catalog lists it then (with its own tools).
func connectFirst(ctx context.Context, h *hub.Hub, user, name string) (mcpgram.ServerInfo, error) {
	res, err := h.CallTool(ctx, mcpgram.Caller{UserID: user, ChatID: user}, name, hub.ConnectTool, map[string]any{})
	if err != nil {
		return mcpgram.ServerInfo{}, err
	}
	if res.IsError {
		return mcpgram.ServerInfo{}, fmt.Errorf("connect to %s: %s", name, res.Text())
	}
	s, _ := h.Catalog().Server(name)
	return s, nil
}

// isTerminal reports whether r is a terminal a person types into (not
// /dev/null, which is a character device too).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// unknownName is the error msg about name, with the one of known
// probably meant, and all of them after what.
func unknownName(msg, name, what string, known []string) error {
	if best, ok := suggest.Closest(name, known); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(known) == 0 {
		return errors.New(msg + "; there are none")
	}
	return fmt.Errorf("%s; %s: %s", msg, what, strings.Join(known, ", "))
}

// printServers writes one line per server (its name, with the title it
// gives itself beside it), one indented line per tool, and a line marked
// "!" for each note of what the hub refused or cut of the server's
// catalog. What a server wrote goes through render.Visible: an escape
// sequence or a direction override would rewrite the terminal.
func printServers(w io.Writer, cat mcpgram.Catalog) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range cat.Servers {
		name := render.Visible(s.Name)
		if s.Title != "" && s.Title != s.Name {
			// Beside the name, never in its place: the server chooses it.
			name += " (" + render.Visible(render.Shorten(strings.Join(strings.Fields(s.Title), " "), 80)) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, render.Visible(serverState(s)))
		for _, t := range s.Tools {
			about := render.Visible(summary(t.Description, 90))
			if v := render.Visibility(t); v != "" {
				about = "(" + v + ") " + about
			}
			fmt.Fprintf(tw, "  %s\t%s\n", t.Name, about)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(tw, "  ! %s\n", render.Visible(n))
		}
	}
	return tw.Flush()
}

// serverState says in a few words how a server is, and how it is
// confined.
func serverState(s mcpgram.ServerInfo) string {
	var out string
	switch {
	case s.Status == mcpgram.StatusRunning:
		out = fmt.Sprintf("running, %d tools", len(s.Tools))
		if len(s.Tools) == 1 {
			out = "running, 1 tool"
		}
	case s.Down():
		out = s.Problem()
		if s.LastStderr != "" && !strings.Contains(s.Error, s.LastStderr) {
			out += " (stderr: " + s.LastStderr + ")"
		}
	default:
		out = string(s.Status)
	}
	return out + sandboxState(s)
}

// sandboxState says how a stdio server is confined; a server that would
// run unconfined is said so plainly, and one that does not run (failed,
// disabled, stopped) is not called sandboxed: it runs in nothing. Remote servers run elsewhere:
// nothing to say.
func sandboxState(s mcpgram.ServerInfo) string {
	switch {
	case s.Sandbox != "" && s.Status != mcpgram.StatusRunning && s.Status != mcpgram.StatusStarting && s.Status != mcpgram.StatusRestarting:
		return "" // a server that does not run is in no sandbox
	case s.Sandbox != "" && s.UID != 0:
		return "; sandboxed (" + s.Sandbox + ") as user " + strconv.Itoa(s.UID)
	case s.Sandbox != "":
		return "; sandboxed (" + s.Sandbox + ")"
	case s.NotSandboxed != "" && s.Status == mcpgram.StatusFailed && strings.Contains(s.Error, s.NotSandboxed):
		return ""
	case s.NotSandboxed != "" && s.UID != 0:
		return "; NOT SANDBOXED: " + s.NotSandboxed + " (as user " + strconv.Itoa(s.UID) + ")"
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
func printResult(w io.Writer, res *mcpgram.Result) {
	if res.IsError {
		fmt.Fprintln(w, "error:")
	}
	for _, c := range res.Content {
		switch {
		case c.Text != "":
			fmt.Fprintln(w, c.Text)
		case c.Type == mcpgram.ContentResourceLink:
			fmt.Fprintf(w, "[link %s %s]\n", c.Name, c.URI)
		default:
			fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, c.MIMEType, len(c.Data))
		}
	}
}
