package hub

import "github.com/mcpgram/mcpgram/catalog"

// The catalog's types are package catalog's, which imports nothing of
// mcpgram's, so that the prompt can read a catalog without linking the
// hub. These names keep the hub's callers as they were.
type (
	Catalog          = catalog.Catalog
	ServerInfo       = catalog.ServerInfo
	Tool             = catalog.Tool
	Hints            = catalog.Hints
	Resource         = catalog.Resource
	ResourceTemplate = catalog.ResourceTemplate
	Status           = catalog.Status
	Cause            = catalog.Cause
	Prompt           = catalog.Prompt
	PromptArgument   = catalog.PromptArgument
)

// The states a server moves through: see catalog.Status.
const (
	StatusStarting   = catalog.StatusStarting
	StatusRestarting = catalog.StatusRestarting
	StatusRunning    = catalog.StatusRunning
	StatusDisabled   = catalog.StatusDisabled
	StatusFailed     = catalog.StatusFailed
	StatusStopped    = catalog.StatusStopped
)

// Why a server is down, where the hub can tell: see catalog.Cause.
const (
	CauseSignIn      = catalog.CauseSignIn
	CauseKey         = catalog.CauseKey
	CauseUnreachable = catalog.CauseUnreachable
)

// ResourcePrefix marks an autoApprove entry that covers resource reads:
// see catalog.ResourcePrefix.
const ResourcePrefix = catalog.ResourcePrefix
