package toolcall

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// A Block is one tool call found in a model reply.
type Block struct {
	// Name is one of UseMCPTool, AccessMCPResource, AskFollowupQuestion or
	// AttemptCompletion. Blocks in the <mcp:tool> dialect are mapped to
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
	// Dialect is DialectMCPTool for blocks written in that dialect, else "".
	Dialect string
	// Raw is the block exactly as written, tags included.
	Raw string
	// Fenced is true when the block stood inside Markdown code of the
	// visible text, a fence or an inline span, the way examples are
	// written; the executor runs such a call only when it is the reply's
	// whole content.
	Fenced bool
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
// back until the next chunk decides it) and the blocks completed by this
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
			p.flushVisible(true)
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

// stepText finds the first '<' that starts, or may start, a tag of
// p.tags; everything before it is visible.
func (p *Parser) stepText() bool {
	from := 0
	for {
		i := strings.IndexByte(p.buf[from:], '<')
		if i < 0 {
			p.writeVisible(p.buf)
			p.buf = ""
			return false
		}
		i += from
		rest := p.buf[i:]
		if len(rest) > 1 && strings.IndexByte(p.tags.starts, rest[1]) < 0 {
			from = i + 1 // no recognised tag starts so
			continue
		}
		for _, tag := range p.tags.tags {
			if strings.HasPrefix(rest, tag) {
				p.writeVisible(p.buf[:i])
				p.buf = rest[len(tag):]
				p.open(tag[1 : len(tag)-1])
				return true
			}
		}
		if couldBecome(rest, p.tags.tags...) {
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
		i := strings.IndexByte(p.buf[from:], '<')
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

// open starts what the tag name opens.
func (p *Parser) open(name string) {
	if p.tags == visibleTags && slices.Contains(completionTags, "<"+name+">") {
		return // see completionTags
	}
	if strings.HasPrefix(name, "/") { // only thinking's closing tags are taken alone
		p.strayThinkEnd()
		return
	}
	kind := kindOf(name)
	if kind == kindThink {
		p.state = stateThink
		p.close = "</" + name + ">"
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
	p.raw.Reset()
	p.raw.WriteString("<" + name + ">")
	if kind == kindDialect {
		p.state = stateDialect
		p.close = "</" + name + ">"
		p.val.Reset()
		return
	}
	// A foreign block has no parameters of ours: it is read whole, for
	// the check to refuse.
	p.cur = &Block{Name: name, Params: map[string]string{}, Fenced: p.fenced}
	p.params = toolParams[name]
	p.end = "</" + name + ">"
	p.state = stateTool
}

func (p *Parser) setParam() {
	p.cur.Params[p.param] = string(bytes.TrimSpace(p.val))
	p.val.Reset()
	p.param = ""
}

func (p *Parser) finishBlock(complete bool) {
	p.cur.Complete = complete
	p.cur.Raw = p.raw.String()
	p.blocks = append(p.blocks, *p.cur)
	p.cur = nil
	p.raw.Reset()
	p.state = stateText
}

func (p *Parser) finishDialect(complete bool) {
	b := parseDialect(p.val.String())
	b.Complete = complete
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

// parseDialect reads the body of an <mcp:tool> block:
//
//	name: TOOL
//	parameters: {JSON}
//
// The JSON may span lines. In the lenient form the parameters are
// "key: value" lines instead (after "parameters:", or directly after the
// name line); a value that is valid JSON (number, true, an array …) keeps
// its JSON type, anything else is a string.
func parseDialect(body string) Block {
	b := Block{Name: UseMCPTool, Params: map[string]string{}, Dialect: DialectMCPTool}
	lines := strings.Split(body, "\n")
	var loose []string
	for i := 0; i < len(lines); i++ {
		key, value, ok := splitKV(lines[i])
		if !ok {
			continue
		}
		switch strings.ToLower(key) {
		case "name", "tool", "tool_name":
			if _, seen := b.Params["tool_name"]; !seen {
				b.Params["tool_name"] = value
				continue
			}
		case "parameters", "arguments":
			rest := strings.TrimSpace(value + "\n" + strings.Join(lines[i+1:], "\n"))
			if rest == "" || strings.HasPrefix(rest, "{") {
				b.Params["arguments"] = rest
			} else {
				b.Params["arguments"] = looseArguments(lines[i+1:], value)
			}
			return b
		}
		loose = append(loose, lines[i])
	}
	if len(loose) > 0 {
		b.Params["arguments"] = looseArguments(loose, "")
	}
	return b
}

// looseArguments turns "key: value" lines into a JSON object.
func looseArguments(lines []string, first string) string {
	args := map[string]any{}
	if k, v, ok := splitKV(first); ok {
		args[k] = looseValue(v)
	}
	for _, line := range lines {
		if k, v, ok := splitKV(line); ok {
			args[k] = looseValue(v)
		}
	}
	out, err := json.Marshal(args) // encoding/json sorts map keys
	if err != nil {
		return "{}"
	}
	return string(out)
}

func looseValue(v string) any {
	var x any
	if err := json.Unmarshal([]byte(v), &x); err == nil {
		return x
	}
	return v
}

func splitKV(line string) (key, value string, ok bool) {
	key, value, ok = strings.Cut(strings.TrimSpace(line), ":")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.ContainsAny(key, " \t\"{}[]") {
		return "", "", false
	}
	return key, strings.TrimSpace(value), true
}

// A byteBuf is reused from block to block, unlike a strings.Builder, so
// that a reply with many blocks does not grow a new buffer for each.
type byteBuf []byte

func (b *byteBuf) WriteString(s string) { *b = append(*b, s...) }
func (b *byteBuf) Reset()               { *b = (*b)[:0] }
func (b *byteBuf) String() string       { return string(*b) }
