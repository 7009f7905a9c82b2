// Prompts: a server's prompt templates, chosen by the user (not the
// model). A prompt with arguments is asked as a form (ModePrompt), kept
// in the store like a server's form so that any instance takes the next
// press, with the server's suggestions for the current argument as
// options; once submitted, the front end gets the prompt's messages
// (GetPrompt) and sends them as the user's turn.

package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/form"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
)

// ModePrompt is the Mode of a form that asks a prompt's arguments.
const ModePrompt = "prompt"

// Prompts are the servers' prompt templates a user chooses: their
// arguments asked as forms, and their messages as a turn's input.
type Prompts struct{ a *Agent }

// NewPrompts returns the prompts users choose through a.
func NewPrompts(a *Agent) *Prompts { return &Prompts{a: a} }

// ErrNoPrompt: the chat cannot use such a prompt now (no such prompt,
// its server not running or turned off in the chat).
var ErrNoPrompt = errors.New("no such prompt here")

// Bounds on what a prompt makes of a turn.
const (
	// maxPromptImages is how many of a prompt's images go to the model.
	maxPromptImages = 4
	// maxPromptImage bounds one image, in bytes.
	maxPromptImage = 5 << 20
	// completeTimeout bounds one completion/complete call: suggestions
	// are a help, and a form is shown without them.
	completeTimeout = 5 * time.Second
)

// A PromptInput is what a prompt's messages make of a turn's input.
type PromptInput struct {
	Server, Prompt string
	// Text is the turn's message: the prompt's texts and embedded text
	// resources, cut at the executor's output cap like a tool result.
	Text string
	// Images are the prompt's images, at most maxPromptImages.
	Images []llm.Image
	// Cut says the text was cut; Left how many images were left out.
	Cut  bool
	Left int
}

// Prompt returns the named prompt of server, if the chat of caller may
// use it now: the server runs and the chat has not turned it off.
func (ps *Prompts) Prompt(ctx context.Context, caller mcpgram.Caller, server, name string) (mcpgram.Prompt, error) {
	a := ps.a
	s, ok := a.cfg.Hub.Catalog().Server(server)
	if !ok || s.Status != mcpgram.StatusRunning {
		return mcpgram.Prompt{}, ErrNoPrompt
	}
	p, ok := s.Prompt(name)
	if !ok {
		return mcpgram.Prompt{}, ErrNoPrompt
	}
	off, err := a.cfg.Store.ChatServersOff(ctx, a.chatOf(caller.ChatID))
	if err != nil {
		return mcpgram.Prompt{}, fmt.Errorf("prompt: %w", err)
	}
	if slices.Contains(off, server) {
		return mcpgram.Prompt{}, ErrNoPrompt
	}
	return p, nil
}

// OpenPrompt opens the form of the arguments of prompt name of server
// for caller, closing any other prompt form of theirs in the chat, and
// returns it with the server's suggestions for its first argument. A
// prompt without arguments needs no form: it returns nil, and the front
// end gets the prompt at once.
func (ps *Prompts) OpenPrompt(ctx context.Context, caller mcpgram.Caller, server, name string) (*Form, error) {
	a := ps.a
	p, err := ps.Prompt(ctx, caller, server, name)
	if err != nil || len(p.Arguments) == 0 {
		return nil, err
	}
	a.closePromptForms(ctx, caller)
	pl := formPayload{Server: server, Prompt: name, Mode: ModePrompt, Message: cutRunes(p.Description, maxFormMessage), Schema: promptSchema(p)}
	fm, err := form.Parse(pl.Schema)
	if err != nil {
		return nil, fmt.Errorf("prompt %q: %w", name, err)
	}
	v := &Form{Server: server, Prompt: name, Mode: ModePrompt, Fields: fm}
	a.suggest(ctx, caller, v, &pl)
	payload, err := json.Marshal(pl)
	if err != nil {
		return nil, fmt.Errorf("store prompt form: %w", err)
	}
	expires := a.cfg.Now().Add(a.cfg.ApprovalTimeout)
	id, err := a.cfg.Store.CreateForm(ctx, store.Form{ChatID: caller.ChatID, UserID: caller.UserID, Payload: string(payload), ExpiresAt: expires})
	if err != nil {
		return nil, fmt.Errorf("store prompt form: %w", err)
	}
	return formView(store.Form{ID: id, Payload: string(payload), ExpiresAt: expires})
}

// PromptForm is the form of p's arguments (see promptSchema), for a front
// end that asks them itself.
func PromptForm(p mcpgram.Prompt) (*form.Form, error) {
	return form.Parse(promptSchema(p))
}

// promptSchema is the form of p's arguments: a flat object of strings,
// in the order the server gave them, required as it says.
func promptSchema(p mcpgram.Prompt) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, arg := range p.Arguments {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(arg.Name)
		prop, _ := json.Marshal(map[string]string{"type": "string", "title": arg.Title, "description": arg.Description})
		b.Write(key)
		b.WriteByte(':')
		b.Write(prop)
		if arg.Required {
			required = append(required, arg.Name)
		}
	}
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	fmt.Fprintf(&b, `},"required":%s}`, req)
	return b.Bytes()
}

// suggest asks the server of prompt form v for suggestions of its current
// argument, given the answers so far, and keeps them in v and pl.
func (a *Agent) suggest(ctx context.Context, caller mcpgram.Caller, v *Form, pl *formPayload) {
	v.Suggestions, pl.Suggest = nil, nil
	fd, ok := v.Fields.Current(v.State)
	if !ok {
		return
	}
	known := map[string]string{}
	for _, f := range v.Fields.Fields {
		if val, ok := v.Fields.Value(v.State, f.Name); ok {
			known[f.Name], _ = val.(string)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	values, err := a.cfg.Hub.Complete(cctx, caller, v.Server, v.Prompt, fd.Name, "", known)
	if err != nil {
		a.logger.Warn("complete a prompt's argument", "server", v.Server, "prompt", v.Prompt, "argument", fd.Name, "err", err)
		return
	}
	if len(values) > 0 {
		v.Suggestions = values
		pl.Suggest = &suggestion{Step: v.State.Step, Values: values}
	}
}

// A suggestion is what the server suggested for the field at Step.
type suggestion struct {
	Step   int      `json:"step"`
	Values []string `json:"values"`
}

// closePromptForms closes caller's open prompt forms in their chat.
func (a *Agent) closePromptForms(ctx context.Context, caller mcpgram.Caller) {
	fs, err := a.cfg.Store.OpenForms(ctx, caller.ChatID)
	if err != nil {
		a.logger.Error("open forms", "chat", caller.ChatID, "err", err)
		return
	}
	for _, f := range fs {
		if f.UserID != caller.UserID || !isPromptForm(f) {
			continue
		}
		if err := a.saveForm(ctx, f.ID, f.Version, f.Payload, FormCancelled); err != nil && !errors.Is(err, store.ErrResolved) && !errors.Is(err, store.ErrChanged) {
			a.logger.Error("close prompt form", "form", f.ID, "err", err)
		}
	}
}

func isPromptForm(f store.Form) bool {
	var p struct {
		Mode string `json:"mode"`
	}
	return json.Unmarshal([]byte(f.Payload), &p) == nil && p.Mode == ModePrompt
}

// OpenPromptForm returns caller's open prompt form in their chat, if any:
// a typed reply there answers it, on whichever instance it arrives.
func (ps *Prompts) OpenPromptForm(ctx context.Context, caller mcpgram.Caller) (*Form, bool, error) {
	a := ps.a
	fs, err := a.cfg.Store.OpenForms(ctx, caller.ChatID)
	if err != nil {
		return nil, false, err
	}
	now := a.cfg.Now()
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		if f.UserID != caller.UserID || !isPromptForm(f) || !now.Before(f.ExpiresAt) {
			continue
		}
		v, err := formView(f)
		if err != nil {
			return nil, false, err
		}
		return v, true, nil
	}
	return nil, false, nil
}

// PromptArguments are the arguments a submitted prompt form gives.
func PromptArguments(f *Form) (map[string]string, error) {
	content, err := f.Fields.Submit(f.State)
	if err != nil {
		return nil, err
	}
	args := make(map[string]string, len(content))
	for k, v := range content {
		s, _ := v.(string)
		args[k] = s
	}
	return args, nil
}

// GetPrompt gets prompt name of server with args for caller, if the chat
// may use it, and makes its messages a turn's input.
func (ps *Prompts) GetPrompt(ctx context.Context, caller mcpgram.Caller, server, name string, args map[string]string) (PromptInput, error) {
	a := ps.a
	if _, err := ps.Prompt(ctx, caller, server, name); err != nil {
		return PromptInput{}, err
	}
	res, err := a.cfg.Hub.GetPrompt(ctx, caller, server, name, args)
	if err != nil {
		return PromptInput{}, err
	}
	in := promptInput(res, a.cfg.Executor.MaxOutput)
	in.Server, in.Prompt = server, name
	if strings.TrimSpace(in.Text) == "" && len(in.Images) == 0 {
		return PromptInput{}, fmt.Errorf("prompt %q of %q: %w", name, server, errEmptyPrompt)
	}
	return in, nil
}

var errEmptyPrompt = errors.New("the prompt has no messages")

// promptInput makes the messages of res one message of the user: the
// texts, and the embedded text resources headed by their URIs, in order,
// cut at max bytes (0: executor.DefaultMaxOutput); the images apart. A
// prompt that holds the assistant's words too has each message headed by
// its role, so that the model reads them as the server wrote them.
func promptInput(res *mcpgram.PromptResult, max int) PromptInput {
	if max <= 0 {
		max = executor.DefaultMaxOutput
	}
	roles := slices.ContainsFunc(res.Messages, func(m mcpgram.PromptMessage) bool { return m.Role == "assistant" })
	var in PromptInput
	var parts []string
	for _, m := range res.Messages {
		c := m.Content
		var text string
		switch {
		case c.Type == mcpgram.ContentImage && len(c.Data) > 0:
			if len(in.Images) == maxPromptImages || len(c.Data) > maxPromptImage {
				in.Left++
				continue
			}
			in.Images = append(in.Images, llm.Image{MIMEType: c.MIMEType, Data: c.Data})
			continue
		case c.Type == mcpgram.ContentResource && c.Text != "":
			text = "Resource " + c.URI + ":\n" + c.Text
		case c.Type == mcpgram.ContentResource:
			text = fmt.Sprintf("[resource %s: %d bytes of %s, not shown]", c.URI, len(c.Data), cmp.Or(c.MIMEType, "data"))
		case c.Type == mcpgram.ContentResourceLink:
			text = "[link to the resource " + c.URI + "]"
		case c.Text != "":
			text = c.Text
		default:
			text = "[" + c.Type + " content, not shown]"
		}
		if roles {
			text = strings.ToUpper(m.Role[:1]) + m.Role[1:] + ": " + text
		}
		parts = append(parts, text)
	}
	in.Text = strings.ToValidUTF8(strings.Join(parts, "\n\n"), "\uFFFD")
	if len(in.Text) > max {
		n := max
		for n > 0 && !utf8.RuneStart(in.Text[n]) {
			n--
		}
		in.Text = fmt.Sprintf("%s\n(The prompt was cut at %d bytes: %d more bytes were not sent.)", in.Text[:n], n, len(in.Text)-n)
		in.Cut = true
	}
	return in
}
