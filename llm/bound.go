package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// What a reply's body may hold, beyond the bound on its text and
// arguments: a streamed body repeats JSON framing around every delta, a
// few hundred bytes even around a delta of one character, as some
// endpoints stream; a JSON string escapes a byte into at most six. A
// stream may also have a few events that carry nothing (the role, the
// finish reason, the usage): eventSlack of them beyond one per byte.
const (
	streamBodyFactor = 512
	escapeFactor     = 6
	bodySlack        = 64 << 10
	eventSlack       = 4096
)

// errBodyTooLong is what a bounded body's Read returns past its limit.
var errBodyTooLong = errors.New("the reply's body passed what a reply within its bound can take")

// A bodyBound stops reading a response body past what a reply within the
// attempt's bound can take, so that neither go-openai nor the stream
// reader holds more: in all, and, for an event stream, on one line (one
// event, which go-openai reads whole before it parses it). An endless
// stream of empty deltas passes no bound on the reply's text, and ends
// here.
type bodyBound struct {
	io.ReadCloser
	info           *attemptInfo
	total, perLine int64 // limits; perLine 0: none
	read, line     int64
}

func newBodyBound(body io.ReadCloser, info *attemptInfo, stream bool) *bodyBound {
	b := &bodyBound{ReadCloser: body, info: info}
	if stream {
		b.total = int64(info.bound)*streamBodyFactor + bodySlack
		b.perLine = int64(info.bound)*escapeFactor + bodySlack
	} else {
		b.total = int64(info.bound)*escapeFactor + bodySlack
	}
	return b
}

func (b *bodyBound) Read(p []byte) (int, error) {
	if b.read >= b.total || (b.perLine > 0 && b.line >= b.perLine) {
		b.info.tooLong.Store(true)
		return 0, errBodyTooLong
	}
	if rest := b.total - b.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if b.perLine > 0 && n > 0 {
		if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
			b.line = int64(n - i - 1)
		} else {
			b.line += int64(n)
		}
	}
	return n, err
}

// replySize is how much of a reply counts against its bound: its text,
// its reasoning, and its calls' ids, names and arguments.
func replySize(r *Response) int {
	n := len(r.Content) + len(r.Reasoning)
	for _, c := range r.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}

// sizeText writes n bytes for a person: "64 KB", "1 MB".
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", (n+1<<10-1)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
