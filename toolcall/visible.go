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
	if !final && p.holdJSON() {
		// Nothing is committed; a fence opener, all the text so far, is
		// still told, for open.
		c := bytes.TrimLeft(p.pendContent(), " \t\r\n")
		p.held = len(c) <= maxFenceLine && isFencePrefix(c)
		return
	}
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
				p.pendNS = lastNotSpace(p.pend)
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
	end := lastNotSpace(content[:hold]) + 1
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

// lastNotSpace returns the index of the last byte of b that is not ASCII
// space (see notSpace), or -1: the end of the last character, however
// many bytes it has.
func lastNotSpace(b []byte) int {
	return len(bytes.TrimRight(b, " \t\n\r\v\f")) - 1
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
// block (tool calls, the dialects, foreign call syntaxes, thinking, each
// written with tags or HTML-escaped ones) removed, closed or left open at
// the end; a completion's result shown as text, without its tags;
// trimmed. A JSON object is text here: whether a whole reply is a JSON
// call is the parser's to tell, and a completion's result that is one
// was meant as the answer. It holds none of the
// opening tags of Tags, escaped or not, no tag of a completion and no
// closing tag of thinking.
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
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if s[i] != '>' && s[i] != ';' { // the last byte of a tag, or of an escaped one
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

// A reply whose whole content is a JSON call (DialectJSON) is known only
// at its end, and must not be shown on the way: while the visible text
// may still become one, none of it is committed.
type jsonHold int

const (
	jsonUndecided jsonHold = iota
	jsonHolding
	jsonReleased
)

// maxJSONHold bounds the text held: a call longer than its arguments'
// bound cannot run anyway.
const maxJSONHold = MaxArgumentBytes + 4<<10

// holdJSON reports whether the visible text is held back as a possible
// JSON call; once it cannot be one, it never is again. Space alone is
// neither: the flush drops it.
func (p *Parser) holdJSON() bool {
	switch {
	case p.json == jsonReleased || p.tags == visibleTags:
		return false
	case len(p.blocks) > 0 || p.text.Len() > 0 || p.needSep || len(p.pend) > maxJSONHold:
		p.json = jsonReleased
		return false
	case p.json == jsonHolding:
		return true // its start was read: '{'
	case p.pendNS < 0:
		return false
	}
	switch mayBeJSONCall(p.pend) {
	case jsonNo:
		p.json = jsonReleased
		return false
	case jsonYes:
		p.json = jsonHolding
	}
	return true
}

// takeJSONCall makes the held text a block, at the end of a reply that is
// nothing but a JSON call.
func (p *Parser) takeJSONCall() {
	if p.json != jsonHolding || len(p.blocks) > 0 || p.tags == visibleTags {
		return
	}
	b, ok := readJSONReply(string(p.pend))
	if !ok {
		return
	}
	p.blocks = append(p.blocks, b)
	p.pend.Reset()
	p.pendNS, p.held = -1, false
}

// The answers of mayBeJSONCall.
const (
	jsonNo    = iota // the text cannot become a JSON call
	jsonMaybe        // not yet told: space, a fence opener
	jsonYes          // it starts as one: '{'
)

// maxJSONLead bounds what may stand before the '{' of a JSON call: a
// fence opener line and a little space.
const maxJSONLead = maxFenceLine + 64

// mayBeJSONCall tells whether s, the visible text so far, starts as a
// JSON call may: space, perhaps a fence opener line, then '{'. It reads
// at most maxJSONLead bytes. Any JSON object is held, not only one that
// starts with a key a call has: a call's keys may come in any order.
func mayBeJSONCall(s []byte) int {
	whole := len(s) < maxJSONLead
	s = s[:min(len(s), maxJSONLead)]
	s = bytes.TrimLeft(s, " \t\r\n")
	if len(s) > 0 && s[0] == '`' {
		nl := bytes.IndexByte(s, '\n')
		switch {
		case nl < 0 && isFencePrefix(s):
			return jsonMaybe
		case nl < 0 || !isFence(s[:nl], true):
			return jsonNo
		}
		s = bytes.TrimLeft(s[nl+1:], " \t\r\n")
	}
	switch {
	case len(s) > 0 && s[0] == '{':
		return jsonYes
	case len(s) == 0 && whole:
		return jsonMaybe
	}
	return jsonNo
}
