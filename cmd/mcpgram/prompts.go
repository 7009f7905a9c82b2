package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/spf13/cobra"
)

// A hubStarter starts the servers of cfg for a command; done closes them.
type hubStarter func(cfg *config.Config, logger *slog.Logger) (h *hub.Hub, done func(), err error)

// promptCommands builds "mcp prompts" and "mcp prompt", the operator's
// view of the servers' prompts.
func promptCommands(ctx context.Context, withConfig func(func(*config.Config, []string) error) func(*cobra.Command, []string) error, start hubStarter, user *string, stdout, stderr io.Writer) []*cobra.Command {
	return []*cobra.Command{
		{
			Use: "prompts", Short: "Each running server's prompts, with their arguments (* required)", Args: noArgs,
			Long:    "Start every enabled server of the settings file and print the prompts each offers, with their arguments (* marks a required one).",
			Example: "  mcpgram mcp prompts\n  mcpgram mcp prompts --mcp-settings ~/.vscode/mcp.json",
			RunE: withConfig(func(cfg *config.Config, _ []string) error {
				h, done, err := start(cfg, cliLogger(cfg, stderr))
				if err != nil {
					return err
				}
				defer done()
				return printPrompts(stdout, h.Catalog())
			}),
		},
		{
			Use: "prompt SERVER NAME ['{\"arg\": \"value\"}']", Short: "Get one prompt and print its messages; exits 1 on error",
			Long:    "Get one prompt and print its messages, each headed by its role; exits 1 when the server fails it, 2 for a usage mistake.\n\nThe arguments are a JSON object of strings, as the prompt declares them (see mcp prompts).",
			Example: "  mcpgram mcp prompt everything simple-prompt\n  mcpgram mcp prompt everything args-prompt '{\"city\": \"Paris\"}'",
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) < 2 || len(args) > 3 {
					return usageError{fmt.Errorf("mcp prompt takes SERVER NAME and optional JSON arguments, got %d arguments", len(args))}
				}
				if len(args) == 3 && strings.TrimSpace(args[2]) != "" {
					var v map[string]string
					if err := json.Unmarshal([]byte(args[2]), &v); err != nil {
						return usageError{fmt.Errorf("the arguments must be a JSON object of strings: %w", err)}
					}
				}
				return nil
			},
			RunE: withConfig(func(cfg *config.Config, args []string) error {
				return getPrompt(ctx, cfg, start, *user, args, stdout, stderr)
			}),
		},
	}
}

func getPrompt(ctx context.Context, cfg *config.Config, start hubStarter, user string, args []string, stdout, stderr io.Writer) error {
	promptArgs := map[string]string{}
	if len(args) == 3 && strings.TrimSpace(args[2]) != "" {
		_ = json.Unmarshal([]byte(args[2]), &promptArgs) // checked in Args
	}
	h, done, err := start(cfg, cliLogger(cfg, stderr))
	if err != nil {
		return err
	}
	defer done()
	res, err := h.GetPrompt(ctx, hub.Caller{UserID: user, ChatID: user}, args[0], args[1], promptArgs)
	if err != nil {
		fmt.Fprintf(stderr, "mcpgram: %v\n", err)
		return exitError{1}
	}
	printPrompt(stdout, res)
	return nil
}

// printPrompts writes one line per running server with prompts, and one
// indented line per prompt: its name, arguments and title or description.
func printPrompts(w io.Writer, cat hub.Catalog) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range cat.Running() {
		if len(s.Prompts) == 0 {
			continue
		}
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
	return tw.Flush()
}

// printPrompt writes each message of a prompt, headed by its role.
func printPrompt(w io.Writer, res *hub.PromptResult) {
	for _, m := range res.Messages {
		c := m.Content
		fmt.Fprintf(w, "[%s]\n", m.Role)
		switch {
		case c.Text != "" && c.Type == hub.ContentResource:
			fmt.Fprintf(w, "[resource %s]\n%s\n", render.Visible(c.URI), render.Visible(c.Text))
		case c.Text != "":
			fmt.Fprintln(w, render.Visible(c.Text))
		case c.Type == hub.ContentResourceLink:
			fmt.Fprintf(w, "[link %s %s]\n", render.Visible(c.Name), render.Visible(c.URI))
		default:
			fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, render.Visible(c.MIMEType), len(c.Data))
		}
	}
}
