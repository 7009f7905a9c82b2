package prompt

import (
	"strings"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/catalog"
)

// A Variant is the framing of the prompt for a kind of model: see
// mcpgram.PromptVariant.
type Variant = mcpgram.PromptVariant

// The variants a model profile may name: see mcpgram.PromptVariant.
const (
	Generic = mcpgram.PromptGeneric
	Llama   = mcpgram.PromptLlama
	Code    = mcpgram.PromptCode
)

// Variants lists the variants, Generic first.
func Variants() []Variant { return mcpgram.PromptVariants() }

// A framing is the text a variant puts around the tools.
type framing struct {
	intro, format, examples, guidelines string
}

func framingOf(v Variant) framing {
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
