package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
)

// DefaultMaxMessage bounds one message a stdio server writes: a line of
// stdout. Results of several MB pass; a server that writes on and on
// without a newline is stopped before it can make the bot hold it all.
const DefaultMaxMessage = 32 << 20

// A stdoutGuard stands between a child's stdout and mcp-go's transport. It
// passes on whole lines only, and fails the server whose line grows past
// max. It also answers for a server that replies to a request it could not
// read with an error whose id is null: mcp-go would match that reply to no
// request, and the call would wait out its whole timeout.
type stdoutGuard struct {
	max int
	// inFlight lists the ids of the hub's requests awaiting an answer.
	inFlight func() []string
	// overflow is called once a line passes max; the guard then stops.
	overflow func(error)
	// asks, when set, is given the id and requested schema of each
	// elicitation/create request as the server wrote it.
	asks func(id string, schema json.RawMessage)
}

// run copies src to dst line by line until src ends, then closes dst.
func (g *stdoutGuard) run(src io.Reader, dst *io.PipeWriter) {
	buf := make([]byte, 64<<10)
	var line []byte
	for {
		n, err := src.Read(buf)
		chunk := buf[:n]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			end := len(chunk)
			if i >= 0 {
				end = i + 1
			}
			if len(line)+end > g.max+1 {
				g.overflow(fmt.Errorf("wrote a message over %d MiB without a newline; stopped", g.max>>20))
				// The end of the stream, not an error: mcp-go would log an
				// error on its own logger.
				dst.Close()
				return
			}
			line = append(line, chunk[:end]...)
			chunk = chunk[end:]
			if i < 0 {
				break
			}
			if _, werr := dst.Write(g.pass(line)); werr != nil {
				return
			}
			// Keep a small buffer, give a big one back.
			if cap(line) > 1<<20 {
				line = nil
			} else {
				line = line[:0]
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// pass returns what to hand on for line: the line itself, or for an error
// reply with a null id, that error as the reply to each request in flight.
// With one request in flight the error is surely its own; with several the
// server did not say which it could not read, and failing them all at once
// beats letting all of them wait out their timeout.
func (g *stdoutGuard) pass(line []byte) []byte {
	if g.asks != nil {
		if id, schema, ok := elicitationLine(line); ok {
			g.asks(id, schema)
		}
	}
	if !bytes.Contains(line, []byte("null")) {
		return line
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Error == nil || msg.Method != "" || string(msg.ID) != "null" {
		return line
	}
	var out bytes.Buffer
	for _, id := range g.inFlight() {
		reply, _ := json.Marshal(map[string]any{
			"jsonrpc": "2.0",
			"id":      id,
			"error": map[string]any{
				"code":    msg.Error.Code,
				"message": "the server could not read a request (it did not say which, so every call in flight fails): " + msg.Error.Message,
			},
		})
		out.Write(reply)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// inFlight tracks the ids of a connection's requests awaiting an answer.
type inFlight struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

func (f *inFlight) add(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids == nil {
		f.ids = map[string]struct{}{}
	}
	f.ids[id] = struct{}{}
}

func (f *inFlight) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.ids, id)
}

func (f *inFlight) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Collect(maps.Keys(f.ids))
}
