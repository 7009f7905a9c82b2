// Package catalog is what package mcpgram's catalog was before it moved
// there; its names are mcpgram's until every importer names mcpgram.
package catalog

import "github.com/mcpgram/mcpgram"

// The catalog's types: see package mcpgram.
type (
	Catalog          = mcpgram.Catalog
	ServerInfo       = mcpgram.ServerInfo
	Tool             = mcpgram.Tool
	Hints            = mcpgram.Hints
	Resource         = mcpgram.Resource
	ResourceTemplate = mcpgram.ResourceTemplate
	Status           = mcpgram.Status
	Cause            = mcpgram.Cause
	Prompt           = mcpgram.Prompt
	PromptArgument   = mcpgram.PromptArgument
	Bounds           = mcpgram.Bounds
)

// The states a server moves through: see mcpgram.Status.
const (
	StatusStarting   = mcpgram.StatusStarting
	StatusRestarting = mcpgram.StatusRestarting
	StatusRunning    = mcpgram.StatusRunning
	StatusDisabled   = mcpgram.StatusDisabled
	StatusFailed     = mcpgram.StatusFailed
	StatusStopped    = mcpgram.StatusStopped
)

// Why a server is down: see mcpgram.Cause.
const (
	CauseSignIn      = mcpgram.CauseSignIn
	CauseKey         = mcpgram.CauseKey
	CauseUnreachable = mcpgram.CauseUnreachable
)

// ResourcePrefix: see mcpgram.ResourcePrefix.
const ResourcePrefix = mcpgram.ResourcePrefix
