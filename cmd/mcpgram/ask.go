package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/form"
)

// maxShown bounds what a server's message may fill of the terminal.
const maxShown = 2000

// A terminalAsker asks in the terminal what a server asks mid-call: each
// field of a form in turn, or to visit a URL. Without a terminal
// (interactive false) it answers as nobody there can: a form with each
// field's default, declined when a required field has none, and a URL
// declined. Notes go to out; typed lines come from lines.
type terminalAsker struct {
	out         io.Writer
	lines       <-chan string
	interactive bool
	mu          sync.Mutex // one question at a time
}

// Elicit implements mcpgram.Elicitor.
func (a *terminalAsker) Elicit(ctx context.Context, e mcpgram.Elicitation) (mcpgram.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.out, "\n%s asks%s:\n%s\n", plain(e.Server, 100), during(e), indent(plain(e.Message, maxShown)))
	if e.Mode == mcpgram.ElicitURL {
		return a.visit(ctx, e)
	}
	f, err := form.Parse(e.Schema)
	if err != nil {
		fmt.Fprintf(a.out, "(The form cannot be shown: %s. Cancelled.)\n", plain(err.Error(), 300))
		return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
	}
	if !a.interactive {
		content, ok := f.Defaults()
		if !ok {
			fmt.Fprintln(a.out, "(No terminal to ask in, and a required field has no default: declined.)")
			return mcpgram.ElicitResult{Action: mcpgram.ElicitDecline}, nil
		}
		b, _ := json.Marshal(content)
		fmt.Fprintf(a.out, "(No terminal to ask in: answered with the defaults, %s.)\n", b)
		return mcpgram.ElicitResult{Action: mcpgram.ElicitAccept, Content: content}, nil
	}
	return a.fill(ctx, f, false)
}

// during names the call that asks.
func during(e mcpgram.Elicitation) string {
	switch {
	case e.Tool != "":
		return " (tool " + plain(e.Tool, 100) + ")"
	case e.URI != "":
		return " (reading " + plain(e.URI, 200) + ")"
	}
	return ""
}

// visit shows the URL, opening nothing, and asks whether the user is done.
func (a *terminalAsker) visit(ctx context.Context, e mcpgram.Elicitation) (mcpgram.ElicitResult, error) {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		fmt.Fprintln(a.out, "(The server asks you to open an address that is not a plain web address. Cancelled.)")
		return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
	}
	fmt.Fprintf(a.out, "The server, not mcpgram, asks you to open this address on %s (nothing is opened for you):\n  %s\n", plain(u.Host, 255), plain(e.URL, maxShown))
	if !a.interactive {
		fmt.Fprintln(a.out, "(No terminal to ask in: declined.)")
		return mcpgram.ElicitResult{Action: mcpgram.ElicitDecline}, nil
	}
	for {
		line, err := a.ask(ctx, "Done? [y = done, n = decline, c = cancel] ")
		if err != nil {
			return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
		}
		switch strings.ToLower(line) {
		case "y", "yes", "done":
			return mcpgram.ElicitResult{Action: mcpgram.ElicitAccept}, nil
		case "n", "no", "decline":
			return mcpgram.ElicitResult{Action: mcpgram.ElicitDecline}, nil
		case "c", "cancel":
			return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
		}
	}
}

// fill asks the fields in turn, then whether to submit. A prompt's form
// (prompt) offers cancel alone, for declining a prompt is cancelling it;
// a /decline or n typed there cancels too.
func (a *terminalAsker) fill(ctx context.Context, f *form.Form, prompt bool) (mcpgram.ElicitResult, error) {
	if prompt {
		fmt.Fprintln(a.out, "Answer each field. Enter takes the default, or skips a field that is not required; /back returns to the field before; /cancel ends the form.")
	} else {
		fmt.Fprintln(a.out, "Answer each field. Enter takes the default, or skips a field that is not required; /back returns to the field before; /decline or /cancel ends the form.")
	}
	var st form.State
	for {
		fd, asking := f.Current(st)
		if !asking {
			done, res, err := a.review(ctx, f, &st, prompt)
			if done || err != nil {
				return declined(res, prompt), err
			}
			continue
		}
		line, err := a.ask(ctx, fieldPrompt(f, st, fd))
		if err != nil {
			return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
		}
		switch line {
		case "/decline":
			return declined(mcpgram.ElicitResult{Action: mcpgram.ElicitDecline}, prompt), nil
		case "/cancel":
			return mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
		case "/back":
			_ = f.Back(&st)
			continue
		case "":
			if fd.Default != nil {
				err = f.TakeDefault(&st)
			} else if !fd.Required {
				err = f.Next(&st)
			} else {
				err = errors.New("this field is required")
			}
		default:
			err = f.Type(&st, line)
		}
		var inv *form.Invalid
		switch {
		case errors.As(err, &inv):
			fmt.Fprintf(a.out, "  %s Try again.\n", plain(inv.Reason, 300))
		case err != nil:
			fmt.Fprintf(a.out, "  %s.\n", plain(err.Error(), 300))
		}
	}
}

// declined is res, a decline made a cancel on a prompt's form.
func declined(res mcpgram.ElicitResult, prompt bool) mcpgram.ElicitResult {
	if prompt && res.Action == mcpgram.ElicitDecline {
		res.Action = mcpgram.ElicitCancel
	}
	return res
}

// review asks whether to send the form; done reports a final answer.
func (a *terminalAsker) review(ctx context.Context, f *form.Form, st *form.State, prompt bool) (bool, mcpgram.ElicitResult, error) {
	q := "Submit? [y = submit, n = decline, c = cancel, b = back] "
	if prompt {
		q = "Submit? [y = submit, c = cancel, b = back] "
	}
	line, err := a.ask(ctx, q)
	if err != nil {
		return true, mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
	}
	switch strings.ToLower(line) {
	case "y", "yes", "":
		content, err := f.Submit(*st)
		var missing *form.Missing
		if errors.As(err, &missing) {
			fmt.Fprintf(a.out, "  Still to fill in: %s.\n", plain(strings.Join(missing.Fields, ", "), 500))
			st.Step = missing.Step
			return false, mcpgram.ElicitResult{}, nil
		}
		return true, mcpgram.ElicitResult{Action: mcpgram.ElicitAccept, Content: content}, nil
	case "n", "no":
		return true, mcpgram.ElicitResult{Action: mcpgram.ElicitDecline}, nil
	case "c", "cancel":
		return true, mcpgram.ElicitResult{Action: mcpgram.ElicitCancel}, nil
	case "b", "back":
		_ = f.Back(st)
	}
	return false, mcpgram.ElicitResult{}, nil
}

// fieldPrompt is the line that asks for fd.
func fieldPrompt(f *form.Form, st form.State, fd form.Field) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", plain(fd.Label(), 100))
	if fd.Description != "" {
		fmt.Fprintf(&b, " (%s)", plain(fd.Description, 300))
	}
	fmt.Fprintf(&b, ": %s", fd.Hint())
	if len(fd.Options) > 0 && fd.Kind != form.Boolean {
		b.WriteString(":")
		for i, o := range fd.Options {
			fmt.Fprintf(&b, " %d. %s", i+1, plain(o.Label, 64))
		}
		if fd.Kind == form.Choices {
			b.WriteString(" (numbers or names, separated by commas)")
		}
	}
	if v, ok := f.Value(st, fd.Name); ok {
		fmt.Fprintf(&b, " [now %s]", plain(fd.Show(v), 100))
	} else if fd.Default != nil {
		fmt.Fprintf(&b, " [default %s]", plain(fd.Show(fd.Default), 100))
	}
	if fd.Required {
		b.WriteString(" (required)")
	}
	b.WriteString(" > ")
	return b.String()
}

// ask prints a prompt and reads a line, until ctx ends or input does.
func (a *terminalAsker) ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(a.out, prompt)
	select {
	case line, ok := <-a.lines:
		if !ok {
			return "", io.EOF
		}
		return strings.TrimSpace(line), nil
	case <-ctx.Done():
		fmt.Fprintln(a.out)
		return "", ctx.Err()
	}
}

// plain is s as it may reach a terminal: cut to max runes, and every
// invisible or direction-changing character (a hostile server's escape
// sequences) as its code point.
func plain(s string, max int) string {
	return render.Visible(render.Shorten(s, max))
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// readLines delivers the lines of in until it ends (or holds a line over
// 1 MiB); the channel is then closed. A caller that returns first leaves
// the reader blocked in Read, which the process's exit ends.
func readLines(in io.Reader) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			out <- sc.Text()
		}
	}()
	return out
}
