package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
)

// Prefs are what each chat chooses for itself: its own instructions to
// the assistant, the servers it turns off, and the profile (model) that
// answers it. Its turns read them at their start. Who may change them is
// the front end's business.
type Prefs struct{ a *Agent }

// NewPrefs returns the chats' preferences a's turns follow.
func NewPrefs(a *Agent) *Prefs { return &Prefs{a: a} }

// DefaultProfile returns the profile of a chat that chose none.
func (pr *Prefs) DefaultProfile() mcpgram.Profile { return pr.a.defaultChoice().profile }

// MaxInstructions bounds what /system may add to the prompt, in runes.
const MaxInstructions = 2000

// ErrInstructionsTooLong is returned by SetInstructions past MaxInstructions.
var ErrInstructionsTooLong = fmt.Errorf("agent: instructions longer than %d characters", MaxInstructions)

// Instructions returns what chatID asked the assistant to follow, or "".
func (pr *Prefs) Instructions(ctx context.Context, chatID string) (string, error) {
	a := pr.a
	return a.cfg.Store.ChatInstructions(ctx, chatID)
}

// SetInstructions replaces chatID's instructions; "" clears them. They
// take effect from the next turn. Who may set them is the front end's
// business.
func (pr *Prefs) SetInstructions(ctx context.Context, chatID, instructions string) error {
	a := pr.a
	instructions = strings.TrimSpace(instructions)
	if utf8.RuneCountInString(instructions) > MaxInstructions {
		return ErrInstructionsTooLong
	}
	return a.cfg.Store.SetChatInstructions(ctx, chatID, instructions)
}

// ServersOff returns the servers chatID turned off for itself.
func (pr *Prefs) ServersOff(ctx context.Context, chatID string) ([]string, error) {
	a := pr.a
	return a.cfg.Store.ChatServersOff(ctx, chatID)
}

// SetServerOff turns server off (or back on) for chatID alone, from its
// next turn; the operator's own switch stays the hub's. Who may is the
// front end's business.
func (pr *Prefs) SetServerOff(ctx context.Context, chatID, server string, off bool) error {
	a := pr.a
	cur, err := a.cfg.Store.ChatServersOff(ctx, chatID)
	if err != nil {
		return err
	}
	cur = slices.DeleteFunc(cur, func(s string) bool { return s == server })
	if off {
		cur = append(cur, server)
	}
	return a.cfg.Store.SetChatServersOff(ctx, chatID, cur)
}
