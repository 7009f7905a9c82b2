package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/spf13/cobra"
)

// promptCommands builds "mcp prompts" and "mcp prompt", the operator's
// view of the servers' prompts.
func promptCommands(ctx context.Context, con console, user *string) []*cobra.Command {
	return []*cobra.Command{
		{
			Use: "prompts", Short: "Each running server's prompts, with their arguments (* required)", Args: noArgs,
			Long:    "Start every enabled server of the settings file and print the prompts each offers, with their arguments (* marks a required one).",
			Example: "  mcpgram mcp prompts\n  mcpgram mcp prompts --mcp-settings ~/.vscode/mcp.json",
			RunE: con.configured(func(con console, _ []string) error {
				h, done, err := startSigned(ctx, con)
				if err != nil {
					return err
				}
				defer done()
				cat := h.Catalog()
				n, err := printPrompts(con.stdout, cat)
				if err == nil && n == 0 {
					fmt.Fprintln(con.stderr, "mcpgram: "+noPrompts(cat))
				}
				return err
			}),
		},
		{
			Use: "prompt SERVER NAME ['{\"arg\": \"value\"}']", Short: "Get one prompt and print its messages; exits 1 on error",
			Long:    "Get one prompt and print its messages, each headed by its role; exits 1 when the server fails it, 2 for a usage mistake.\n\nThe arguments are a JSON object of strings, as the prompt declares them (see mcp prompts).",
			Example: "  mcpgram mcp prompt everything simple-prompt\n  mcpgram mcp prompt everything args-prompt '{\"city\": \"Paris\"}'",
			Args: func(cmd *cobra.Command, args []string) error {
				switch {
				case len(args) < 2:
					return usageError{err: errors.New("mcp prompt needs SERVER and the prompt's NAME: `mcpgram mcp prompts` lists them")}
				case len(args) > 3:
					return usageError{err: fmt.Errorf(`mcp prompt takes SERVER, NAME and one JSON object of arguments, got %d arguments: quote the JSON as one, such as '{"city": "Paris"}'`, len(args))}
				}
				if len(args) == 3 && strings.TrimSpace(args[2]) != "" {
					var v map[string]string
					if err := json.Unmarshal([]byte(args[2]), &v); err != nil {
						return usageError{err: fmt.Errorf("the arguments must be a JSON object of strings: %w", err)}
					}
				}
				return nil
			},
			RunE: con.configured(func(con console, args []string) error {
				return getPrompt(ctx, con, *user, args)
			}),
		},
	}
}

func getPrompt(ctx context.Context, con console, user string, args []string) error {
	stdout, stderr := con.stdout, con.stderr
	promptArgs := map[string]string{}
	if len(args) == 3 && strings.TrimSpace(args[2]) != "" {
		_ = json.Unmarshal([]byte(args[2]), &promptArgs) // checked in Args
	}
	h, done, err := startSigned(ctx, con)
	if err != nil {
		return err
	}
	defer done()
	if err := knownPrompt(con.cfg, h.Catalog(), args[0], args[1]); err != nil {
		return err
	}
	res, err := h.GetPrompt(ctx, mcpgram.Caller{UserID: user, ChatID: user}, args[0], args[1], promptArgs)
	if err != nil {
		fmt.Fprintf(stderr, "mcpgram: %v\n", err)
		return exitError{1}
	}
	printPrompt(stdout, res)
	return nil
}

// knownPrompt refuses, as mcp call refuses a server or tool, a server the
// settings file does not have and a prompt a running server does not
// offer (usage errors naming what there is), and a server that is not
// running (saying why).
func knownPrompt(cfg *config.Config, cat mcpgram.Catalog, server, name string) error {
	if err := knownServer(cfg, cat, server); err != nil {
		return err
	}
	s, _ := cat.Server(server)
	if s.Status != mcpgram.StatusRunning {
		why := s.Problem()
		if why == "" {
			why = string(s.Status)
		}
		return fmt.Errorf("server %q: %s", server, why)
	}
	if _, ok := s.Prompt(name); ok {
		return nil
	}
	var names []string
	for _, p := range s.Prompts {
		names = append(names, p.Name)
	}
	return usageError{err: unknownName(fmt.Sprintf("server %q has no prompt %q", server, name), name, "its prompts are", names)}
}

// noPrompts says why mcp prompts printed none: which servers run without
// any, and how many are down.
func noPrompts(cat mcpgram.Catalog) string {
	var running []string
	for _, s := range cat.Running() {
		running = append(running, render.Visible(s.Name))
	}
	msg := "no server is running, so none offers prompts"
	if len(running) > 0 {
		msg = "none of the running servers (" + strings.Join(running, ", ") + ") offers prompts"
	}
	if n := failedServers(cat); n > 0 {
		msg += fmt.Sprintf("; %d of %d servers are down: `mcpgram mcp list` says why", n, len(cat.Servers))
	}
	return msg
}

// printPrompts writes one line per running server with prompts, and one
// indented line per prompt: its name, arguments and title or description;
// it returns how many prompts it wrote.
func printPrompts(w io.Writer, cat mcpgram.Catalog) (int, error) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	n := 0
	for _, s := range cat.Running() {
		if len(s.Prompts) == 0 {
			continue
		}
		n += len(s.Prompts)
		fmt.Fprintf(tw, "%s\t%d prompts\n", render.Visible(s.Name), len(s.Prompts))
		for _, p := range s.Prompts {
			var args []string
			for _, a := range p.Arguments {
				name := a.Name
				if a.Required {
					name += "*"
				}
				args = append(args, name)
			}
			about := p.Title
			if about == "" {
				about = p.Description
			}
			fmt.Fprintf(tw, "  %s(%s)\t%s\n", p.Name, strings.Join(args, ", "), render.Visible(summary(about, 90)))
		}
	}
	return n, tw.Flush()
}

// printPrompt writes each message of a prompt, headed by its role.
func printPrompt(w io.Writer, res *mcpgram.PromptResult) {
	for _, m := range res.Messages {
		c := m.Content
		fmt.Fprintf(w, "[%s]\n", m.Role)
		switch {
		case c.Text != "" && c.Type == mcpgram.ContentResource:
			fmt.Fprintf(w, "[resource %s]\n%s\n", render.Visible(c.URI), render.Visible(c.Text))
		case c.Text != "":
			fmt.Fprintln(w, render.Visible(c.Text))
		case c.Type == mcpgram.ContentResourceLink:
			fmt.Fprintf(w, "[link %s %s]\n", render.Visible(c.Name), render.Visible(c.URI))
		default:
			fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, render.Visible(c.MIMEType), len(c.Data))
		}
	}
}
