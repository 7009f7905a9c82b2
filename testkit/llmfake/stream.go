package llmfake

import (
	"encoding/json"
	"io"
	"net/http"
	"time"
	"unicode/utf8"
)

// A streamChunk is one "data:" event of a streamed reply.
type streamChunk struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []streamChoice `json:"choices"`
	Usage   map[string]any `json:"usage,omitempty"`
}

type streamChoice struct {
	Index        int         `json:"index"`
	Delta        streamDelta `json:"delta"`
	FinishReason *string     `json:"finish_reason"`
}

type streamDelta struct {
	Role      string      `json:"role,omitempty"`
	Content   *string     `json:"content,omitempty"`
	Reasoning string      `json:"reasoning_content,omitempty"`
	ToolCalls []callDelta `json:"tool_calls,omitempty"`
}

type callDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, reply Reply) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	// Each event goes out on its own when the reply paces or cuts the
	// stream; otherwise all go out at once, which a client cannot tell
	// from events that happen to arrive together.
	flushEach := reply.ChunkDelay > 0 || reply.DropAfter > 0
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	send := func(v any) {
		b, _ := json.Marshal(v)
		b = append(append([]byte("data: "), b...), "\n\n"...)
		_, _ = w.Write(b)
		if flushEach {
			flush()
		}
	}
	created := time.Now().Unix()
	chunk := func(delta streamDelta, finish *string) streamChunk {
		return streamChunk{
			ID: "chatcmpl-fake", Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []streamChoice{{Delta: delta, FinishReason: finish}},
		}
	}
	text := reply.text()
	chunks := reply.Chunks
	if chunks == nil {
		chunks = []string{text}
	}
	empty := ""
	send(chunk(streamDelta{Role: "assistant", Content: &empty}, nil))
	for _, rp := range pieces(reply.Reasoning, reply.ArgChunk) {
		send(chunk(streamDelta{Reasoning: rp}, nil))
	}
	for round := 1; round <= max(reply.Repeat, 1) || reply.Endless; round++ {
		if r.Context().Err() != nil {
			return // the client hung up
		}
		if !streamChunks(w, r, reply, chunks, func(c *string) { send(chunk(streamDelta{Content: c}, nil)) }) {
			return
		}
	}
	reply.streamCalls(func(d callDelta) { send(chunk(streamDelta{ToolCalls: []callDelta{d}}, nil)) })
	if reply.StreamError != "" {
		send(map[string]any{"error": map[string]any{"message": reply.StreamError, "type": "server_error"}})
		flush()
		return
	}
	if !reply.NoFinish {
		finish := reply.finish()
		send(chunk(streamDelta{}, &finish))
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !reply.NoUsage {
		send(streamChunk{
			ID: "chatcmpl-fake", Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []streamChoice{}, Usage: reply.usage(req, text),
		})
	}
	if !reply.NoDone {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
	flush()
}

// streamChunks sends the content chunks of one round of a streamed
// reply, and reports whether the stream goes on (false: the client hung
// up, or DropAfter cut the connection).
func streamChunks(w http.ResponseWriter, r *http.Request, reply Reply, chunks []string, send func(*string)) bool {
	for i, c := range chunks {
		if reply.DropAfter > 0 && i == reply.DropAfter {
			// Cut the connection mid-body: the client sees an unexpected EOF.
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
			return false
		}
		if i > 0 && reply.ChunkDelay > 0 {
			select {
			case <-time.After(reply.ChunkDelay):
			case <-r.Context().Done():
				return false
			}
		}
		send(&c)
	}
	return true
}

// pieces cuts s into pieces of n bytes, each ending at a character's
// end (one piece when n is 0).
func pieces(s string, n int) []string {
	var out []string
	for len(s) > n && n > 0 {
		k := n
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// streamCalls sends each tool call as deltas of its index: id, type and
// name first, then the arguments in pieces; one call after another, or
// taking turns (Interleave).
func (r Reply) streamCalls(send func(callDelta)) {
	all := make([][]callDelta, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		first := callDelta{Index: i, ID: r.callID(i), Type: "function"}
		first.Function.Name = c.Name
		all[i] = append(all[i], first)
		for _, piece := range pieces(c.Arguments, r.ArgChunk) {
			d := callDelta{Index: i}
			d.Function.Arguments = piece
			all[i] = append(all[i], d)
		}
	}
	if !r.Interleave {
		for _, ds := range all {
			for _, d := range ds {
				send(d)
			}
		}
		return
	}
	for k := 0; ; k++ {
		sent := false
		for _, ds := range all {
			if k < len(ds) {
				send(ds[k])
				sent = true
			}
		}
		if !sent {
			return
		}
	}
}
