package toolcall

import (
	"bytes"
	"html"
	"slices"
	"strings"
)

// A Block is one tool call found in a model reply.
type Block struct {
	// Name is one of UseMCPTool, AccessMCPResource, AskFollowupQuestion or
	// AttemptCompletion. Blocks in a dialect (see Dialect) are mapped to
	// UseMCPTool with tool_name and arguments but no server_name; the
	// executor's check resolves the server. Blocks in a foreign call
	// syntax are named ForeignToolCall or ForeignFunctionCalls, with no
	// Params; the check refuses them.
	Name string
	// Params holds each parameter's value, trimmed of surrounding space.
	Params map[string]string
	// Complete is false when the reply ended inside the block.
	Complete bool
	// OpenParam names the parameter the reply ended inside, when it ended
	// inside one; its value in Params is what was written of it.
	OpenParam string
	// Dialect is DialectMCPTool, DialectToolCall, DialectFunction or
	// DialectJSON for a call to an MCP server's tool written in that
	// dialect, else "".
	Dialect string
	// Raw is the block exactly as written, tags included.
	Raw string
	// Fenced is true when the block stood inside Markdown code of the
	// visible text, a fence or an inline span, the way examples are
	// written; the executor runs such a call only when it is the reply's
	// whole content.
	Fenced bool
	// Repairs are the kinds of near miss read past to find the block
	// (RepairEscaped, RepairReasoning, the dialects of other families, and
	// the JSON slips of their wrappers), in a fixed order; nil for a block
	// written in the format taught.
	Repairs []string
}

// Closing returns the tag that ends b as it was opened.
func (b Block) Closing() string {
	name := b.Name
	switch {
	case b.Dialect == DialectJSON, b.Name == ForeignJSON:
		return "}"
	case b.Dialect == DialectMCPTool:
		name = DialectMCPTool
	case b.Dialect != "", slices.Contains(b.Repairs, RepairToolCall), slices.Contains(b.Repairs, RepairFunction):
		name = "tool_call"
	}
	return closeTag(name, slices.Contains(b.Repairs, RepairEscaped))
}

// A Reply is a whole model message split into what users see and the tool
// blocks it contains.
type Reply struct {
	// Text is the visible text: everything outside tool blocks and
	// thinking, trimmed, with the space where a block stood collapsed to
	// one blank line. A Markdown code fence written around tool blocks
	// (a line ```xml just before, ``` just after) goes with them. Show
	// users Visible of it: text around a removed thinking block can join
	// into a tag, which Visible drops.
	Text string
	// Thinking is the text of <thinking> and <think> blocks, for logs only.
	Thinking string
	// Blocks are the tool blocks in the order written.
	Blocks []Block
}

type parserState int

const (
	stateText parserState = iota
	stateThink
	stateTool
	stateParam
	stateDialect
)

// A Parser splits a model reply, fed in chunks as it streams, into visible
// text and tool blocks. Feeding a reply in any split gives the same result
// as feeding it whole. The zero value is not usable; call NewParser. A
// Parser is for one reply and one goroutine.
type Parser struct {
	buf   string // input not yet consumed: at most a possible partial tag
	state parserState
	close string // closing tag awaited in stateThink, stateParam, stateDialect

	text strings.Builder // visible text, always trimmed on the right
	// pend is visible text not yet decided: space that only counts if
	// text follows, and a last line that may be a code fence opened
	// around a tool block. pendNS indexes its last non-space byte, or -1.
	pend         byteBuf
	pendNS       int
	held         bool // pend ends with a possible fence opener at a line start
	needSep      bool // a block stood since the last visible text
	expectCloser bool // a fence opener before a block was dropped; drop its closer too

	thinking strings.Builder
	sawThink bool // a thinking block or its end was seen

	fence  fenceTracker // code fences of the visible text
	fenced bool         // the block being read opened inside a fence

	cur    *Block
	params []paramTag // parameters of cur
	end    string     // closing tag of cur
	raw    byteBuf    // the current block as written
	param  string
	val    byteBuf // the current parameter's value so far

	blocks []Block
	closed bool

	escaped bool   // the current block's tags are HTML-escaped
	dialect string // the tag of the kindDialect block being read
	json    jsonHold

	tags *tagSet // textTags; visibleTags for Visible
}

// NewParser returns a Parser ready for the first chunk of a reply.
func NewParser() *Parser {
	return &Parser{pendNS: -1, tags: textTags}
}

// Parse splits a whole reply.
func Parse(s string) Reply {
	p := NewParser()
	p.text.Grow(len(s))
	p.Write(s)
	return p.Close()
}

// Write feeds the next chunk of the reply. It returns the visible text so
// far (the whole of it, trimmed; a possible partial tag at the end is held
// back until the next chunk decides it, and so is text that may become a
// JSON call, which only Close can tell) and the blocks completed by this
// chunk, each returned once. The visible text only grows, with one
// exception: a </think> with no <think> before it turns all text so far
// into thinking, and the visible text starts again from empty. Write after
// Close does nothing.
func (p *Parser) Write(chunk string) (visible string, done []Block) {
	if p.closed {
		return p.text.String(), nil
	}
	p.buf += chunk
	n := len(p.blocks)
	for p.step() {
	}
	if len(p.blocks) > n {
		done = p.blocks[n:len(p.blocks):len(p.blocks)]
	}
	return p.text.String(), done
}

// Close ends the reply and returns all of it. Held-back text that did not
// become a tag is visible after all; a block cut off by the end is
// reported with Complete false and the parameters read so far.
func (p *Parser) Close() Reply {
	if !p.closed {
		p.closed = true
		switch p.state {
		case stateText:
			p.writeVisible(p.buf)
		case stateThink:
			p.thinking.WriteString(p.buf)
		case stateTool:
			p.raw.WriteString(p.buf)
			p.finishBlock(false)
		case stateParam:
			p.val.WriteString(p.buf)
			p.raw.WriteString(p.buf)
			p.cur.OpenParam = p.param
			p.setParam()
			p.finishBlock(false)
		case stateDialect:
			p.val.WriteString(p.buf)
			p.raw.WriteString(p.buf)
			p.finishDialect(false)
		}
		p.buf = ""
		p.takeJSONCall()
		p.flushVisible(true)
	}
	return Reply{Text: p.text.String(), Thinking: p.thinking.String(), Blocks: p.blocks}
}

// step consumes what it can of p.buf and reports whether to call it again.
func (p *Parser) step() bool {
	switch p.state {
	case stateText:
		return p.stepText()
	case stateThink:
		return p.stepThink()
	case stateTool:
		return p.stepTool()
	case stateParam, stateDialect:
		return p.stepValue()
	}
	return false
}

// stepText finds the first '<' or '&' that starts, or may start, a tag
// of p.tags; everything before it is visible.
func (p *Parser) stepText() bool {
	from := 0
	next := tagStarts{s: p.buf, lt: -2}
	for {
		i := next.from(from)
		if i < 0 {
			p.writeVisible(p.buf)
			p.buf = ""
			return false
		}
		rest := p.buf[i:]
		l := p.tags.list(rest)
		if l == nil {
			from = i + 1 // no recognised tag starts so
			continue
		}
		for _, tag := range l.tags {
			if strings.HasPrefix(rest, tag) {
				p.writeVisible(p.buf[:i])
				p.buf = rest[len(tag):]
				p.open(tag)
				return true
			}
		}
		if couldBecome(rest, l.tags...) {
			p.writeVisible(p.buf[:i])
			p.buf = rest
			return false
		}
		from = i + 1
	}
}

// stepThink reads thinking up to its closing tag.
func (p *Parser) stepThink() bool {
	i := strings.Index(p.buf, p.close)
	if i < 0 {
		keep := min(len(p.buf), len(p.close)-1)
		p.thinking.WriteString(p.buf[:len(p.buf)-keep])
		p.buf = p.buf[len(p.buf)-keep:]
		return false
	}
	p.thinking.WriteString(p.buf[:i])
	p.buf = p.buf[i+len(p.close):]
	p.state = stateText
	return true
}

// stepTool reads a block between its parameters: it looks for the block's
// closing tag or a parameter's opening tag.
func (p *Parser) stepTool() bool {
	from := 0
	for {
		i := strings.IndexByte(p.buf[from:], p.end[0]) // '<', or '&' when escaped
		if i < 0 {
			p.raw.WriteString(p.buf)
			p.buf = ""
			return false
		}
		i += from
		rest := p.buf[i:]
		if strings.HasPrefix(rest, p.end) {
			p.raw.WriteString(p.buf[:i+len(p.end)])
			p.buf = rest[len(p.end):]
			p.finishBlock(true)
			return true
		}
		for _, tag := range p.params {
			if strings.HasPrefix(rest, tag.open) {
				p.raw.WriteString(p.buf[:i+len(tag.open)])
				p.buf = rest[len(tag.open):]
				p.param = tag.name
				p.close = tag.close
				p.val.Reset()
				p.state = stateParam
				return true
			}
		}
		if couldBecome(rest, p.end) || p.couldBecomeParam(rest) {
			p.raw.WriteString(p.buf[:i])
			p.buf = rest
			return false
		}
		from = i + 1
	}
}

// stepValue reads a parameter's value, or an <mcp:tool> body, up to its
// closing tag; nothing inside is a tag.
func (p *Parser) stepValue() bool {
	i := strings.Index(p.buf, p.close)
	if i < 0 {
		keep := min(len(p.buf), len(p.close)-1)
		p.val.WriteString(p.buf[:len(p.buf)-keep])
		p.raw.WriteString(p.buf[:len(p.buf)-keep])
		p.buf = p.buf[len(p.buf)-keep:]
		return false
	}
	p.val.WriteString(p.buf[:i])
	p.raw.WriteString(p.buf[:i+len(p.close)])
	p.buf = p.buf[i+len(p.close):]
	if p.state == stateDialect {
		p.finishDialect(true)
		return true
	}
	p.setParam()
	p.state = stateTool
	return true
}

// open starts what tag, one of p.tags, opens.
func (p *Parser) open(tag string) {
	if p.tags == visibleTags && slices.Contains(completionTags, tag) {
		return // see completionTags
	}
	name, escaped := tagName(tag)
	if strings.HasPrefix(name, "/") { // only thinking's closing tags are taken alone
		p.strayThinkEnd()
		return
	}
	kind := kindOf(name)
	if kind == kindThink {
		if p.pendNS >= 0 && p.tags == textTags {
			// Thinking inside the held text: the call would not be
			// written as it stands in the reply.
			p.json = jsonReleased
		}
		p.state = stateThink
		p.close = closeTag(name, escaped)
		p.sawThink = true
		return
	}
	p.fenced = p.fence.inside()
	// Whatever space preceded the block is replaced by the separator
	// written before the next visible text; a code fence opened just
	// before it wrapped the block and goes with it.
	if p.held && isFence(p.pendContent(), true) {
		p.expectCloser = true
	} else {
		p.flushVisible(true)
	}
	p.pend.Reset()
	p.pendNS, p.held = -1, false
	if p.text.Len() > 0 {
		p.needSep = true
	}
	p.escaped = escaped
	p.raw.Reset()
	p.raw.WriteString(tag)
	if kind == kindDialect {
		p.state = stateDialect
		p.dialect = name
		p.close = closeTag(name, escaped)
		p.val.Reset()
		return
	}
	// A foreign block has no parameters of ours: it is read whole, for
	// the check to refuse.
	p.cur = &Block{Name: name, Params: map[string]string{}, Fenced: p.fenced}
	p.params = toolParams[name]
	if escaped {
		p.params = escapedParams[name]
	}
	p.end = closeTag(name, escaped)
	p.state = stateTool
}

func (p *Parser) setParam() {
	v := string(bytes.TrimSpace(p.val))
	if p.escaped {
		v = strings.TrimSpace(html.UnescapeString(v))
	}
	p.cur.Params[p.param] = v
	p.val.Reset()
	p.param = ""
}

func (p *Parser) finishBlock(complete bool) {
	p.cur.Complete = complete
	p.cur.Raw = p.raw.String()
	if p.escaped {
		p.cur.Repairs = []string{RepairEscaped}
	}
	p.blocks = append(p.blocks, *p.cur)
	p.cur = nil
	p.raw.Reset()
	p.state = stateText
}

func (p *Parser) finishDialect(complete bool) {
	body := p.val.String()
	if p.escaped {
		body = html.UnescapeString(body)
	}
	b := readDialect(p.dialect, body, complete)
	if p.escaped {
		b.Repairs = append([]string{RepairEscaped}, b.Repairs...)
	}
	b.Raw = p.raw.String()
	b.Fenced = p.fenced
	p.blocks = append(p.blocks, b)
	p.val.Reset()
	p.raw.Reset()
	p.state = stateText
}

// strayThinkEnd handles </think> with no <think> before it. Some chat
// templates open the thinking block in the prompt, so the reply starts
// inside it: everything before the closing tag was thinking, though it was
// streamed as visible text. It moves to Thinking, and the visible text
// starts again from empty. Later stray closing tags are dropped.
func (p *Parser) strayThinkEnd() {
	if p.sawThink || len(p.blocks) > 0 {
		return
	}
	p.sawThink = true
	p.thinking.WriteString(p.text.String())
	p.thinking.Write(p.pend)
	p.text.Reset()
	p.pend.Reset()
	p.pendNS, p.held, p.needSep, p.expectCloser = -1, false, false, false
	p.fence.reset()
	p.json = jsonUndecided
}

// tagStarts finds the bytes of s that may start a tag, '<' and '&' (of
// an escaped one), in one pass whatever the mix: it remembers where the
// next '<' is, so that text full of '&' is not searched for '<' again
// from each.
type tagStarts struct {
	s  string
	lt int // index of the next '<' from the last search; -1 none; -2 not searched
}

// from returns the index of the first '<' or '&' at or after i, or -1.
func (t *tagStarts) from(i int) int {
	if t.lt == -2 || t.lt >= 0 && t.lt < i {
		t.lt = strings.IndexByte(t.s[i:], '<')
		if t.lt >= 0 {
			t.lt += i
		}
	}
	end := t.lt
	if end < 0 {
		end = len(t.s)
	}
	if j := strings.IndexByte(t.s[i:end], '&'); j >= 0 {
		return i + j
	}
	return t.lt
}

// couldBecomeParam reports whether s is a strict prefix of an opening
// parameter tag of the current block.
func (p *Parser) couldBecomeParam(s string) bool {
	for _, tag := range p.params {
		if len(s) < len(tag.open) && strings.HasPrefix(tag.open, s) {
			return true
		}
	}
	return false
}

// couldBecome reports whether s is a strict prefix of one of tags, so that
// more input could complete it.
func couldBecome(s string, tags ...string) bool {
	for _, t := range tags {
		if len(s) < len(t) && strings.HasPrefix(t, s) {
			return true
		}
	}
	return false
}

// notSpace is false for ASCII space only: a multi-byte space split across
// chunks must not be judged differently from the same space whole.
func notSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return false
	}
	return true
}

// A byteBuf is reused from block to block, unlike a strings.Builder, so
// that a reply with many blocks does not grow a new buffer for each.
type byteBuf []byte

func (b *byteBuf) WriteString(s string) { *b = append(*b, s...) }
func (b *byteBuf) Reset()               { *b = (*b)[:0] }
func (b *byteBuf) String() string       { return string(*b) }
