package mcpgram

import (
	"context"
	"encoding/json"
)

// The modes of an elicitation.
const (
	// ElicitForm asks for the fields of a flat JSON Schema object.
	ElicitForm = "form"
	// ElicitURL asks the user to visit a URL, outside the chat.
	ElicitURL = "url"
)

// An ElicitAction is the user's answer to an elicitation.
type ElicitAction string

// The answers a server may get.
const (
	// ElicitAccept: the user submitted the form (Content holds it) or
	// reports having visited the URL.
	ElicitAccept ElicitAction = "accept"
	// ElicitDecline: the user refused.
	ElicitDecline ElicitAction = "decline"
	// ElicitCancel: the user dismissed it, or nobody answered in time.
	ElicitCancel ElicitAction = "cancel"
)

// MaxElicitations bounds the questions one call may ask. A 2025 server
// that asks more gets "cancel" without the user being asked; a call of a
// 2026-07-28 server that asks more fails.
const MaxElicitations = 10

// An Elicitation is one question a server asks mid-call.
type Elicitation struct {
	// Caller is whom the call is made for: only they may answer.
	Caller Caller
	Server string
	// Tool is the tool whose call asks, or URI the resource being read;
	// both are "" when a 2025 server over stdio asks while several calls
	// of the same caller are in flight, as which one asked cannot be told.
	Tool string
	URI  string
	// Mode is ElicitForm or ElicitURL.
	Mode    string
	Message string
	// Schema is the form's requested schema, as compact JSON (ElicitForm).
	Schema json.RawMessage
	// URL is where the server asks the user to go, and ID the server's
	// id of the request (ElicitURL).
	URL string
	ID  string
}

// An ElicitResult is the user's answer.
type ElicitResult struct {
	Action ElicitAction
	// Content is the submitted form (ElicitAccept, ElicitForm only).
	Content map[string]any
}

// An Elicitor asks the user. Elicit returns once the user answered, or
// ctx ended (the call was cancelled); an error is answered "cancel".
type Elicitor interface {
	Elicit(ctx context.Context, e Elicitation) (ElicitResult, error)
}
