// Command mcp-memory is an MCP server, spoken over stdio, that gives a model
// a permanent memory private to each user.
//
// It offers one tool, "memory", with the operations store, retrieve,
// search, delete and list. Memories are kept in SQLite with FTS5 full-text
// search, so search returns the best matches first.
//
// Every call names its user in the request's _meta under the key
// "mcpgram/user_id"; the host sets it, never the model. A user can never
// read, list, search or delete another user's memories, and a call without
// a user is refused, unless MEMORY_USER names the one user of a host that
// serves one person (Claude Desktop, Cline), and the client is not mcpgram.
//
// Storing needs the user's consent. A host that names its users attests it
// for each store with _meta "mcpgram/consent" (mcpgram asks the user on a
// card first, as the tool's _meta "mcpgram/consent_when" tells it to); a
// store without it is refused. The single user of another host has only
// the model's has_explicit_permission: without it, content that looks like
// personal information or a preference is refused with "Cannot store user
// preferences or personal information without explicit permission".
//
// Environment:
//
//	MEMORY_DB_PATH  the SQLite file (default ./data/memory.db, relative to
//	                the working directory; its folder is created)
//	MEMORY_USER     the one user of requests that name none (default: none,
//	                and such requests are refused)
//
// Logs go to stderr; stdout carries the protocol.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/mcpgram/mcpgram/mcp-servers/internal/stdio"
	"github.com/mcpgram/mcpgram/mcp-servers/mcp-memory/internal/memory"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// defaultDBPath is where memories live when MEMORY_DB_PATH is unset.
const defaultDBPath = "./data/memory.db"

func main() { stdio.Main("mcp-memory", run) }

func run(ctx context.Context, logger *slog.Logger) error {
	path := os.Getenv("MEMORY_DB_PATH")
	if path == "" {
		path = defaultDBPath
	}
	store, err := memory.Open(ctx, path)
	if err != nil {
		return err
	}
	defer func() { _ = store.Close() }()

	return stdio.Serve(ctx, memory.NewServer(store, logger, version, os.Getenv("MEMORY_USER")), logger)
}
