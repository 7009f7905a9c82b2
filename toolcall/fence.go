package toolcall

import (
	"bytes"
	"strings"
)

// maxFenceLine bounds the line a fenceTracker keeps: a longer line is not
// a fence, so nothing longer is ever held.
const maxFenceLine = maxFenceIndent + maxFenceTicks + maxFenceInfo + 8

// A fenceTracker follows the Markdown code of the visible text, fences
// and inline spans, so that a tool block written as code can be told from
// one written in the open: a model that shows "what a call would look
// like" writes it as code. Only visible text is fed to it: backticks
// inside a block's arguments or a thinking block open nothing.
type fenceTracker struct {
	open int    // backticks of the open fence; 0 when none is open
	line []byte // the current line so far, while it may be a fence line
	long bool   // the current line is past maxFenceLine
	// An inline code span opens with a run of backticks and closes with a
	// run as long; spans are followed within a line.
	run, span int
}

func (f *fenceTracker) write(s string) {
	f.spans(s)
	for len(s) > 0 {
		nl := strings.IndexByte(s, '\n')
		part := s
		if nl >= 0 {
			part = s[:nl]
		}
		if !f.long {
			if len(f.line)+len(part) > maxFenceLine {
				f.long, f.line = true, f.line[:0]
			} else {
				f.line = append(f.line, part...)
			}
		}
		if nl < 0 {
			return
		}
		f.endLine()
		s = s[nl+1:]
	}
}

func (f *fenceTracker) endLine() {
	if !f.long {
		line := bytes.TrimSpace(f.line)
		switch n := fenceTicks(line); {
		case f.open == 0 && n >= 3 && isFence(line, true):
			f.open = n
		case f.open > 0 && n >= f.open && isFence(line, false):
			f.open = 0
		}
	}
	f.line, f.long = f.line[:0], false
}

func (f *fenceTracker) spans(s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			f.run++
		case c == '\n':
			f.run, f.span = 0, 0
		case f.run > 0:
			f.span = f.spanAfterRun()
			f.run = 0
		}
	}
}

// spanAfterRun is the open span once the current run of backticks ends.
func (f *fenceTracker) spanAfterRun() int {
	switch {
	case f.span == 0:
		return f.run
	case f.run == f.span:
		return 0
	}
	return f.span
}

// inside reports whether a block starting now stands in code: a fence
// left open, or an inline span open on the block's own line (which an
// opener such as "```xml" just before the block is too).
func (f *fenceTracker) inside() bool {
	return f.open > 0 || f.spanAfterRun() > 0
}

func (f *fenceTracker) reset() { *f = fenceTracker{line: f.line[:0]} }

// fenceTicks counts the backticks that start line.
func fenceTicks(line []byte) int {
	n := 0
	for n < len(line) && line[n] == '`' {
		n++
	}
	return n
}
