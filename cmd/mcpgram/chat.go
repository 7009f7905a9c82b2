package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/config"
)

const chatHelp = `Type a message and press Enter. Commands: /reset (new conversation), /tools, /help, /quit.
A question's options are numbered: type the number, or any text. An approval asks y (yes), n (no) or a (always).`

func chatCommand(ctx context.Context, cfg *config.Config, user string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := cfg.RequireModel(); err != nil {
		return err
	}
	logger := cliLogger(cfg, stderr)
	app, err := Open(ctx, cfg, logger, false, true)
	if err != nil {
		return err
	}
	defer app.Close()
	c := &terminal{agent: app.Agent, hub: app.Hub, out: stdout, caller: hub.Caller{UserID: user, ChatID: user}}
	running := len(app.Hub.Catalog().Running())
	fmt.Fprintf(stdout, "mcpgram chat: model %s, %d MCP servers running.\n%s\n", cfg.Model, running, chatHelp)
	return c.run(ctx, stdin)
}

// A terminal is the chat front end for one operator: it reads lines and
// prints the turn's events, with a question's options as numbers and an
// approval as y/n/a.
type terminal struct {
	agent    *agent.Agent
	hub      *hub.Hub
	out      io.Writer
	caller   hub.Caller
	question *agent.Question
	approval *agent.Approval
	shown    string // streamed text already printed for the current reply
}

func (c *terminal) run(ctx context.Context, in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		c.prompt()
		if !sc.Scan() {
			fmt.Fprintln(c.out)
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		switch line {
		case "/quit", "/exit":
			return nil
		case "/help":
			fmt.Fprintln(c.out, chatHelp)
			continue
		case "/tools":
			printServers(c.out, c.hub.Catalog())
			continue
		case "/reset":
			if err := c.agent.Reset(ctx, c.caller.ChatID); err != nil {
				return err
			}
			c.question, c.approval = nil, nil
			fmt.Fprintln(c.out, "New conversation.")
			continue
		}
		req, ok := c.request(line)
		if !ok {
			continue
		}
		c.question, c.approval, c.shown = nil, nil, ""
		err := c.agent.Turn(ctx, req, c.event)
		switch {
		case errors.Is(err, agent.ErrStale):
			fmt.Fprintln(c.out, "That request is no longer open.")
		case ctx.Err() != nil:
			return nil
		case err != nil && !errors.Is(err, agent.ErrNotYours):
			// The turn already told the user in an EventError.
		}
	}
}

func (c *terminal) prompt() {
	switch {
	case c.approval != nil:
		fmt.Fprint(c.out, "approve? [y/n/a] ")
	default:
		fmt.Fprint(c.out, "> ")
	}
}

// request turns a typed line into the agent request it means in the
// current state.
func (c *terminal) request(line string) (agent.Request, bool) {
	req := agent.Request{Caller: c.caller}
	if a := c.approval; a != nil {
		switch strings.ToLower(line) {
		case "y", "yes":
			req.Decision = &agent.Decision{PendingID: a.PendingID, Approve: true}
		case "n", "no":
			req.Decision = &agent.Decision{PendingID: a.PendingID}
		case "a", "always":
			req.Decision = &agent.Decision{PendingID: a.PendingID, Approve: true, Always: true}
		default:
			fmt.Fprintln(c.out, "Please answer y, n or a.")
			return req, false
		}
		return req, true
	}
	if q := c.question; q != nil && len(q.Options) > 0 {
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(q.Options) {
			req.Answer = &agent.Answer{PendingID: q.PendingID, Option: n - 1}
			fmt.Fprintf(c.out, "(%s)\n", q.Options[n-1])
			return req, true
		}
	}
	req.Text = line
	return req, true
}

func (c *terminal) event(e agent.Event) {
	switch e.Kind {
	case agent.EventText:
		if strings.HasPrefix(e.Text, c.shown) {
			fmt.Fprint(c.out, e.Text[len(c.shown):])
		} else {
			fmt.Fprint(c.out, "\n", e.Text)
		}
		c.shown = e.Text
	case agent.EventToolStart:
		c.endStream()
		target := e.Tool
		if target == "" {
			target = e.URI
		}
		fmt.Fprintf(c.out, "  … %s on %s\n", target, e.Server)
	case agent.EventToolEnd:
		mark := "ok"
		if !e.OK {
			mark = "error"
		}
		target := e.Tool
		if target == "" {
			target = e.URI
		}
		fmt.Fprintf(c.out, "  %s %s (%d ms)", mark, target, e.Duration.Milliseconds())
		for _, img := range e.Images {
			fmt.Fprintf(c.out, " [image %s, %d bytes]", img.MIMEType, len(img.Data))
		}
		fmt.Fprintln(c.out)
	case agent.EventQuestion:
		c.endStream()
		c.question = e.Question
		fmt.Fprintln(c.out, e.Question.Text)
		for i, o := range e.Question.Options {
			fmt.Fprintf(c.out, "  %d. %s\n", i+1, o)
		}
	case agent.EventApproval:
		c.endStream()
		c.approval = e.Approval
		fmt.Fprintf(c.out, "The model wants to run %s on %s with %s\n", e.Approval.Tool, e.Approval.Server, e.Approval.Arguments)
	case agent.EventAnswer:
		if c.shown != "" && strings.TrimSpace(c.shown) == strings.TrimSpace(e.Text) {
			fmt.Fprintln(c.out)
		} else {
			c.endStream()
			fmt.Fprintln(c.out, e.Text)
		}
		c.shown = ""
	case agent.EventError:
		c.endStream()
		fmt.Fprintln(c.out, "! "+e.Text)
	}
}

// endStream closes a line of streamed text before other output.
func (c *terminal) endStream() {
	if c.shown != "" {
		fmt.Fprintln(c.out)
		c.shown = ""
	}
}
