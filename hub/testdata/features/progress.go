package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// cancelled counts the calls of "wait", and the reads of
// features://slow/wait, that ended by the client's cancellation (notifications/cancelled, or the HTTP stream closed),
// which the tool "cancelled" reports.
var cancelled atomic.Int64

// addProgressTools adds the tools, and the resources, that report
// progress and wait to be cancelled.
func addProgressTools(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("index", mcp.WithToolTitle("Index the files"),
		mcp.WithDescription("Indexes files, reporting progress after each of count steps (default 3) of total (default count); with flood, sends that many progress notifications first, spread evenly over spread_ms milliseconds (default: at once)."),
		mcp.WithNumber("count"), mcp.WithNumber("total"), mcp.WithNumber("flood"), mcp.WithNumber("spread_ms"), mcp.WithString("message")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			token := progressToken(req)
			count := req.GetInt("count", 3)
			total := req.GetInt("total", count)
			msg := req.GetString("message", "indexing")
			sent := 0
			flood := req.GetInt("flood", 0)
			began, spread := time.Now(), time.Duration(req.GetInt("spread_ms", 0))*time.Millisecond
			for i := range flood {
				if due := began.Add(spread * time.Duration(i) / time.Duration(flood)); time.Until(due) > 0 {
					time.Sleep(time.Until(due)) // the server's pace, not a test's signal
				}
				sent += notifyProgress(ctx, token, float64(i)/float64(max(1, flood)), float64(total), msg)
			}
			for i := 1; i <= count; i++ {
				sent += notifyProgress(ctx, token, float64(i), float64(total), msg)
			}
			return mcp.NewToolResultText(fmt.Sprintf("indexed %d of %d; %d progress notifications sent", count, total, sent)), nil
		})
	s.AddTool(mcp.NewTool("wait", mcp.WithDescription("Reports progress count times (default once: 1 of 4, \"waiting\"; the i-th of total, default 4) and waits until the call is cancelled."),
		mcp.WithNumber("count"), mcp.WithNumber("total")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			total := req.GetInt("total", 4)
			for i := 1; i <= req.GetInt("count", 1); i++ {
				notifyProgress(ctx, progressToken(req), float64(i), float64(total), "waiting")
			}
			<-ctx.Done()
			cancelled.Add(1)
			return nil, ctx.Err()
		})
	s.AddResource(mcp.NewResource("features://slow/steps", "steps.txt", mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			sent := 0
			for i := 1; i <= 3; i++ {
				sent += notifyProgress(ctx, readToken(req), float64(i), 3, "reading")
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain",
				Text: fmt.Sprintf("read in 3 steps; %d progress notifications sent", sent)}}, nil
		})
	s.AddResource(mcp.NewResource("features://slow/wait", "wait.txt", mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			notifyProgress(ctx, readToken(req), 1, 4, "reading")
			<-ctx.Done()
			cancelled.Add(1)
			return nil, ctx.Err()
		})
	s.AddTool(mcp.NewTool("cancelled", mcp.WithDescription("Says how many calls of wait, and reads of features://slow/wait, were cancelled.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return report(map[string]any{"cancelled": cancelled.Load()})
		})
}

// readToken is the token the client asked a read's progress under, or
// nil.
func readToken(req mcp.ReadResourceRequest) mcp.ProgressToken {
	if req.Params.Meta == nil {
		return nil
	}
	return req.Params.Meta.ProgressToken
}

// progressToken is the token the client asked progress under, or nil.
func progressToken(req mcp.CallToolRequest) mcp.ProgressToken {
	if req.Params.Meta == nil {
		return nil
	}
	return req.Params.Meta.ProgressToken
}

// notifyProgress writes one progress notification for token, if the
// client gave one, and reports whether it did (1) or not (0). It writes
// to stdout itself: mcp-go's server queues notifications apart from
// results, which may then overtake them, and drops them beyond 100
// queued; a test wants each in order, before the result. Over HTTP
// (httpMode) it sends through the server, on the call's own stream.
func notifyProgress(ctx context.Context, token mcp.ProgressToken, progress, total float64, msg string) int {
	if token == nil {
		return 0
	}
	params := map[string]any{"progressToken": token, "progress": progress, "message": msg}
	if total > 0 {
		params["total"] = total
	}
	if httpMode {
		if err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params); err != nil {
			return 0
		}
		return 1
	}
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": mcp.MethodNotificationProgress, "params": params})
	if err != nil {
		return 0
	}
	if _, err := stdout.Write(append(line, '\n')); err != nil {
		return 0
	}
	return 1
}
