package hub

import "github.com/mcpgram/mcpgram"

// The catalog's types are package catalog's, which imports nothing of
// mcpgram's, so that the prompt can read a catalog without linking the
// hub. These names keep the hub's callers as they were.
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

// Why a server is down, where the hub can tell: see mcpgram.Cause.
const (
	CauseSignIn      = mcpgram.CauseSignIn
	CauseKey         = mcpgram.CauseKey
	CauseUnreachable = mcpgram.CauseUnreachable
)

// ResourcePrefix marks an autoApprove entry that covers resource reads:
// see mcpgram.ResourcePrefix.
const ResourcePrefix = mcpgram.ResourcePrefix
