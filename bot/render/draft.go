package render

import (
	"strings"
	"unicode/utf8"
)

// draftWindow is how much of a streamed reply its draft shows: the last
// few thousand bytes, about a message. Rendering the whole text at every
// edit made each edit cost the reply's length (a 32 MiB reply took 4.9
// GiB), and a phone shows no more than the tail of a draft anyway.
const draftWindow = 3000

// A Draft renders the draft of a reply as it streams: the tail of the
// text, as Telegram HTML, with what the tail needs of the text before it
// (an open code block). An edit costs what was added since the last one
// and the tail, however long the text grew.
//
// It reads the text as a model writes it, growing at the end; a text that
// is not the last one grown (the next model call's) starts it over. The
// zero Draft is ready.
type Draft struct {
	// scanned is how much of the text was read for code fences: whole
	// lines, up to the start of the window.
	scanned int
	// fence is the line that opened the code block open at scanned, ""
	// when none is.
	fence string
	// mark is the end of the scanned text, to tell the same text grown
	// from another.
	mark string
}

// HTML returns the draft of text: its tail, marked with "…" when it is
// not the whole, and the cursor.
func (d *Draft) HTML(text string) string {
	start := 0
	if len(text) > draftWindow {
		start = len(text) - draftWindow
		// From a line's start when there is one near, else from a rune's.
		if i := strings.IndexByte(text[start:], '\n'); i >= 0 && i < draftWindow/2 {
			start += i + 1
		}
		for start < len(text) && !utf8.RuneStart(text[start]) {
			start++
		}
	}
	d.advance(text, start)
	md := text[start:]
	if d.fence != "" {
		md = d.fence + "\n" + md
	}
	h := HTML(md)
	// HTML's bytes are never fewer than the UTF-16 units a user sees of
	// it, so a short one fits a message without the cost of Split.
	if len(h) > MaxMessageLen-10 {
		parts := Split(h, MaxMessageLen-10)
		if len(parts) == 0 {
			return ""
		}
		h, start = parts[len(parts)-1], max(start, 1)
	}
	if strings.TrimSpace(h) == "" {
		return ""
	}
	if start > 0 {
		h = "… " + h
	}
	return h + " ▌"
}

// advance reads the whole lines of text before end for code fences, from
// where the last call stopped, or from the start for a new text.
func (d *Draft) advance(text string, end int) {
	if d.scanned > len(text) || text[d.scanned-len(d.mark):d.scanned] != d.mark {
		d.scanned, d.fence, d.mark = 0, "", ""
	}
	end = strings.LastIndexByte(text[:end], '\n') + 1
	if end <= d.scanned {
		return
	}
	for _, line := range strings.SplitAfter(text[d.scanned:end], "\n") {
		d.line(strings.TrimSuffix(line, "\n"))
	}
	d.scanned = end
	d.mark = strings.Clone(text[max(0, end-16):end])
}

// line notes a fence that opens or closes a code block: up to three
// spaces, then three or more backticks or tildes; a closing fence has
// the opening one's character, at least as many, and nothing after.
func (d *Draft) line(s string) {
	t := strings.TrimLeft(s, " ")
	if len(s)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 {
		return
	}
	if d.fence == "" {
		// The language is all the window needs of the opening line.
		d.fence = Shorten(strings.TrimSpace(t), 40)
		return
	}
	open := strings.TrimLeft(d.fence, " ")
	openN := len(open) - len(strings.TrimLeft(open, open[:1]))
	if t[0] == open[0] && n >= openN && strings.TrimSpace(t[n:]) == "" {
		d.fence = ""
	}
}
