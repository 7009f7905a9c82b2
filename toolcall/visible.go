package toolcall

import (
	"bytes"
	"strings"
)

// Visible text is committed to p.text only once decided, so that what Write
// returns only ever grows. Two things wait in p.pend: space, which counts
// only if text follows, and a last line that could be a Markdown fence
// opener (```xml) that a model put around its tool block. A fence around
// blocks would otherwise show users an empty code block.

// Fence lines are bounded so that waiting on one never rescans much.
const (
	maxFenceIndent = 3
	maxFenceTicks  = 16
	maxFenceInfo   = 24
)

// writeVisible adds s to the visible text.
func (p *Parser) writeVisible(s string) {
	if s == "" {
		return
	}
	p.fence.write(s)
	base := len(p.pend)
	p.pend.WriteString(s)
	for i := len(s) - 1; i >= 0; i-- {
		if notSpace(rune(s[i])) {
			p.pendNS = base + i
			break
		}
	}
	p.flushVisible(false)
}

// pendContent is p.pend without its trailing space.
func (p *Parser) pendContent() []byte { return p.pend[:p.pendNS+1] }

// flushVisible commits what is decided in p.pend; with final set, all of it.
func (p *Parser) flushVisible(final bool) {
	lineStart := p.text.Len() == 0 || p.needSep
	if p.pendNS < 0 {
		if lineStart || final {
			// Space before any text, after a block, or at the end is dropped.
			p.pend.Reset()
		}
		return
	}
	b := []byte(p.pend) // aliases p.pend
	if p.expectCloser {
		i := bytes.IndexFunc(b, notSpace)
		line := b[i:]
		nl := bytes.IndexByte(line, '\n')
		if nl >= 0 {
			line = line[:nl]
		}
		if isFencePrefix(line) && (nl >= 0 || final) {
			p.expectCloser = false
			if isFence(line, false) {
				n := copy(p.pend, b[i+len(line):])
				p.pend = p.pend[:n]
				p.pendNS = bytes.LastIndexFunc(p.pend, notSpace)
				p.flushVisible(final)
				return
			}
		} else if isFencePrefix(line) {
			return // the closer may still be coming
		}
		p.expectCloser = false
	}

	content := b[:p.pendNS+1]
	hold := len(content)
	p.held = false
	if !final {
		ls := bytes.LastIndexByte(content, '\n') + 1
		if (ls > 0 || lineStart) && isFencePrefix(content[ls:]) {
			hold, p.held = ls, true
		}
	}
	// Commit content[:end]: everything up to the held line, less the
	// space before it, which stays pending.
	end := bytes.LastIndexFunc(content[:hold], notSpace) + 1
	if end > 0 {
		commit := content[:end]
		if lineStart {
			commit = commit[bytes.IndexFunc(commit, notSpace):]
			if p.needSep && p.text.Len() > 0 {
				p.text.WriteString("\n\n")
			}
		}
		p.text.Write(commit)
		p.needSep = false
	}
	if final {
		p.pend.Reset()
		p.pendNS = -1
		return
	}
	// copy handles the overlap of p.pend with its own tail.
	n := copy(p.pend, b[end:])
	p.pend = p.pend[:n]
	p.pendNS -= end
}

// isFencePrefix reports whether line could be, or become, a Markdown code
// fence line: a little indentation, backticks, and an info word.
func isFencePrefix(line []byte) bool {
	i := 0
	for i < len(line) && i < maxFenceIndent && line[i] == ' ' {
		i++
	}
	ticks := 0
	for i < len(line) && line[i] == '`' {
		i++
		ticks++
	}
	if ticks == 0 || ticks > maxFenceTicks {
		return false
	}
	info := 0
	for ; i < len(line); i++ {
		c := line[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '+', c == '.', c == '#':
			info++
		case c == ' ' || c == '\t' || c == '\r':
			if bytes.IndexFunc(line[i:], notSpace) >= 0 {
				return false
			}
			return info <= maxFenceInfo
		default:
			return false
		}
	}
	return info <= maxFenceInfo
}

// isFence reports whether line is a whole fence line: three or more
// backticks, with an info word only if opener is set.
func isFence(line []byte, opener bool) bool {
	line = bytes.TrimSpace(line)
	if !isFencePrefix(line) {
		return false
	}
	ticks := 0
	for ticks < len(line) && line[ticks] == '`' {
		ticks++
	}
	return ticks >= 3 && (opener || ticks == len(line))
}

// Visible returns the text of a model reply that a user may see: every
// block (tool calls, <mcp:tool>, foreign call syntaxes, thinking) removed,
// closed or left open at the end; a completion's result shown as text,
// without its tags; trimmed. It holds none of the opening tags of Tags,
// no tag of a completion and no closing tag of thinking.
func Visible(reply string) string {
	p := NewParser()
	p.tags = visibleTags
	p.Write(reply)
	return strings.TrimSpace(dropTags(p.Close().Text))
}

// dropTags removes what remains of the tags of visibleTags in s: the text
// on both sides of a removed block can join into one
// ("<thi<think>…</think>nking>"). Each tag is cut as soon as its last byte
// is read, so that a cut cannot join another one that stays: the stack
// way of removing every occurrence of a string, in one pass.
func dropTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if s[i] != '>' {
			continue
		}
		for _, t := range visibleTags.tags {
			if bytes.HasSuffix(out, []byte(t)) {
				out = out[:len(out)-len(t)]
				break
			}
		}
	}
	return string(out)
}
