// Package mcpgram holds the domain of the bot: what every layer speaks,
// and the small interfaces that join them. A Catalog says what the
// configured MCP servers offer; a Caller is whom a call is made for; a
// Result is what a call returned; an Elicitation is what a server asks
// the user mid-call, and a Connection asks a user to sign in to a server
// that acts as their own account; a SignIn is a sign-in's public face; a
// Profile is a model the bot answers with.
//
// It imports nothing of mcpgram's. Engines implement its interfaces in
// packages of their own: package hub runs the MCP servers (Tools) and
// package oauth keeps the sign-ins to them (Authorizer); the agent asks
// the user (Elicitor, Connector). Only the program (cmd/mcpgram) and the
// test kit build the engines and join them.
package mcpgram

import (
	"context"
	"errors"
)

// Tools are the MCP servers' tools and resources as the agent uses them:
// the catalog of what they offer, and calls of a tool or reads of a
// resource made for a caller. *hub.Hub is one.
type Tools interface {
	// Catalog returns a snapshot of every configured server.
	Catalog() Catalog
	// CallTool calls tool of server with args for caller. A Result whose
	// IsError is set is the tool's own failure; an error is the call's.
	CallTool(ctx context.Context, caller Caller, server, tool string, args map[string]any) (*Result, error)
	// ReadResource reads the resource uri of server for caller.
	ReadResource(ctx context.Context, caller Caller, server, uri string) (*Result, error)
}

// Errors of Tools that callers branch on.
var (
	// ErrUnknownServer means the settings file names no such server.
	ErrUnknownServer = errors.New("unknown server")
	// ErrNotRunning means the server is disabled, failed or stopped, or its
	// connection was lost during the request.
	ErrNotRunning = errors.New("server not running")
	// ErrTimeout means a request got no answer within the server's
	// timeout; the error's text says "timed out after Ns".
	ErrTimeout = errors.New("timed out")
)
