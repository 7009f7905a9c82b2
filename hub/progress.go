// Progress: every tools/call and resources/read carries a progress token
// (its request id), and what a server reports under it
// (notifications/progress) reaches the function the caller put in the
// call's context.

package hub

import (
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpgram/mcpgram"
)

// progressed hands notification n to the call whose token it names, if
// that call is still in flight and wants it. What is not a number, or
// names no call of ours, is dropped.
func (c *conn) progressed(n mcp.JSONRPCNotification) {
	fields := n.Params.AdditionalFields
	token, ok := fields["progressToken"].(string)
	if !ok {
		return
	}
	c.calls.mu.Lock()
	cl := c.calls.m[token]
	c.calls.mu.Unlock()
	if cl == nil || cl.progress == nil {
		return
	}
	progress, ok := fields["progress"].(float64)
	if !ok {
		return
	}
	p := mcpgram.Progress{Progress: progress}
	if total, ok := fields["total"].(float64); ok && total > 0 {
		p.Total = total
	}
	if msg, ok := fields["message"].(string); ok {
		p.Message = oneLine(msg, mcpgram.MaxProgressMessage)
	}
	cl.progress(p)
}

// oneLine is s with its runs of white space as single spaces, cut to at
// most n bytes at a character boundary.
func oneLine(s string, n int) string {
	if len(s) > 4*n {
		s = s[:4*n] // what Fields reads of a huge message stays bounded
	}
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// withProgressToken is params with token as its _meta's progressToken,
// leaving params itself as it was.
func withProgressToken(params map[string]any, token string) map[string]any {
	p := make(map[string]any, len(params))
	for k, v := range params {
		p[k] = v
	}
	m := map[string]any{}
	if old, ok := params["_meta"].(map[string]any); ok {
		for k, v := range old {
			m[k] = v
		}
	}
	m["progressToken"] = token
	p["_meta"] = m
	return p
}
