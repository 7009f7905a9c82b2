package mcpgram

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A Profile is one model the bot can answer with, under the name the
// operator gave it: the endpoint and key, the model, how it is called and
// how its prompt is framed. Configuration builds them (the OPENAI_*
// settings make the one named "default"); a model client carries one
// (llm.Client.Profile); the agent reads everything model-specific from it,
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
	// of 1); llm.Request.Temperature replaces it for one call (the agent
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
	// Prompt is the name of the prompt's variant (a PromptVariant:
	// "generic", "llama" or "code"); "" is generic.
	Prompt string
	// ToolSearch is when the model searches for its tools instead of
	// reading them all; "" is DefaultToolSearch.
	ToolSearch ToolSearch
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
	// (llm.Request.Tools).
	ToolCallingNative ToolCalling = "native"
	// ToolCallingAuto is native where the endpoint takes tools and XML
	// where it refuses them (see llm.ToolsRejected); the agent remembers the
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

// A ToolSearch says when a model is shown only some of the tools and
// finds the others with a search (TOOL_SEARCH, or a profile's
// tool_search), so that a set-up with hundreds of tools does not send
// them all on every call:
//
//   - "off": every tool is listed, however many;
//   - "N", a whole number: search once more than N tools are connected
//     ("0": always, once there is any);
//   - "P%", P from 1 to 100: search once listing every tool would take
//     more than P % of the profile's ContextTokens (of
//     DefaultContextTokens when it has no budget).
//
// "" is DefaultToolSearch.
type ToolSearch string

// DefaultToolSearch is the threshold of a profile that sets none: a
// tenth of the context budget, about 50 tools of the usual size at the
// default budget. Smaller set-ups list every tool, as before.
const DefaultToolSearch ToolSearch = "10%"

// DefaultContextTokens is the budget a share of ToolSearch is taken of
// when a profile has no budget.
const DefaultContextTokens = 32000

// Check reports whether t is one of the forms ToolSearch takes.
func (t ToolSearch) Check() error {
	_, _, err := t.parse()
	return err
}

// parse returns t's count (percent false) or share in percent; n < 0 is
// off.
func (t ToolSearch) parse() (n int, percent bool, err error) {
	s := strings.ToLower(strings.TrimSpace(string(t)))
	if s == "" {
		s = string(DefaultToolSearch)
	}
	if s == "off" {
		return -1, false, nil
	}
	num, percent := strings.CutSuffix(s, "%")
	n, err = strconv.Atoi(strings.TrimSpace(num))
	switch {
	case err != nil, n < 0, percent && (n < 1 || n > 100):
		return 0, false, fmt.Errorf("want off, a number of tools such as 40, or a share of the context budget from 1%% to 100%% such as 10%%, got %q", string(t))
	}
	return n, percent, nil
}

// Searches reports whether a model with threshold t and a context budget
// of contextTokens (0: none) searches for its tools, when tools are
// connected and listing them all would take about listTokens. A
// malformed t, which configuration refuses, lists every tool.
func (t ToolSearch) Searches(tools, listTokens, contextTokens int) bool {
	n, percent, err := t.parse()
	switch {
	case err != nil, n < 0, tools == 0:
		return false
	case !percent:
		return tools > n
	}
	if contextTokens <= 0 {
		contextTokens = DefaultContextTokens
	}
	return listTokens*100 > contextTokens*n
}

// A PromptVariant is the framing of the system prompt for a kind of
// model: the opening, the notes on the call format, the examples and the
// guidelines (package prompt writes them). The core tools and the
// servers' tools are the same bytes in every variant, so what a model is
// told it can call never depends on how it is addressed.
type PromptVariant string

// The variants a model profile may name (its prompt field).
const (
	// PromptGeneric is the framing for capable chat models (GPT-4o,
	// Claude, Gemini, DeepSeek and the like): rules and four examples.
	PromptGeneric PromptVariant = "generic"
	// PromptLlama is for small open models (Llama, Qwen, Mistral in
	// 7-13B): shorter, numbered and explicit, one call at a time, the
	// format stated again just before the examples.
	PromptLlama PromptVariant = "llama"
	// PromptCode is for code-tuned models (Qwen-Coder, DeepSeek-Coder,
	// Codestral): the calls framed as a strict protocol with typed JSON
	// arguments, and a reminder that the reader is a person in a chat,
	// not a program.
	PromptCode PromptVariant = "code"
)

// PromptVariants lists the variants, PromptGeneric first.
func PromptVariants() []PromptVariant {
	return []PromptVariant{PromptGeneric, PromptLlama, PromptCode}
}

// Valid reports whether v is one of PromptVariants ("" is not: a caller
// maps it to PromptGeneric).
func (v PromptVariant) Valid() bool { return slices.Contains(PromptVariants(), v) }
