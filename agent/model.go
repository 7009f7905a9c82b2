// The model call of a turn: its request (the system prompt, the history
// that fits, the functions in native mode), the streamed reply, native
// tools learnt refused, and what a failed call tells the user.

package agent

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/toolcall"
)

// callModel sends the conversation and streams the reply's visible text.
// It returns the reply as stored: the text, with a native reply's calls
// written as XML blocks ahead of it. In auto mode, an endpoint that
// refuses tools gets the same call again in XML, and XML from then on.
func (t *turn) callModel(ctx context.Context, cat mcpgram.Catalog) (*llm.Response, string, toolcall.Reply, error) {
	native := t.a.native(t.profile)
	resp, stored, reply, err := t.complete(ctx, cat, native)
	if native && t.profile.ToolCalling == mcpgram.ToolCallingAuto && ctx.Err() == nil && t.a.learn(err, t.profile) {
		t.logger.Warn("the endpoint refuses native tools; calling tools in XML from now on", "model", t.profile.Model, "err", err)
		return t.complete(ctx, cat, false)
	}
	return resp, stored, reply, err
}

// request builds one model call's request: the system prompt (listing
// every tool, or searching for them past the profile's threshold: see
// search.go), the history that fits beside it, and in native mode the
// functions. Its messages are built in the turn's slice (see
// turn.callBuf); release lets go of what they hold once the call
// returned.
func (t *turn) request(ctx context.Context, cat mcpgram.Catalog, native bool) (req llm.Request, ts *toolset, release func()) {
	a := t.a
	p := t.profile
	own := len(t.serversOff) > 0
	t.search = t.searching(cat, native)
	sys := a.systemPrompt(cat, mcpgram.PromptVariant(p.Prompt), own, native, t.search)
	if t.search && !native {
		sys += t.searchPrompt(ctx, cat)
	}
	sys += chatInstructions(t.instructions)
	// In place: what t.history's array holds past its end is the turn's
	// own (a kept history is the chat's, whose lock the turn holds), and
	// write stores the same there once the reply is saved.
	history := append(t.history, t.unsaved...)
	history, images := t.withImages(ctx, sys, history)
	req = llm.Request{Logger: t.logger}
	if t.callBuf == nil {
		t.callBuf = new([]llm.Message)
	}
	buf := t.callBuf
	if n := len(history) + 1; cap(*buf) < n {
		// What this call needs, rather than growing to it, and room for
		// what the turn's next calls add.
		*buf = make([]llm.Message, 0, n+n/8+16)
	}
	t.tools = nil
	switch {
	case native && t.search:
		ts = t.searchTools(ctx, cat)
	case native:
		ts = a.toolset(cat, own, false)
	}
	if native {
		t.tools = ts
		req.Messages, req.Tools = nativeMessages(*buf, sys, history, images, ts.set), ts.tools
	} else {
		req.Messages = modelMessages(*buf, sys, history, images)
	}
	temp := float32(math.Max(0, math.Round((float64(p.Temperature)-0.1*float64(t.mistakes))*100)/100))
	req.Temperature = &temp
	msgs := req.Messages
	*buf = msgs[:0] // grown, it may be another array
	return req, ts, func() { clear(msgs) }
}

// complete makes one model call, native or XML.
func (t *turn) complete(ctx context.Context, cat mcpgram.Catalog, native bool) (*llm.Response, string, toolcall.Reply, error) {
	a := t.a
	p := t.profile
	req, ts, release := t.request(ctx, cat, native)
	defer release()
	msgs := req.Messages

	parser := toolcall.NewParser()
	shown := ""
	start := time.Now()
	var firstToken time.Duration
	req.OnDelta = func(d string) {
		if firstToken == 0 {
			firstToken = time.Since(start)
		}
		if v, _ := parser.Write(d); v != shown {
			shown = v
			t.emit.send(Event{Kind: EventText, Text: v})
		}
	}
	req.OnRetry = func(int, time.Duration, error) {
		// The user waits through the retry: the first token is the
		// one of the attempt that answers.
		firstToken = 0
		parser = toolcall.NewParser()
		if shown != "" {
			shown = ""
			t.emit.send(Event{Kind: EventText, Text: ""})
		}
	}
	resp, err := t.model.Complete(ctx, req)
	d := time.Since(start)
	outcome := modelOutcome(ctx, err)
	a.cfg.Metrics.ModelCall(p.Model, outcome, d, firstToken)
	t.modelCalls = append(t.modelCalls, store.ModelCall{Outcome: outcome, Duration: d})
	debug := t.logger.Enabled(ctx, slog.LevelDebug) // spares a disabled line's arguments
	if err != nil {
		if debug {
			t.logger.Debug("model call", "outcome", outcome, "duration", d, "native", native)
		}
		if le := (*llm.Error)(nil); errors.As(err, &le) && le.Kind == llm.KindTooLong {
			t.spentCut(msgs, le.Read)
		}
		return nil, "", toolcall.Reply{}, err
	}
	in, out, estimated := t.spent(msgs, resp)
	mc := &t.modelCalls[len(t.modelCalls)-1]
	mc.In, mc.Out = in, out
	if debug {
		t.logger.Debug("model call", "outcome", outcome, "duration", d, "first_token", firstToken,
			"in", in, "out", out, "estimated", estimated, "attempts", resp.Attempts, "native", native, "tool_calls", len(resp.ToolCalls))
	}
	stored := resp.Content
	reply := parser.Close()
	switch {
	case native && len(resp.ToolCalls) > 0:
		stored = storedReply(ts.set, resp)
		reply = toolcall.Parse(stored)
	case !native:
		stored, reply = reasoned(stored, reply, resp.Reasoning)
	}
	if reply.Text != shown {
		t.emit.send(Event{Kind: EventText, Text: reply.Text})
	}
	return resp, stored, reply, nil
}

// reasoned takes the call a model wrote only while it reasoned (in the
// endpoint's reasoning channel, or in <think>), its reply's text holding
// none: see toolcall.Reply.CallFromThinking. The call is stored after the
// text, as the call acted on, so that the model reads back what it set in
// motion and a restart finds it (see unanswered).
func reasoned(stored string, reply toolcall.Reply, reasoning string) (string, toolcall.Reply) {
	reply.Thinking = strings.TrimSpace(reasoning + "\n" + reply.Thinking)
	withCall, ok := reply.CallFromThinking()
	if !ok {
		return stored, reply
	}
	return strings.TrimSpace(stored + "\n\n" + withCall.Blocks[0].Raw), withCall
}

// modelFailed ends the turn after a failed model call.
func (t *turn) modelFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return t.cancelled(ctx)
	}
	msg, kind := msgInternal, kindModel
	var le *llm.Error
	if errors.As(err, &le) {
		msg, kind = le.UserMessage(), modelOutcome(ctx, err)
	}
	return t.failAs(ctx, "", kind, msg, err)
}
