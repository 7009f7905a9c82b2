// Package executor turns a model's tool blocks into actions: it checks
// each block that package toolcall parsed out of a reply against the hub's
// catalog, with feedback the model can act on, runs the calls through the
// hub, and formats every outcome for the model in one format. It knows
// nothing of Telegram.
//
// # One reply, step by step
//
//	reply := toolcall.Parse(text)              // or a toolcall.Parser as it streams
//	plan := ex.Prepare(cat, reply, approveAll) // answer, ask, correct, or the checked calls
//	outcome := ex.RunOne(ctx, caller, plan.Steps[i].Call) // approved first where a step says so
//	                                           // outcome.Text goes back to the model
//
// Prepare keeps the order of the decisions in one place: text without
// blocks, calls that were only examples, which blocks to act on, the check
// of each against the catalog, approval.
//
// # Near misses
//
// Models get the format slightly wrong in a few recurring ways. Where what
// a call means is plain, the check repairs it and the call runs at once,
// with no round trip to correct it: calls written in another family's
// way, which the parser reads (see package toolcall) and the check
// resolves like any other; slips in the arguments, repaired as
// toolcall.DecodeArguments reads them (JSON slips, arguments written as
// elements or "key: value" lines typed by the tool's schema); names in
// the wrong case or joined (server__tool); a server left out when one
// running server alone has the tool; a block cut off by the end of the
// reply after all it needs; a reply that is nothing but a fenced call.
// Each repair is recorded by kind on the Call and the Plan (the parser's
// first) and logged at debug level. Where two readings are possible nothing is guessed: the
// model gets feedback as for any other mistake. Repaired calls are
// approved like any other, on their repaired form.
//
// # The result format
//
// Every outcome sent back to the model starts with a header line naming
// the tool, the target and the server, and saying success or error:
//
//	[use_mcp_tool for 'echo' on 'everything'] Result:
//	[use_mcp_tool for 'echo' on 'everything'] Error:
//	[access_mcp_resource for 'demo://resource/static/document/1' on 'everything'] Result:
//	[ask_followup_question] Error:
//
// Tool output and error text from a server is untrusted. It follows the
// header inside a Markdown code fence whose backtick run is longer than any
// backtick run in the output, so nothing the server writes can end the
// fence and pass for a header, a note or a message of ours. Output over
// the cap is cut at a character boundary; a note after the fence says how
// many bytes were cut. An empty output is written as (no output), unfenced.
// Names quoted in headers have control characters, quotes and brackets
// replaced so that a model- or server-chosen name cannot forge a header
// either. Feedback from the check is our own text and is not fenced.
package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/internal/lines"
	"github.com/mcpgram/mcpgram/toolcall"
	"golang.org/x/sync/errgroup"
)

// A Hub runs calls on MCP servers; *hub.Hub is one.
type Hub interface {
	CallTool(ctx context.Context, caller mcpgram.Caller, server, tool string, args map[string]any) (*mcpgram.Result, error)
	ReadResource(ctx context.Context, caller mcpgram.Caller, server, uri string) (*mcpgram.Result, error)
}

// A TaskStarter makes a tool call that the server may run as a task,
// answering with its handle instead of the result (see
// hub.Hub.StartTool); *hub.Hub is one.
type TaskStarter interface {
	StartTool(ctx context.Context, caller mcpgram.Caller, server, tool string, args map[string]any, ttl time.Duration) (*mcpgram.Result, *mcpgram.Task, error)
}

// Defaults of Options.
const (
	DefaultMaxOutput   = 32 << 10
	DefaultMaxParallel = 5
)

// Options tune an Executor. Zero values take the defaults.
type Options struct {
	// MaxOutput caps, in bytes, the output of one call given to the model.
	MaxOutput int
	// MaxParallel caps how many calls of one batch run at once.
	MaxParallel int
	Logger      *slog.Logger
	// Tasks, when set, makes tool calls through it, so that a server may
	// run one as a task (Outcome.Task), asked to keep it TaskTTL (0: the
	// server's choice). nil: every call waits for its result.
	Tasks   TaskStarter
	TaskTTL time.Duration
}

// An Executor checks and runs tool calls. It is safe for concurrent use.
type Executor struct {
	hub     Hub
	opts    Options
	logger  *slog.Logger
	checker checker
	indexes indexes
}

// New returns an Executor that runs calls through h. h may be nil when
// only Prepare is used.
func New(h Hub, opts Options) *Executor {
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = DefaultMaxParallel
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Executor{hub: h, opts: opts, logger: logger}
}

// check turns a parsed block into a Call against the catalog, or returns a
// *CheckError whose text tells the model what to fix. Use feedback to wrap
// that text in the result format. Schemas are compiled once per catalog
// Version.
func (e *Executor) check(cat mcpgram.Catalog, b toolcall.Block) (Call, error) {
	return e.checker.check(cat, b)
}

// An Outcome is what running one Call gave.
type Outcome struct {
	Call     Call
	Duration time.Duration
	// OK is false when the call failed to reach the tool (Err) or the tool
	// reported failure (Result.IsError).
	OK bool
	// Result is the server's result, images included; nil when Err is set.
	Result *mcpgram.Result
	// Err is a transport, timeout or not-running error from the hub.
	Err error
	// Task is set, and Result nil, when the server runs the call as a
	// task: its result comes later (see Options.Tasks). OK is then true,
	// and Text tells the model so.
	Task *mcpgram.Task
	// Bytes is the size of the output before the cap.
	Bytes int
	// Text is the outcome for the model, in the package's result format.
	Text string
}

// Run runs the calls (UseMCPTool and AccessMCPResource; others give an
// error outcome) concurrently, at most MaxParallel at once, and returns
// their outcomes in the calls' order. Cancelling ctx cancels the calls.
func (e *Executor) Run(ctx context.Context, caller mcpgram.Caller, calls []Call) []Outcome {
	out := make([]Outcome, len(calls))
	var g errgroup.Group
	g.SetLimit(e.opts.MaxParallel)
	for i, c := range calls {
		g.Go(func() error {
			out[i] = e.RunOne(ctx, caller, c)
			return nil
		})
	}
	_ = g.Wait() // the goroutines return no errors
	return out
}

// RunOne runs one call.
func (e *Executor) RunOne(ctx context.Context, caller mcpgram.Caller, c Call) Outcome {
	o := Outcome{Call: c}
	start := time.Now()
	switch {
	case e.hub == nil:
		o.Err = errors.New("no hub to run calls on")
	case c.Name == toolcall.UseMCPTool:
		args := c.Arguments
		if args == nil {
			args = map[string]any{}
		}
		if e.opts.Tasks != nil {
			o.Result, o.Task, o.Err = e.opts.Tasks.StartTool(ctx, caller, c.Server, c.Tool, args, e.opts.TaskTTL)
		} else {
			o.Result, o.Err = e.hub.CallTool(ctx, caller, c.Server, c.Tool, args)
		}
	case c.Name == toolcall.AccessMCPResource:
		o.Result, o.Err = e.hub.ReadResource(ctx, caller, c.Server, c.URI)
	default:
		o.Err = fmt.Errorf("%s is not a call to run", c.Name)
	}
	o.Duration = time.Since(start)
	if o.Err == nil && o.Task != nil {
		o.OK, o.Text = true, e.taskText(c, o.Task)
		e.logger.LogAttrs(ctx, slog.LevelDebug, "call became a task",
			slog.String("server", c.Server), slog.String("tool", c.Tool), slog.Duration("duration", o.Duration))
		return o
	}
	if o.Err == nil && o.Result == nil {
		o.Result = &mcpgram.Result{}
	}
	o.OK = o.Err == nil && !o.Result.IsError
	var body string
	if o.Err != nil {
		body = o.Err.Error()
	} else {
		body = renderResult(o.Result)
	}
	o.Bytes = len(body)
	o.Text = e.format(c, o.OK, body)
	e.logger.LogAttrs(ctx, slog.LevelDebug, "call done",
		slog.String("call", c.Name), slog.String("server", c.Server), slog.String("tool", c.Tool),
		slog.String("uri", c.URI), slog.Duration("duration", o.Duration), slog.Bool("ok", o.OK), slog.Int("bytes", o.Bytes))
	return o
}

// TaskStarted is what the model reads of a call its server runs as a
// task: the call is answered for now, its result comes in a later message.
const TaskStarted = "The server runs this call in the background, as a task. Its result is not known yet: it will be given to you in a later message, once the task is over, and the user sees that it runs. Do not call it again for the same request; tell the user it is running, and go on with anything else."

// taskText is the outcome for the model of c, which the server runs as
// task: our own sentence, then what the server would have the model told,
// untrusted, fenced as any output.
func (e *Executor) taskText(c Call, task *mcpgram.Task) string {
	text := Header(c.Name, c.Server, target(c), true) + "\n" + TaskStarted
	if task.ModelNote == "" {
		return text
	}
	note := e.format(c, true, task.ModelNote)
	_, body, _ := strings.Cut(note, "\n")
	return text + "\nThe server says:\n" + body
}

// Header returns the first line of the result format for a call or block:
// "[use_mcp_tool for 'echo' on 'everything'] Result:" when ok, "... Error:"
// otherwise.
func Header(name, server, target string, ok bool) string {
	var b strings.Builder
	b.WriteString("[")
	b.WriteString(headerName(name))
	if target != "" {
		b.WriteString(" for '")
		b.WriteString(headerName(target))
		b.WriteString("'")
	}
	if server != "" {
		b.WriteString(" on '")
		b.WriteString(headerName(server))
		b.WriteString("'")
	}
	if ok {
		b.WriteString("] Result:")
	} else {
		b.WriteString("] Error:")
	}
	return b.String()
}

// feedback returns the text for the model when check rejected b with err:
// the Error header of the result format followed by err's message.
func feedback(b toolcall.Block, err error) string {
	server := b.Params["server_name"]
	target := b.Params["tool_name"]
	if b.Name == toolcall.AccessMCPResource {
		target = b.Params["uri"]
	}
	return Header(b.Name, server, target, false) + "\n" + err.Error()
}

// Denied is the text for the model when the user refused a call.
func Denied(c Call) string {
	return Header(c.Name, c.Server, target(c), false) + "\nThe user denied this operation."
}

func target(c Call) string {
	if c.Name == toolcall.AccessMCPResource {
		return c.URI
	}
	return c.Tool
}

func (e *Executor) format(c Call, ok bool, body string) string {
	var b strings.Builder
	b.WriteString(Header(c.Name, c.Server, target(c), ok))
	b.WriteByte('\n')
	body = strings.ToValidUTF8(body, "\uFFFD")
	if strings.TrimSpace(body) == "" {
		b.WriteString("(no output)")
		return b.String()
	}
	cut := 0
	if len(body) > e.opts.MaxOutput {
		n := e.opts.MaxOutput
		for n > 0 && !utf8.RuneStart(body[n]) {
			n--
		}
		cut = len(body) - n
		body = body[:n]
	}
	fence := lines.Fence(body)
	b.WriteString(fence)
	b.WriteByte('\n')
	b.WriteString(body)
	if !strings.HasSuffix(body, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(fence)
	if cut > 0 {
		fmt.Fprintf(&b, "\n(Output cut at %d bytes: %d more bytes were not shown.)", len(body), cut)
	}
	return b.String()
}

// headerName keeps a name from breaking out of its quotes in a header.
func headerName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r < 0x20, r == 0x7f, r == '\u2028', r == '\u2029':
			return ' '
		case r == '\'', r == '[', r == ']':
			return '_'
		}
		return r
	}, s)
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// renderResult writes a result's parts as text for the model. Binary parts
// become a short description: the model cannot see them, the user can.
// Structured content goes once, as compact JSON: in place of the text
// that only repeats it (as the specification asks servers to send), or
// after text that says something else.
func renderResult(r *mcpgram.Result) string {
	var b strings.Builder
	repeats := r.Structured != nil && textRepeats(r)
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch c.Type {
		case mcpgram.ContentText:
			if repeats {
				b.Write(r.Structured)
				repeats = false
				continue
			}
			if r.Structured != nil && sameJSON([]byte(c.Text), r.Structured) {
				continue // written already
			}
			b.WriteString(c.Text)
		case mcpgram.ContentImage:
			fmt.Fprintf(&b, "[image %s, %d bytes, shown to the user]", c.MIMEType, len(c.Data))
		case mcpgram.ContentAudio:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case mcpgram.ContentResource:
			if len(r.Content) > 1 && c.URI != "" {
				fmt.Fprintf(&b, "[resource %s]\n", c.URI)
			}
			if c.Text != "" || len(c.Data) == 0 {
				b.WriteString(c.Text)
			} else {
				fmt.Fprintf(&b, "[binary resource %s, %s, %d bytes]", c.URI, c.MIMEType, len(c.Data))
			}
		case mcpgram.ContentResourceLink:
			// The user gets a button that reads it (see the bot).
			fmt.Fprintf(&b, "[resource link %q: %s, offered to the user to open]", c.Name, c.URI)
		default:
			b.WriteString(c.Text)
		}
	}
	if r.Structured != nil && !textRepeats(r) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("[structured result] ")
		b.Write(r.Structured)
	}
	return b.String()
}

// textRepeats reports whether some text part of r is its structured
// content again, as JSON.
func textRepeats(r *mcpgram.Result) bool {
	for _, c := range r.Content {
		if c.Type == mcpgram.ContentText && sameJSON([]byte(c.Text), r.Structured) {
			return true
		}
	}
	return false
}

// sameJSON reports whether a and b are the same JSON value, however
// written.
func sameJSON(a, b []byte) bool {
	a = bytes.TrimSpace(a)
	if len(a) == 0 || (a[0] != '{' && a[0] != '[') {
		return false
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// needsApproval reports whether the user must approve c before it runs:
// a tool call whose tool is not in its server's autoApprove list, a
// resource read that no "resource:" entry of the list covers, and, always,
// a call that needs the user's own consent (needsConsent), as is a tool
// call to a server still starting or restarting, whose tools' declarations
// are not known yet. approveAll (AUTO_APPROVE=all) approves all but these. The other core tools
// never need approval.
func needsApproval(cat mcpgram.Catalog, c Call, approveAll bool) bool {
	if needsConsent(cat, c) {
		return true
	}
	s, ok := cat.Server(c.Server)
	if ok && s.Coming() && c.Name == toolcall.UseMCPTool {
		// The tool's declarations are not known until the server is up,
		// so whether it needs consent cannot be told: the user decides.
		return true
	}
	if approveAll {
		return false
	}
	switch c.Name {
	case toolcall.UseMCPTool:
		return !ok || !s.AutoApproves(c.Tool)
	case toolcall.AccessMCPResource:
		return !ok || !s.AutoApprovesResource(c.URI)
	}
	return false
}

// needsConsent reports whether c is a call its tool declares to need the
// user's own consent (hub.MetaConsentWhen): the user is asked on a card
// however the server is approved, and no "Always allow" covers it.
func needsConsent(cat mcpgram.Catalog, c Call) bool {
	if c.Name != toolcall.UseMCPTool {
		return false
	}
	s, ok := cat.Server(c.Server)
	if !ok {
		return false
	}
	t, ok := s.Tool(c.Tool)
	return ok && t.NeedsConsent(c.Arguments)
}
