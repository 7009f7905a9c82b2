package prompt

import (
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram/catalog"
)

// A Variant is the framing of the prompt for a kind of model: the opening,
// the notes on the call format, the examples and the guidelines. The core
// tools and the servers' tools are the same bytes in every variant, so
// what a model is told it can call never depends on how it is addressed.
type Variant string

// The variants a model profile may name (its prompt field).
const (
	// Generic is the framing for capable chat models (GPT-4o, Claude,
	// Gemini, DeepSeek and the like): rules and four examples.
	Generic Variant = "generic"
	// Llama is for small open models (Llama, Qwen, Mistral in 7-13B):
	// shorter, numbered and explicit, one call at a time, the format
	// stated again just before the examples.
	Llama Variant = "llama"
	// Code is for code-tuned models (Qwen-Coder, DeepSeek-Coder, Codestral):
	// the calls framed as a strict protocol with typed JSON arguments, and
	// a reminder that the reader is a person in a chat, not a program.
	Code Variant = "code"
)

// Variants lists the variants, Generic first.
func Variants() []Variant { return []Variant{Generic, Llama, Code} }

// Valid reports whether v is one of Variants ("" is not: a caller maps
// it to Generic).
func (v Variant) Valid() bool { return slices.Contains(Variants(), v) }

// A framing is the text a variant puts around the tools.
type framing struct {
	intro, format, examples, guidelines string
}

func (v Variant) framing() framing {
	switch v {
	case Llama:
		return framing{llamaIntro, llamaFormat, llamaExamples, llamaGuidelines}
	case Code:
		return framing{codeIntro, codeFormat, examples, codeGuidelines}
	}
	return framing{intro, toolFormat, examples, guidelines}
}

// Tools returns the servers' part of the prompt, their tools and
// resources as listed for cat: every variant carries these bytes unchanged.
func Tools(cat catalog.Catalog) string {
	var b strings.Builder
	writeServers(&b, runningServers(cat))
	return b.String()
}
