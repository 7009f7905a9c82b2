package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot/promptmenu"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/llm"
)

const chatHelp = `Type a message and press Enter. Commands: /reset (new conversation), /tools, /prompts (the servers' prompts, each sent with /NAME), /help, /quit.
A question's options are numbered: type the number, or any text. An approval asks y (yes), n (no) or a (always:
the tool runs unasked from then on); a call that needs your consent asks y or n, each time.
A server may ask for details in the middle of a call: answer each field (Enter takes the default), then submit, decline or cancel.
Ctrl-C stops the running request; at a y/n prompt it answers no; at the prompt it ends the chat.`

// chatCommand runs the terminal chat until the operator quits, stdin ends,
// or ctx ends. interrupts delivers Ctrl-C: it stops the running turn, and
// at the prompt ends the chat. Logs go to a file beside the database, so
// that none is printed into the conversation.
func chatCommand(ctx context.Context, con console, user string, interrupts <-chan os.Signal) error {
	cfg := con.cfg
	if err := cfg.RequireModel(); err != nil {
		return err
	}
	logPath := chatLogPath(cfg)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return fmt.Errorf("the chat's log folder: %w (set DATABASE_PATH or --database-path to a file in a folder you may write: chat.log goes beside it)", err)
	}
	logFile, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("the chat's log file: %w (set DATABASE_PATH or --database-path to a file in a folder you may write: chat.log goes beside it)", err)
	}
	defer logFile.Close()
	logger := cfg.Logger(logFile)
	// One reader of stdin for the chat and for what servers ask mid-call,
	// which waits for the typed lines while the turn that called runs.
	lines := readLines(con.stdin)
	asker := &terminalAsker{out: con.stdout, lines: lines, interactive: true}
	// A per-user server's sign-in is the chat user's, in the browser,
	// when someone is there to.
	connect := terminalConnect(con.interactive(), con.getenv, con.stdout)
	app, err := Open(ctx, cfg, logger, OpenOptions{Wait: true, Elicitor: asker, Connect: connect})
	if err != nil {
		return err
	}
	defer closeAndWarn(app, logger)
	profile := agent.NewPrefs(app.Agent).DefaultProfile()
	if p, err := agent.NewPrefs(app.Agent).ChatProfile(ctx, user); err == nil {
		profile = p
	}
	c := &terminal{agent: app.Agent, hub: app.Hub, out: con.stdout, caller: mcpgram.Caller{UserID: user, ChatID: user}, asker: asker, interrupts: interrupts, profile: profile, logPath: logPath}
	running := len(app.Hub.Catalog().Running())
	fmt.Fprintf(con.stdout, "mcpgram chat: model %s, %d MCP servers running; log in %s.\n%s\n", profile.Model, running, logPath, chatHelp)
	if err := c.reopen(ctx); err != nil {
		return err
	}
	return c.run(ctx, lines, interrupts)
}

// reopen shows the question or approval the chat left open when it last
// ended, so that it can be answered here.
func (c *terminal) reopen(ctx context.Context) error {
	ev, ok, err := c.agent.Open(ctx, c.caller.ChatID)
	if err != nil || !ok {
		return err
	}
	fmt.Fprintln(c.out, "Still open from before:")
	c.event(ev)
	return nil
}

// chatLogPath is where the terminal chat logs: beside the database.
func chatLogPath(cfg *config.Config) string {
	return filepath.Join(filepath.Dir(cfg.DatabasePath), "chat.log")
}

// A terminal is the chat front end for one operator: it reads lines and
// prints the turn's events, with a question's options as numbers and an
// approval as y/n/a (a consent as y/n). Its user can fix the model's
// settings, so a failed model call is told as the endpoint answered it.
type terminal struct {
	agent    *agent.Agent
	hub      *hub.Hub
	out      io.Writer
	caller   mcpgram.Caller
	profile  mcpgram.Profile // the chat's model, for a failure's diagnosis
	logPath  string
	question *agent.Question
	approval *agent.Approval
	shown    string // streamed text already printed for the current reply
	// asker asks a prompt's arguments; interrupts stop a prompt's turn.
	asker      *terminalAsker
	interrupts <-chan os.Signal
}

// commandRE is a typed command: a slash and a word, alone on the line.
var commandRE = regexp.MustCompile(`^/[A-Za-z0-9_]+$`)

func (c *terminal) run(ctx context.Context, lines <-chan string, interrupts <-chan os.Signal) error {
	for {
		c.prompt()
		var line string
		select {
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(c.out)
				return nil
			}
			line = l
		case <-interrupts:
			// At a y/n prompt Ctrl-C is the "no" of a person who wants
			// the call not to run; anywhere else it ends the chat.
			if c.approval == nil {
				fmt.Fprintln(c.out)
				return nil
			}
			fmt.Fprintln(c.out, "n")
			line = "n"
		case <-ctx.Done():
			return nil
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if commandRE.MatchString(line) {
			if quit, err := c.command(ctx, line); quit || err != nil {
				return err
			}
			continue
		}
		req, ok := c.request(line)
		if !ok {
			continue
		}
		if err := c.turn(ctx, req, interrupts); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// command runs a typed command; quit reports that the chat ends.
func (c *terminal) command(ctx context.Context, line string) (quit bool, err error) {
	switch line {
	case "/quit", "/exit":
		return true, nil
	case "/help":
		fmt.Fprintln(c.out, chatHelp)
	case "/tools":
		printServers(c.out, c.hub.Catalog())
	case "/reset":
		if err := c.agent.Reset(ctx, c.caller.ChatID); err != nil {
			return true, err
		}
		c.question, c.approval = nil, nil
		fmt.Fprintln(c.out, "New conversation.")
	case "/prompts":
		c.listPrompts()
	default:
		if cmd, ok := promptmenu.Find(c.prompts(), strings.TrimPrefix(line, "/")); ok {
			return false, c.sendPrompt(ctx, cmd)
		}
		fmt.Fprintf(c.out, "Unknown command %s. Commands: /reset, /tools, /prompts, /help, /quit, and a prompt's /NAME.\n", line)
	}
	return false, nil
}

// turn runs one turn; Ctrl-C meanwhile stops it, not the chat.
func (c *terminal) turn(ctx context.Context, req agent.Request, interrupts <-chan os.Signal) error {
	c.question, c.approval, c.shown = nil, nil, ""
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go func() { done <- c.agent.Turn(tctx, req, c.event) }()
	var err error
	select {
	case err = <-done:
	case <-interrupts:
		// The call in flight is cancelled on its server, and the model
		// told the user stopped it.
		cancel(agent.ErrStopped)
		err = <-done
	}
	if errors.Is(err, agent.ErrStale) {
		fmt.Fprintln(c.out, "That request is no longer open.")
	}
	// Any other failure was told in an EventError.
	return nil
}

func (c *terminal) prompt() {
	switch {
	case c.approval != nil && c.approval.Consent:
		fmt.Fprint(c.out, "agree? [y/n] ")
	case c.approval != nil:
		fmt.Fprint(c.out, "approve? [y/n/a] ")
	default:
		fmt.Fprint(c.out, "> ")
	}
}

// request turns a typed line into the agent request it means in the
// current state.
func (c *terminal) request(line string) (agent.Request, bool) {
	// The terminal is the operator's: no daily token budget.
	req := agent.Request{Caller: c.caller, Exempt: true}
	if a := c.approval; a != nil {
		switch strings.ToLower(line) {
		case "y", "yes":
			req.Decision = &agent.Decision{PendingID: a.PendingID, Approve: true}
		case "n", "no":
			req.Decision = &agent.Decision{PendingID: a.PendingID}
		case "a", "always":
			if a.Consent {
				fmt.Fprintln(c.out, "Your consent is asked each time: answer y or n.")
				return req, false
			}
			req.Decision = &agent.Decision{PendingID: a.PendingID, Approve: true, Always: true}
		default:
			if a.Consent {
				fmt.Fprintln(c.out, "Please answer y or n.")
			} else {
				fmt.Fprintln(c.out, "Please answer y, n or a.")
			}
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
	case agent.EventToolProgress:
		for _, p := range e.Progress {
			fmt.Fprintf(c.out, "  … %s on %s: %s\n", p.Tool, p.Server, progressLine(p))
		}
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
		a := e.Approval
		// The card Telegram shows, in text.
		fmt.Fprintln(c.out, render.CardFor(c.hub.Catalog(), a.Server, a.Tool, a.URI, a.Arguments, a.Consent).Text())
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
		fmt.Fprintln(c.out, "! "+c.failure(e))
	case agent.EventNotice:
		c.endStream()
		fmt.Fprintln(c.out, "("+e.Text+")")
	}
}

// failure is what the operator reads of a failed turn: for a model call,
// what the endpoint answered and what to check, rather than the "try
// again later" meant for a Telegram user; and where the log is.
func (c *terminal) failure(e agent.Event) string {
	if e.Err == nil {
		return e.Text // stopped: nothing to look up
	}
	var le *llm.Error
	if errors.As(e.Err, &le) {
		return le.Diagnosis(c.profile) + " More in " + c.logPath
	}
	return fmt.Sprintf("%s (%v) More in %s", e.Text, e.Err, c.logPath)
}

// endStream closes a line of streamed text before other output.
func (c *terminal) endStream() {
	if c.shown != "" {
		fmt.Fprintln(c.out)
		c.shown = ""
	}
}

// progressLine is a call's report as the terminal shows it: "40%, 120 of
// 300 · indexing"; what the server wrote goes through render.Visible.
func progressLine(p agent.CallProgress) string {
	var b strings.Builder
	if p.Total > 0 {
		pct := max(0, min(100, math.Floor(100*p.Progress.Progress/p.Total)))
		fmt.Fprintf(&b, "%d%%, %g of %g", int(pct), p.Progress.Progress, p.Total)
	} else {
		fmt.Fprintf(&b, "%g", p.Progress.Progress)
	}
	if p.Message != "" {
		b.WriteString(" · " + render.Visible(p.Message))
	}
	return b.String()
}
