package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// An AppView is one call of a tool that has an MCP App, kept for the
// page that shows it: the page's URL names only ID, and whichever
// instance serves it, after any restart, finds the rest here. Views are
// bounded in size (see [AppView.Check]) and per chat (see
// [AppViews.PutAppView]), and expire.
type AppView struct {
	// ID is the caller's random name for the view, unique, at most 64
	// bytes.
	ID     string
	ChatID string
	UserID string // whose turn the tool ran for; only they may open it
	// Server and Tool name the call; ResourceURI is the tool's ui://
	// page and Title what its button says: the server's text, untrusted.
	Server      string
	Tool        string
	ResourceURI string
	Title       string
	// Input is the call's arguments and Result its result, as JSON,
	// at most MaxAppInput and MaxAppResult bytes; nil: none kept.
	Input     []byte
	Result    []byte
	CreatedAt time.Time
	ExpiresAt time.Time
}

// The bounds of an AppView's parts, in bytes.
const (
	MaxAppInput  = 64 << 10
	MaxAppResult = 256 << 10
	maxAppText   = 2048
)

// ErrTooLarge is returned when what is to be kept passes its bound.
var ErrTooLarge = errors.New("too large")

// Check reports whether v is within the bounds a store keeps, wrapping
// ErrTooLarge if not.
func (v AppView) Check() error {
	texts := map[string]string{"id": v.ID, "server": v.Server, "tool": v.Tool, "resource URI": v.ResourceURI, "title": v.Title}
	for name, s := range texts {
		limit := maxAppText
		if name == "id" {
			limit = 64
		}
		if len(s) > limit {
			return fmt.Errorf("app view's %s of %d bytes (at most %d): %w", name, len(s), limit, ErrTooLarge)
		}
	}
	if len(v.Input) > MaxAppInput {
		return fmt.Errorf("app view's input of %d bytes (at most %d): %w", len(v.Input), MaxAppInput, ErrTooLarge)
	}
	if len(v.Result) > MaxAppResult {
		return fmt.Errorf("app view's result of %d bytes (at most %d): %w", len(v.Result), MaxAppResult, ErrTooLarge)
	}
	return nil
}

// AppViews keeps the calls whose MCP Apps users may open (see [AppView]).
type AppViews interface {
	// PutAppView stores v and, in the same transaction, deletes the
	// chat's views expired at v.CreatedAt and those beyond its keep
	// newest (v among them). A zero CreatedAt means now. A view past
	// its bounds is refused with ErrTooLarge, and nothing stored.
	// Storing an ID again changes nothing (a retry is harmless).
	PutAppView(ctx context.Context, v AppView, keep int) error
	// GetAppView returns the view with the given ID, or ErrNotFound. A
	// view past its ExpiresAt is still returned until pruned: expiry is
	// decided by the caller.
	GetAppView(ctx context.Context, id string) (AppView, error)
	// PruneAppViews deletes the views and the app contexts expired at or
	// before now, and returns how many went.
	PruneAppViews(ctx context.Context, now time.Time) (int64, error)
	// PutAppContext keeps c for its chat's next turn, in place of what was
	// kept for it; one with an empty Text deletes what was kept. One past
	// its bounds is refused with ErrTooLarge.
	PutAppContext(ctx context.Context, c AppContext) error
	// TakeAppContext returns what is kept for the chat and deletes it, in
	// one statement: of two takers, one gets it. Nothing kept, or a
	// context past its ExpiresAt at now, is ErrNotFound.
	TakeAppContext(ctx context.Context, chatID string, now time.Time) (AppContext, error)
}

// An AppContext is what an MCP App gave the model for its chat's next
// turn (ui/update-model-context), kept in the store so that the turn
// finds it on whichever instance it runs, after a restart too.
type AppContext struct {
	ChatID, UserID string
	// Title names the app; Text is what it said.
	Title, Text          string
	CreatedAt, ExpiresAt time.Time
}

// MaxAppContext bounds an AppContext's Text, in bytes.
const MaxAppContext = 4096

// Check refuses a context past its bounds with ErrTooLarge.
func (c AppContext) Check() error {
	if len(c.Text) > MaxAppContext || len(c.Title) > maxAppText {
		return fmt.Errorf("app context of %d bytes, title %d (at most %d, %d): %w", len(c.Text), len(c.Title), MaxAppContext, maxAppText, ErrTooLarge)
	}
	return nil
}
