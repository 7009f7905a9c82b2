package apps

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// maxRPC bounds a request of the bridge, in bytes: the init data and one
// JSON-RPC message of the app's.
const maxRPC = 256 << 10

// An rpcRequest is what the host page posts: the init data Telegram gave
// it, and one request, its own or the app's.
type rpcRequest struct {
	InitData string          `json:"initData"`
	ID       json.RawMessage `json:"id"`
	Method   string          `json:"method"`
	Params   json.RawMessage `json:"params"`
}

// An rpcError is a JSON-RPC error.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// JSON-RPC error codes.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

// rpcMethods are the methods the bridge answers, which are also the
// metric's labels; any other is "other".
var rpcMethods = map[string]bool{"mcpgram/open": true, "mcpgram/await": true, "tools/call": true, "resources/read": true, "ui/message": true, "ui/update-model-context": true}

// rpc answers one request of the host page: checked against the token,
// the init data and the per-user rate, then run.
func (h *Host) rpc(w http.ResponseWriter, r *http.Request) {
	var req rpcRequest
	if err := readJSON(r, maxRPC, &req); err != nil {
		h.refuse(w, "other", http.StatusBadRequest, "Bad request.", err)
		return
	}
	method := req.Method
	if !rpcMethods[method] {
		method = "other"
	}
	u, err := CheckInitData(h.opts.BotToken, req.InitData, time.Now())
	var v store.AppView
	if err == nil {
		v, err = h.view(r.Context(), r.PathValue("token"), u.ID)
	}
	if err != nil {
		h.refuse(w, method, http.StatusForbidden, expired, err)
		return
	}
	if !h.allow(u.ID) {
		h.refuse(w, method, http.StatusTooManyRequests, "Too many requests: wait a moment.", nil)
		return
	}
	result, rerr := h.run(r.Context(), r.PathValue("token"), v, u, req)
	status := "ok"
	if rerr != nil {
		status = "error"
	}
	h.opts.Metrics.AppRequest(method, status)
	h.log.Info("app request", "method", req.Method, "server", v.Server, "user", u.ID, "status", status)
	out := map[string]any{"jsonrpc": "2.0", "id": req.ID}
	if w, ok := result.(awaiting); ok {
		// The host page's own word, never the app's: ask again.
		out["await"] = w.Pending
	} else if rerr != nil {
		out["error"] = rerr
	} else {
		out["result"] = result
	}
	headers(w, "application/json", "default-src 'none'")
	_ = json.NewEncoder(w).Encode(out)
}

// run runs req for u on view v.
func (h *Host) run(ctx context.Context, token string, v store.AppView, u WebAppUser, req rpcRequest) (any, *rpcError) {
	switch req.Method {
	case "mcpgram/open":
		return h.open(ctx, token, v, u), nil
	case "tools/call":
		return h.callTool(ctx, v, u.ID, req.Params)
	case "resources/read":
		return h.readResource(ctx, v, u.ID, req.Params)
	case "ui/update-model-context":
		return h.updateContext(ctx, v, u.ID, req.Params)
	case "ui/message":
		return h.message(ctx, v, u.ID, req.Params)
	case "mcpgram/await":
		id, ok := awaitParams(req.Params)
		if !ok {
			return nil, &rpcError{Code: codeInvalidParams, Message: "mcpgram/await needs a pending approval"}
		}
		return h.await(ctx, v, u.ID, id)
	}
	return nil, &rpcError{Code: codeMethodNotFound, Message: "the host does not answer " + req.Method}
}

// open is what the host page needs to show v's app to u: its frame's
// address, sandbox, allow attribute and origin (under a wildcard
// APPS_ORIGIN), whether it prefers a border, what its sandbox grants (for
// ui/initialize), the call's input and result, and the user's language.
// All but the address need what the page declares, read here.
func (h *Host) open(ctx context.Context, token string, v store.AppView, u WebAppUser) map[string]any {
	frames := h.opts.Frames
	_, declared, err := h.readPage(ctx, v, u.ID)
	if err != nil {
		declared = nil // the frame's own read says why
	}
	border := declared != nil && declared.PrefersBorder
	return map[string]any{
		"title": v.Title, "server": v.Server, "tool": v.Tool,
		"frame": h.frameURL(token, v, u.ID), "sandbox": frames.Sandbox(), "allow": FrameAllow(declared, h.opts.Permissions),
		"origin": frames.postOrigin(v.Server), "border": border, "hostSandbox": frames.hostSandbox(declared, h.opts.Permissions),
		"input": json.RawMessage(orEmpty(v.Input)), "result": json.RawMessage(orEmpty(v.Result)),
		"locale": u.LanguageCode, "hostInfo": map[string]string{"name": "mcpgram", "version": "1"},
	}
}

func orEmpty(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

// callTool runs an app's tools/call: only a tool of the view's server
// whose visibility includes "app", and, when the model's call of it would
// need the user's approval, once the user approved it in the chat.
func (h *Host) callTool(ctx context.Context, v store.AppView, user int64, raw json.RawMessage) (any, *rpcError) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.Name == "" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "tools/call needs a tool's name"}
	}
	s, _ := h.hub.Catalog().Server(v.Server)
	tool, ok := s.Tool(p.Name)
	if !ok || !tool.VisibleTo(mcpgram.AudienceApp) {
		return nil, &rpcError{Code: codeInvalidParams, Message: "this app may not call " + p.Name + ": it is not one of its server's tools for apps"}
	}
	if p.Arguments == nil {
		p.Arguments = map[string]any{}
	}
	if tool.ConsentWhen != nil || !(h.opts.AutoApproveAll || s.AutoApproves(p.Name)) {
		return h.askFor(ctx, v, user, appAsk{Server: v.Server, Tool: p.Name, Arguments: p.Arguments, Consent: tool.ConsentWhen != nil})
	}
	return h.runTool(ctx, v, user, p.Name, p.Arguments)
}

// runTool calls tool of v's server for user, counted and audited as the
// model's calls are.
func (h *Host) runTool(ctx context.Context, v store.AppView, user int64, tool string, arguments map[string]any) (any, *rpcError) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := h.hub.CallTool(ctx, caller(v, user), v.Server, tool, arguments)
	status := "ok"
	if err != nil || res.IsError {
		status = "error"
	}
	h.opts.Metrics.ToolCall(v.Server, tool, status, time.Since(start))
	args, _ := json.Marshal(arguments)
	audit := store.ToolCall{UserID: caller(v, user).UserID, ChatID: v.ChatID, Server: v.Server, Tool: tool,
		Arguments: string(args), Status: status, Duration: time.Since(start)}
	if err != nil {
		_ = h.store.RecordToolCall(context.WithoutCancel(ctx), audit)
		h.log.Warn("an app's tool call", "server", v.Server, "tool", tool, "err", err)
		return nil, &rpcError{Code: codeInternal, Message: "the call failed"}
	}
	out := toolResult(res)
	b, _ := json.Marshal(out)
	audit.ResultBytes = len(b)
	if err := h.store.RecordToolCall(context.WithoutCancel(ctx), audit); err != nil {
		h.log.Error("audit an app's tool call", "err", err)
	}
	return json.RawMessage(b), nil
}

// readResource runs an app's resources/read, of its own server only.
func (h *Host) readResource(ctx context.Context, v store.AppView, user int64, raw json.RawMessage) (any, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.URI == "" {
		return nil, &rpcError{Code: codeInvalidParams, Message: "resources/read needs a uri"}
	}
	s, _ := h.hub.Catalog().Server(v.Server)
	if p.URI != v.ResourceURI && !h.opts.AutoApproveAll && !s.AutoApprovesResource(p.URI) {
		return h.askFor(ctx, v, user, appAsk{Server: v.Server, URI: p.URI})
	}
	return h.runRead(ctx, v, user, p.URI)
}

// runRead reads uri of v's server for user.
func (h *Host) runRead(ctx context.Context, v store.AppView, user int64, uri string) (any, *rpcError) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	res, err := h.hub.ReadResource(ctx, caller(v, user), v.Server, uri)
	h.opts.Metrics.ResourceRead(v.Server, map[bool]string{true: "ok", false: "error"}[err == nil])
	if err != nil {
		h.log.Warn("an app's resource read", "server", v.Server, "uri", uri, "err", err)
		return nil, &rpcError{Code: codeInternal, Message: "the read failed"}
	}
	var contents []map[string]any
	for _, c := range res.Content {
		part := contentJSON(mcpgram.Content{Type: mcpgram.ContentResource, URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Data: c.Data})
		contents = append(contents, part["resource"].(map[string]any))
	}
	return map[string]any{"contents": contents}, nil
}
