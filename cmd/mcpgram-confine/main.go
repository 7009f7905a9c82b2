// Command mcpgram-confine is the first program each stdio MCP server of
// mcpgram runs (see package confine): it takes on the server's bounds and
// user, then becomes the server. mcpgram runs it from beside its own
// binary; it is a program of its own, rather than mcpgram itself, because
// it starts in a millisecond where mcpgram takes a fifth of a second to
// ready all it links, which every server's start would wait for.
package main

import (
	"fmt"
	"os"

	"github.com/mcpgram/mcpgram/hub/confine"
)

func main() {
	confine.Main(os.Args)
	fmt.Fprintf(os.Stderr, "usage: %s %s SPEC COMMAND [ARGS...]: mcpgram runs this program, not people\n", os.Args[0], confine.Arg)
	os.Exit(2)
}
