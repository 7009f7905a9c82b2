package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/config"
)

const mcpUsage = `usage:
  mcpgram mcp list
  mcpgram mcp call SERVER TOOL ['{"arg": "value"}']`

// startHub starts every enabled server of the settings file. The CLI logs
// only warnings: an operator reads the table, not the start-up chatter.
func startHub(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*hub.Hub, error) {
	h, err := hub.New(cfg.MCPSettings, hub.Options{Logger: logger.With("component", "hub"), NoWatch: true})
	if err != nil {
		return nil, err
	}
	if err := h.Start(ctx); err != nil {
		h.Close()
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

func mcpCommand(ctx context.Context, cfg *config.Config, user string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "call") {
		fmt.Fprintln(stderr, mcpUsage)
		return exitError{2}
	}
	if args[0] == "call" && (len(args) < 3 || len(args) > 4) {
		fmt.Fprintln(stderr, mcpUsage)
		return exitError{2}
	}
	h, err := startHub(ctx, cfg, cliLogger(cfg, stderr))
	if err != nil {
		return err
	}
	defer h.Close()
	if args[0] == "list" {
		return printServers(stdout, h.Catalog())
	}
	callArgs := map[string]any{}
	if len(args) == 4 && strings.TrimSpace(args[3]) != "" {
		if err := json.Unmarshal([]byte(args[3]), &callArgs); err != nil {
			return fmt.Errorf("arguments must be a JSON object: %w", err)
		}
	}
	res, err := h.CallTool(ctx, hub.Caller{UserID: user, ChatID: user}, args[1], args[2], callArgs)
	if err != nil {
		return err
	}
	printResult(stdout, res)
	if res.IsError {
		return exitError{1}
	}
	return nil
}

// printServers writes one line per server and one indented line per tool.
func printServers(w io.Writer, cat hub.Catalog) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range cat.Servers {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, serverState(s))
		for _, t := range s.Tools {
			fmt.Fprintf(tw, "  %s\t%s\n", t.Name, firstLine(t.Description, 90))
		}
	}
	return tw.Flush()
}

// serverState says in a few words how a server is.
func serverState(s hub.ServerInfo) string {
	switch s.Status {
	case hub.StatusRunning:
		if len(s.Tools) == 1 {
			return "running, 1 tool"
		}
		return fmt.Sprintf("running, %d tools", len(s.Tools))
	case hub.StatusFailed:
		out := "failed: " + s.Error
		if s.LastStderr != "" && !strings.Contains(s.Error, s.LastStderr) {
			out += " (stderr: " + s.LastStderr + ")"
		}
		return out
	default:
		return string(s.Status)
	}
}

func firstLine(s string, max int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
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
