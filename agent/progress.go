// Progress and stopping: what servers report of the running calls reaches
// the front end at a pace it can show, and a call the user stopped is
// told to the model as such.

package agent

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/internal/pace"
)

// DefaultProgressInterval is Config.ProgressInterval's default: about
// the edits a second Telegram lets a bot make in one chat.
const DefaultProgressInterval = time.Second

// ErrStopped is the cause a front end cancels a turn's context with when
// its user stopped it (/cancel, a Stop button): the model is told that the
// user stopped the calls in flight, rather than that they failed.
var ErrStopped = errors.New("stopped by the user")

// A CallProgress is what a running call of the turn last reported.
type CallProgress struct {
	// Call is the call's number in its turn, as in its EventToolStart.
	Call   int
	Server string
	Tool   string
	mcpgram.Progress
}

// A progressPump hands on what the calls of a batch report: the latest
// report of each, in one EventToolProgress at most every interval however
// fast servers report, so that a flood costs neither the front end's
// edits nor memory (one report kept per call).
type progressPump struct {
	emit *emitter

	mu     sync.Mutex
	latest map[int]CallProgress // the reports not yet handed on
	ended  map[int]bool         // calls that returned: their reports are late

	loop *pace.Loop
}

func startProgress(emit *emitter, interval time.Duration) *progressPump {
	p := &progressPump{emit: emit, latest: map[int]CallProgress{}, ended: map[int]bool{}}
	p.loop = pace.Start(interval, p.flush)
	return p
}

// report keeps cp as its call's latest. It runs on a server connection's
// read loop, so it only stores and signals.
func (p *progressPump) report(cp CallProgress) {
	p.mu.Lock()
	if p.ended[cp.Call] {
		p.mu.Unlock()
		return
	}
	p.latest[cp.Call] = cp
	p.mu.Unlock()
	p.loop.Wake()
}

// ended drops what call n reported and has not been handed on: its end
// says more.
func (p *progressPump) callEnded(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.latest, n)
	p.ended[n] = true
}

// close stops the pump and waits for it.
func (p *progressPump) close() { p.loop.Close() }

// flush hands on the reports kept, in the calls' order.
func (p *progressPump) flush() {
	p.mu.Lock()
	var out []CallProgress
	for _, cp := range p.latest {
		out = append(out, cp)
	}
	clear(p.latest)
	p.mu.Unlock()
	if len(out) == 0 {
		return
	}
	slices.SortFunc(out, func(a, b CallProgress) int { return a.Call - b.Call })
	p.emit.send(Event{Kind: EventToolProgress, Progress: out})
}

// withCallProgress is ctx with call n's reports going to p.
func withCallProgress(ctx context.Context, p *progressPump, n int, server, tool string) context.Context {
	if p == nil {
		return ctx
	}
	return mcpgram.WithProgress(ctx, func(pr mcpgram.Progress) {
		p.report(CallProgress{Call: n, Server: server, Tool: tool, Progress: pr})
	})
}

// stoppedText is what the model reads of a call its user stopped.
const stoppedText = "The user stopped this call before it finished; its outcome is not known."
