// What the HTTP client notes of an attempt beside go-openai: a Retry-After
// header, whether a stream ended with [DONE], and a body read to its end.

package llm

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// go-openai keeps no response headers on its errors, so the HTTP client
// notes Retry-After in a holder that the attempt put in the request context.
// It notes there too whether a stream's body carried [DONE], which
// go-openai does not tell apart from the body just ending.
type attemptKey struct{}

type attemptInfo struct {
	mu     sync.Mutex
	header http.Header
	done   atomic.Bool
	// bound is the reply's bound (see Client.bound); tooLong is set when
	// the body passed what a reply within it can take, and read is how
	// much of the reply was read when it was cut.
	bound   int
	tooLong atomic.Bool
	read    atomic.Int64
}

// holder returns the attempt's holder in ctx; an empty one when there is
// none, so that callers need not check.
func holder(ctx context.Context) *attemptInfo {
	if info, ok := ctx.Value(attemptKey{}).(*attemptInfo); ok {
		return info
	}
	return &attemptInfo{}
}

func streamDone(ctx context.Context) bool {
	return holder(ctx).done.Load()
}

func (a *attemptInfo) retryAfter() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return parseRetryAfter(a.header, time.Now())
}

type headerDoer struct{ c *http.Client }

func (d headerDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if err != nil {
		return resp, err
	}
	info, _ := req.Context().Value(attemptKey{}).(*attemptInfo)
	if resp.StatusCode >= 400 && info != nil {
		info.mu.Lock()
		info.header = resp.Header.Clone()
		info.mu.Unlock()
	}
	var body io.ReadCloser = resp.Body
	if info != nil && info.bound > 0 {
		stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
		body = newBodyBound(body, info, stream)
		if stream {
			body = &doneScanner{ReadCloser: body, info: info, tail: []byte("\n")}
		}
	}
	resp.Body = drainer{body}
	return resp, nil
}

// A doneScanner notes when a server-sent event stream carries the line
// "data: [DONE]". A JSON chunk cannot hold a raw newline, so the marker
// at the start of a line is never text of the reply.
type doneScanner struct {
	io.ReadCloser
	info *attemptInfo
	// tail is the end of what was read so far, enough to find a marker
	// split between two reads.
	tail []byte
}

func (d *doneScanner) Read(p []byte) (int, error) {
	n, err := d.ReadCloser.Read(p)
	if n > 0 && !d.info.done.Load() {
		buf := append(d.tail, p[:n]...)
		if doneMarker.Match(buf) {
			d.info.done.Store(true)
		}
		d.tail = append(d.tail[:0], buf[max(0, len(buf)-16):]...)
	}
	return n, err
}

// A drainer reads what is left of a body before closing it. go-openai
// closes a stream after "data: [DONE]" with the chunked terminator still
// unread, which makes net/http drop the connection instead of reusing it:
// a new TCP (and TLS) handshake for every model call.
type drainer struct{ io.ReadCloser }

func (d drainer) Close() error {
	_, _ = io.CopyN(io.Discard, d.ReadCloser, 64<<10)
	return d.ReadCloser.Close()
}
