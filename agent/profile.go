package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpgram/mcpgram/prompt"
)

// ErrUnknownProfile is returned by SetProfile for a name no profile has.
var ErrUnknownProfile = errors.New("no such model profile")

// checkProfiles fills Profiles and DefaultProfile in, and checks them.
func (cfg *Config) checkProfiles() error {
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = []Profile{{
			Name: "default", Model: cfg.Model, ModelName: cfg.ModelName, Temperature: cfg.Temperature,
			MaxContextTokens: cfg.MaxContextTokens, Vision: cfg.Vision,
		}}
	}
	cfg.Profiles = slices.Clone(cfg.Profiles)
	seen := map[string]bool{}
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		switch {
		case p.Name == "":
			return fmt.Errorf("agent: profile %d has no name", i)
		case seen[p.Name]:
			return fmt.Errorf("agent: two profiles named %q", p.Name)
		case p.Model == nil:
			return fmt.Errorf("agent: profile %q has no model", p.Name)
		case p.MaxContextTokens < 0:
			return fmt.Errorf("agent: profile %q: max context tokens %d is negative", p.Name, p.MaxContextTokens)
		}
		seen[p.Name] = true
		if p.ModelName == "" {
			p.ModelName = "model"
			if m, ok := p.Model.(interface{ Model() string }); ok && m.Model() != "" {
				p.ModelName = m.Model()
			}
		}
		if p.Prompt == "" {
			p.Prompt = prompt.Generic
		}
		if !p.Prompt.Valid() {
			return fmt.Errorf("agent: profile %q: unknown prompt variant %q", p.Name, p.Prompt)
		}
	}
	if cfg.DefaultProfile == "" {
		cfg.DefaultProfile = cfg.Profiles[0].Name
	}
	if !seen[cfg.DefaultProfile] {
		return fmt.Errorf("agent: default profile %q is not among the profiles", cfg.DefaultProfile)
	}
	return nil
}

// Profiles returns the profiles a chat may choose, in the configured
// order.
func (a *Agent) Profiles() []Profile { return slices.Clone(a.cfg.Profiles) }

// DefaultProfile returns the profile of a chat that chose none.
func (a *Agent) DefaultProfile() Profile {
	p, _ := a.profile(a.cfg.DefaultProfile)
	return p
}

func (a *Agent) profile(name string) (Profile, bool) {
	i := slices.IndexFunc(a.cfg.Profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return a.cfg.Profiles[i], true
}

// ChatProfile returns the profile that answers chatID: its choice, or the
// default when it chose none or its choice is no longer configured.
func (a *Agent) ChatProfile(ctx context.Context, chatID string) (Profile, error) {
	p, _, err := a.chatProfile(ctx, chatID)
	return p, err
}

// chatProfile is ChatProfile, with the name of a chosen profile that is
// no longer configured ("" when none).
func (a *Agent) chatProfile(ctx context.Context, chatID string) (Profile, string, error) {
	name, err := a.cfg.Store.ChatModel(ctx, chatID)
	if err != nil {
		return a.DefaultProfile(), "", err
	}
	if name == "" {
		return a.DefaultProfile(), "", nil
	}
	if p, ok := a.profile(name); ok {
		return p, "", nil
	}
	return a.DefaultProfile(), name, nil
}

// SetProfile makes profile answer chatID from its next turn. Who may is
// the front end's business.
func (a *Agent) SetProfile(ctx context.Context, chatID, profile string) error {
	if _, ok := a.profile(profile); !ok {
		return fmt.Errorf("set the model of chat %q: %w: %q", chatID, ErrUnknownProfile, profile)
	}
	return a.cfg.Store.SetChatModel(ctx, chatID, profile)
}

// resolveProfile sets the turn's profile. A chat whose profile was
// removed from the configuration falls back to the default and is told
// once: its stored choice is cleared.
func (t *turn) resolveProfile(ctx context.Context) error {
	p, gone, err := t.a.chatProfile(ctx, t.caller.ChatID)
	t.profile = p
	if err != nil || gone == "" {
		return err
	}
	t.logger.Warn("the chat's model profile is no longer configured; using the default", "profile", gone, "default", p.Name)
	if err := t.a.cfg.Store.SetChatModel(ctx, t.caller.ChatID, ""); err != nil {
		return err
	}
	t.emit.send(Event{Kind: EventNotice, Text: fmt.Sprintf(msgProfileGone, gone, p.Name)})
	return nil
}

// msgProfileGone tells a chat its chosen model was removed.
const msgProfileGone = "The model %q this chat chose is no longer configured, so the default, %q, answers now. /model chooses another."

// msgNoVision tells the user a photo did not reach the model.
const msgNoVision = "This chat's model, %q, cannot see images: it reads only the caption. /model may offer one that can."
