package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpgram/mcpgram"
)

// ErrUnknownProfile is returned by SetChatProfile for a name no profile
// has.
var ErrUnknownProfile = errors.New("no such model profile")

// A choice is one model a chat may answer with: the client, and its
// profile as read once at New, with the defaults filled in.
type choice struct {
	profile mcpgram.Profile
	model   Model
}

// choices reads the models' profiles, fills their defaults in (XML tool
// calls, the generic prompt) and checks them, and the default's name
// (def, or else the first's), which it returns.
func choices(models []Model, def string) ([]choice, string, error) {
	if len(models) == 0 {
		return nil, "", errors.New("agent: no model")
	}
	out := make([]choice, len(models))
	seen := map[string]bool{}
	for i, m := range models {
		if m == nil {
			return nil, "", fmt.Errorf("agent: model %d is nil", i)
		}
		p := m.Profile()
		switch {
		case p.Name == "":
			return nil, "", fmt.Errorf("agent: profile %d has no name", i)
		case seen[p.Name]:
			return nil, "", fmt.Errorf("agent: two profiles named %q", p.Name)
		case p.Model == "":
			return nil, "", fmt.Errorf("agent: profile %q has no model name", p.Name)
		case p.ContextTokens < 0:
			return nil, "", fmt.Errorf("agent: profile %q: context tokens %d is negative", p.Name, p.ContextTokens)
		}
		seen[p.Name] = true
		p.ToolCalling = cmp.Or(p.ToolCalling, mcpgram.ToolCallingXML)
		if !p.ToolCalling.Valid() {
			return nil, "", fmt.Errorf("agent: profile %q: tool calling %q is not xml, native or auto", p.Name, p.ToolCalling)
		}
		p.Prompt = cmp.Or(p.Prompt, string(mcpgram.PromptGeneric))
		if !mcpgram.PromptVariant(p.Prompt).Valid() {
			return nil, "", fmt.Errorf("agent: profile %q: unknown prompt variant %q", p.Name, p.Prompt)
		}
		out[i] = choice{profile: p, model: m}
	}
	def = cmp.Or(def, out[0].profile.Name)
	if !seen[def] {
		return nil, "", fmt.Errorf("agent: default profile %q is not among the profiles", def)
	}
	return out, def, nil
}

// Profiles returns the profiles a chat may choose, in the configured
// order.
func (pr *Prefs) Profiles() []mcpgram.Profile {
	a := pr.a
	out := make([]mcpgram.Profile, len(a.cfg.choices))
	for i, c := range a.cfg.choices {
		out[i] = c.profile
	}
	return out
}

func (a *Agent) defaultChoice() choice {
	c, _ := a.choice(a.cfg.DefaultProfile)
	return c
}

func (a *Agent) choice(name string) (choice, bool) {
	i := slices.IndexFunc(a.cfg.choices, func(c choice) bool { return c.profile.Name == name })
	if i < 0 {
		return choice{}, false
	}
	return a.cfg.choices[i], true
}

// ChatProfile returns the profile that answers chatID: its choice, or the
// default when it chose none or its choice is no longer configured.
func (pr *Prefs) ChatProfile(ctx context.Context, chatID string) (mcpgram.Profile, error) {
	a := pr.a
	c, _, err := a.chatChoice(ctx, chatID)
	return c.profile, err
}

// chatChoice is ChatProfile, with the model, and the name of a chosen
// profile that is no longer configured ("" when none).
func (a *Agent) chatChoice(ctx context.Context, chatID string) (choice, string, error) {
	name, err := a.cfg.Store.ChatProfile(ctx, chatID)
	if err != nil {
		return a.defaultChoice(), "", err
	}
	c, gone := a.choiceNamed(name)
	return c, gone, nil
}

// choiceNamed is the choice of a chat that chose the profile name ("" for
// none), with name again when it is no longer configured.
func (a *Agent) choiceNamed(name string) (c choice, gone string) {
	if name == "" {
		return a.defaultChoice(), ""
	}
	if c, ok := a.choice(name); ok {
		return c, ""
	}
	return a.defaultChoice(), name
}

// SetChatProfile makes profile answer chatID from its next turn. Who may
// is the front end's business.
func (pr *Prefs) SetChatProfile(ctx context.Context, chatID, profile string) error {
	a := pr.a
	if _, ok := a.choice(profile); !ok {
		return fmt.Errorf("set the model of chat %q: %w: %q", chatID, ErrUnknownProfile, profile)
	}
	return a.cfg.Store.SetChatProfile(ctx, chatID, profile)
}

// resolveProfile sets the turn's profile from name, the chat's choice. A
// chat whose profile was removed from the configuration falls back to the
// default and is told once: its stored choice is cleared.
func (t *turn) resolveProfile(ctx context.Context, name string) error {
	c, gone := t.a.choiceNamed(name)
	t.profile, t.model = c.profile, c.model
	if gone == "" {
		return nil
	}
	t.logger.Warn("the chat's model profile is no longer configured; using the default", "profile", gone, "default", c.profile.Name)
	if err := t.a.cfg.Store.SetChatProfile(ctx, t.caller.ChatID, ""); err != nil {
		return err
	}
	t.emit.send(Event{Kind: EventNotice, Text: fmt.Sprintf(msgProfileGone, gone, c.profile.Name)})
	return nil
}

// msgProfileGone tells a chat its chosen model was removed.
const msgProfileGone = "The model %q this chat chose is no longer configured, so the default, %q, answers now. /model chooses another."

// msgNoVision tells the user a photo did not reach the model.
const msgNoVision = "This chat's model, %q, cannot see images: it reads only the caption. /model may offer one that can."
