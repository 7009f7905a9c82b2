package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgram/mcpgram"
)

// Prompts: the prompt templates servers offer the user (prompts/list,
// prompts/get) and the suggestions they give for an argument
// (completion/complete). A prompt is chosen by a person, not the model,
// so the model never sees the list.

// Bounds on what a server's prompts may hold.
const (
	// MaxPromptArguments bounds a prompt's arguments: each is a field of
	// a form, and a form has at most form.MaxFields.
	MaxPromptArguments = 50
	// MaxSuggestions is how many completions of an argument Complete
	// returns at most: a handful of buttons, not a list to scroll.
	MaxSuggestions = 5
	// MaxSuggestion bounds one suggestion, in characters.
	MaxSuggestion = 100
)

// listPrompts lists the prompts of the server of c, unscreened. Prompts
// are an extra: a server that fails to list them still serves its tools.
func (s *server) listPrompts(ctx context.Context, c *conn) []mcpgram.Prompt {
	if c.client.GetServerCapabilities().Prompts == nil {
		return nil
	}
	res, err := c.client.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		s.log.Warn("list prompts", "err", err)
		return nil
	}
	out := make([]mcpgram.Prompt, 0, len(res.Prompts))
	for _, p := range res.Prompts {
		pr := mcpgram.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			pr.Arguments = append(pr.Arguments, mcpgram.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
		out = append(out, pr)
	}
	slices.SortStableFunc(out, func(a, b mcpgram.Prompt) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ScreenPrompts checks prompts as a server listed them, the way Screen
// checks tools: it leaves out those whose names are not valid (CheckName)
// or given twice, and those with an argument whose name is not valid or
// given twice or with more than MaxPromptArguments arguments; it folds
// titles onto one line and cuts them and the descriptions. Each change
// is a note.
func ScreenPrompts(prompts []mcpgram.Prompt) ([]mcpgram.Prompt, []string) {
	var notes []string
	seen := map[string]bool{}
	kept := make([]mcpgram.Prompt, 0, len(prompts))
	for _, p := range prompts {
		if err := CheckName(p.Name); err != nil {
			notes = append(notes, "refused a prompt: "+err.Error())
			continue
		}
		if seen[p.Name] {
			notes = append(notes, fmt.Sprintf("refused a second prompt named %q", p.Name))
			continue
		}
		seen[p.Name] = true
		if why := badArguments(p.Arguments); why != "" {
			notes = append(notes, fmt.Sprintf("refused the prompt %q: %s", p.Name, why))
			continue
		}
		what := "prompt " + strconv.Quote(p.Name)
		p.Description = cutDescription(p.Description, what, &notes)
		p.Title = cutTitle(p.Title, p.Name, &notes)
		args := make([]mcpgram.PromptArgument, len(p.Arguments))
		for i, a := range p.Arguments {
			a.Title = cutTitle(a.Title, p.Name+"."+a.Name, &notes)
			a.Description = cutDescription(a.Description, what+" argument "+strconv.Quote(a.Name), &notes)
			args[i] = a
		}
		p.Arguments = args
		kept = append(kept, p)
	}
	return kept, capNotes(notes)
}

// badArguments says what is wrong with a prompt's arguments, or "".
func badArguments(args []mcpgram.PromptArgument) string {
	if len(args) > MaxPromptArguments {
		return fmt.Sprintf("%d arguments, more than %d", len(args), MaxPromptArguments)
	}
	seen := map[string]bool{}
	for _, a := range args {
		if err := CheckName(a.Name); err != nil {
			return "an argument: " + err.Error()
		}
		if seen[a.Name] {
			return fmt.Sprintf("the argument %q given twice", a.Name)
		}
		seen[a.Name] = true
	}
	return ""
}

// GetPrompt gets prompt name of server with args, for caller. The prompt
// must be in the server's screened catalog. Arguments the prompt does not
// declare are an error, as are required ones missing.
func (h *Hub) GetPrompt(ctx context.Context, caller mcpgram.Caller, server, name string, args map[string]string) (*mcpgram.PromptResult, error) {
	s, err := h.server(server)
	if err != nil {
		return nil, fmt.Errorf("get prompt %q: %w", name, err)
	}
	p, ok := s.info().Prompt(name)
	if !ok {
		return nil, fmt.Errorf("get prompt %q on %q: %w", name, server, ErrUnknownPrompt)
	}
	if err := checkPromptArgs(p, args); err != nil {
		return nil, fmt.Errorf("get prompt %q on %q: %w", name, server, err)
	}
	if args == nil {
		args = map[string]string{}
	}
	raw, err := s.request(ctx, string(mcp.MethodPromptsGet), map[string]any{
		"name": name, "arguments": args, "_meta": meta(caller),
	}, caller, "", "")
	if err != nil {
		return nil, fmt.Errorf("get prompt %q on %q: %w", name, server, err)
	}
	res, err := decodePromptResult(raw)
	if err != nil {
		return nil, fmt.Errorf("get prompt %q on %q: %w", name, server, err)
	}
	return res, nil
}

// ErrUnknownPrompt means the server offers no such prompt (or screening
// refused it).
var ErrUnknownPrompt = errors.New("no such prompt")

func checkPromptArgs(p mcpgram.Prompt, args map[string]string) error {
	for k := range args {
		if !slices.ContainsFunc(p.Arguments, func(a mcpgram.PromptArgument) bool { return a.Name == k }) {
			return fmt.Errorf("the prompt takes no argument %q", k)
		}
	}
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return fmt.Errorf("the argument %q is required", a.Name)
		}
	}
	return nil
}

func decodePromptResult(raw json.RawMessage) (*mcpgram.PromptResult, error) {
	var w struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("decode prompt: %w", err)
	}
	res := &mcpgram.PromptResult{Description: w.Description}
	for _, m := range w.Messages {
		role := m.Role
		if role != "assistant" {
			role = "user"
		}
		res.Messages = append(res.Messages, mcpgram.PromptMessage{Role: role, Content: decodeContent(m.Content)})
	}
	return res, nil
}

// Complete asks server for suggestions of the argument arg of prompt,
// given what is typed so far (value) and the arguments already given
// (known). It returns at most MaxSuggestions of them, in the server's
// order, each one line of at most MaxSuggestion printable characters
// (the others left out) and none twice; none when the server offers no
// completions.
func (h *Hub) Complete(ctx context.Context, caller mcpgram.Caller, server, prompt, arg, value string, known map[string]string) ([]string, error) {
	s, err := h.server(server)
	if err != nil {
		return nil, fmt.Errorf("complete %q: %w", arg, err)
	}
	if !s.info().Completions {
		return nil, nil
	}
	params := map[string]any{
		"ref":      map[string]any{"type": "ref/prompt", "name": prompt},
		"argument": map[string]any{"name": arg, "value": value},
		"_meta":    meta(caller),
	}
	if len(known) > 0 {
		params["context"] = map[string]any{"arguments": known}
	}
	raw, err := s.request(ctx, "completion/complete", params, caller, "", "")
	if err != nil {
		return nil, fmt.Errorf("complete %q of prompt %q on %q: %w", arg, prompt, server, err)
	}
	var w struct {
		Completion struct {
			Values []json.RawMessage `json:"values"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("complete %q of prompt %q on %q: decode: %w", arg, prompt, server, err)
	}
	var out []string
	for _, rv := range w.Completion.Values {
		var v string
		if json.Unmarshal(rv, &v) != nil || !plainSuggestion(v) || slices.Contains(out, v) {
			continue
		}
		if out = append(out, v); len(out) == MaxSuggestions {
			break
		}
	}
	return out, nil
}

// plainSuggestion reports whether v can be a button: one line of
// printable characters, not blank, of at most MaxSuggestion characters.
func plainSuggestion(v string) bool {
	if strings.TrimSpace(v) == "" || !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxSuggestion {
		return false
	}
	return !strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' })
}
