// Command raw is a hand-written JSON-RPC server for the hub's tests, for
// what mcp-go's server cannot be made to do: with -mode silent it never
// answers anything; with -mode weird it answers, but its tool returns a
// content type no MCP version defines; with -mode flood a tool call makes
// it write to stdout without end and without a newline; with -mode nullid
// it answers a tool call with a parse error whose id is null, as servers
// do for a request they cannot read. Whatever the mode, a 2025 server to
// the hub, it answers server/discover with "method not found"; with -mode
// mute-discover it never answers it, as some servers ignore a request
// before initialize; with -mode empty-discover it answers it with an empty
// result, as some servers answer every method they do not know. With
// RAW_LOG set, it appends the method of each request to that file; with
// RAW_REQUESTS, each request as it came, one a line.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	mode := flag.String("mode", "silent", "silent, weird, flood, nullid, mute-discover or empty-discover")
	flag.Parse()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		if *mode == "silent" {
			continue
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		appendLine(os.Getenv("RAW_LOG"), req.Method)
		appendLine(os.Getenv("RAW_REQUESTS"), in.Text())
		var result string
		switch {
		case req.Method == "server/discover" && *mode == "mute-discover":
			continue
		case req.Method == "server/discover" && *mode == "empty-discover":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", req.ID)
			continue
		}
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"weird","inputSchema":{"type":"object"}},{"name":"slow","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			switch *mode {
			case "flood":
				chunk := []byte(strings.Repeat("x", 1<<16))
				os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"`)
				for {
					if _, err := os.Stdout.Write(chunk); err != nil {
						os.Exit(1)
					}
				}
			case "nullid":
				fmt.Println(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
				continue
			}
			result = `{"content":[{"type":"text","text":"before"},{"type":"hologram","data":"AAAA"},{"type":"text","text":"after"}]}`
		default:
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", req.ID)
			continue
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
	}
}

// appendLine appends line to the file at path, if path is not "".
func appendLine(path, line string) {
	if path == "" {
		return
	}
	if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintln(f, line)
		f.Close()
	}
}
