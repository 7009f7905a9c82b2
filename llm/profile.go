package llm

import "slices"

// A Profile is one model the bot can answer with, under the name the
// operator gave it: the endpoint and key, the model, how it is called and
// how its prompt is framed. Configuration builds them (the OPENAI_*
// settings make the one named "default"); a Client carries one
// (Client.Profile); the agent reads everything model-specific from it,
// and a chat stores the name of the one it chose with /model.
type Profile struct {
	// Name is unique, and fit for a button (see the config's rules).
	Name string
	// BaseURL of the API, up to and including the version: requests go
	// to BaseURL + "/chat/completions". Default DefaultBaseURL.
	BaseURL string
	// APIKeyEnv names the variable the key came from, for messages;
	// APIKey is the key itself, a secret, sent as a bearer token (none
	// when empty, for local servers).
	APIKeyEnv string
	APIKey    string
	// Model is the model's name as the endpoint knows it; required. It
	// labels metrics and stored token counts.
	Model string
	// Temperature is sent on every call, 0 included (go-openai drops a
	// zero temperature, which would silently give the provider's default
	// of 1); Request.Temperature replaces it for one call (the agent
	// cools it after mistakes).
	Temperature float32
	// MaxTokens caps one reply; 0 leaves it to the endpoint.
	MaxTokens int
	// ContextTokens is the estimated budget of what one call sends; 0
	// means no budget.
	ContextTokens int
	// ToolCalling is how the model calls tools; "" is ToolCallingXML.
	ToolCalling ToolCalling
	// Vision says the model sees images.
	Vision bool
	// Prompt is the name of the prompt's variant (prompt.Variant:
	// "generic", "llama" or "code"); "" is generic.
	Prompt string
}

// A ToolCalling says how a model calls tools (TOOL_CALLING, or a
// profile's tool_calling).
type ToolCalling string

// The ways of calling tools.
const (
	// ToolCallingXML teaches the XML format in the prompt and reads calls
	// out of the reply's text: any model can.
	ToolCallingXML ToolCalling = "xml"
	// ToolCallingNative offers the tools as OpenAI functions
	// (Request.Tools).
	ToolCallingNative ToolCalling = "native"
	// ToolCallingAuto is native where the endpoint takes tools and XML
	// where it refuses them (see ToolsRejected); the agent remembers the
	// answer per endpoint and model.
	ToolCallingAuto ToolCalling = "auto"
)

// ToolCallingModes returns the ways of calling tools, in the order
// messages list them.
func ToolCallingModes() []ToolCalling {
	return []ToolCalling{ToolCallingXML, ToolCallingNative, ToolCallingAuto}
}

// Valid reports whether m is one of ToolCallingModes.
func (m ToolCalling) Valid() bool { return slices.Contains(ToolCallingModes(), m) }
