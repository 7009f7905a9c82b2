package prompt

import (
	"strings"

	"github.com/mcpgram/mcpgram"
)

// A framing is the text a variant puts around the tools.
type framing struct {
	intro, format, examples, guidelines string
}

func framingOf(v mcpgram.PromptVariant) framing {
	switch v {
	case mcpgram.PromptLlama:
		return framing{llamaIntro, llamaFormat, llamaExamples, llamaGuidelines}
	case mcpgram.PromptCode:
		return framing{codeIntro, codeFormat, examples, codeGuidelines}
	}
	return framing{intro, toolFormat, examples, guidelines}
}

// Tools returns the servers' part of the prompt, their tools and
// resources as listed for cat: every variant carries these bytes unchanged.
func Tools(cat mcpgram.Catalog) string {
	var b strings.Builder
	writeServers(&b, runningServers(cat))
	return b.String()
}
