package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/internal/pace"
)

// A progressPrinter writes what a server reports of one call's progress,
// a line a report ("  … index on f: 40%, 120 of 300 · indexing"), at most
// one line an interval however fast the server reports: the latest
// report, the first at once, as the chat's status message shows them.
// A flood costs neither lines nor memory (one report kept).
type progressPrinter struct {
	w    io.Writer
	call agent.CallProgress // the call's server and tool

	mu     sync.Mutex
	latest *mcpgram.Progress // the report not yet written

	loop *pace.Loop
}

// startProgressPrinter starts the printer of the call of tool on server;
// its owner calls close once the call has returned.
func startProgressPrinter(w io.Writer, server, tool string, interval time.Duration) *progressPrinter {
	p := &progressPrinter{w: w, call: agent.CallProgress{Server: server, Tool: tool}}
	p.loop = pace.Start(interval, p.flush)
	return p
}

// report keeps r as the latest. It runs on the server connection's read
// loop (a mcpgram.ProgressFunc), so it only stores and signals.
func (p *progressPrinter) report(r mcpgram.Progress) {
	p.mu.Lock()
	p.latest = &r
	p.mu.Unlock()
	p.loop.Wake()
}

// close stops the printer and waits for it. A report not yet written is
// dropped: the call's result says more.
func (p *progressPrinter) close() { p.loop.Close() }

// flush writes the latest report, if one came since the last.
func (p *progressPrinter) flush() {
	p.mu.Lock()
	r := p.latest
	p.latest = nil
	p.mu.Unlock()
	if r != nil {
		cp := p.call
		cp.Progress = *r
		fmt.Fprintf(p.w, "  … %s on %s: %s\n", cp.Tool, cp.Server, progressLine(cp))
	}
}
