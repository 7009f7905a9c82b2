package llm

import "github.com/mcpgram/mcpgram"

// A Profile, a ToolCalling and a ToolSearch: see mcpgram.
type (
	Profile     = mcpgram.Profile
	ToolCalling = mcpgram.ToolCalling
	ToolSearch  = mcpgram.ToolSearch
)

// The ways of calling tools: see mcpgram.ToolCalling.
const (
	ToolCallingXML    = mcpgram.ToolCallingXML
	ToolCallingNative = mcpgram.ToolCallingNative
	ToolCallingAuto   = mcpgram.ToolCallingAuto
)

// ToolCallingModes: see mcpgram.
func ToolCallingModes() []mcpgram.ToolCalling { return mcpgram.ToolCallingModes() }

// Defaults of ToolSearch: see mcpgram.
const (
	DefaultToolSearch    = mcpgram.DefaultToolSearch
	DefaultContextTokens = mcpgram.DefaultContextTokens
)
