// Package confine is the first program a stdio MCP server's process runs.
// It takes on the server's bounds (resource limits that its every process
// inherits) and, where the bot runs as root, the server's own unprivileged
// user, with no capability left and none to gain; then it becomes the
// server by exec.
//
// The hub runs it as "PROGRAM __mcpgram-confine SPEC COMMAND ARGS...",
// inside the sandbox where there is one, where PROGRAM is the mcpgram
// binary itself: its main calls Main first thing, as does the TestMain of
// every test binary that starts servers. A program of its own would have
// to be found and shipped beside mcpgram; this one is always there.
package confine

import (
	"encoding/json"
	"fmt"
	"os"
)

// Arg is the argument that asks a program for Main.
const Arg = "__mcpgram-confine"

// A Spec is what the server's process takes on before it runs.
type Spec struct {
	// UID and GID are the user and group the server runs as; 0 keeps the
	// caller's (a bot that is not root runs its servers as itself).
	UID int `json:"uid,omitempty"`
	GID int `json:"gid,omitempty"`
	// Own are folders given to UID before it is taken on: the sandbox's
	// home and working folders, which bubblewrap makes owned by root.
	Own []string `json:"own,omitempty"`
	// Limits are the server's bounds.
	Limits Limits `json:"limits"`
}

// Limits are the bounds of one server's processes, each taken on as a
// resource limit (setrlimit); 0 leaves one unbounded.
type Limits struct {
	// Memory bounds the writable memory of each process (RLIMIT_DATA),
	// in bytes. Not its address space: Node.js reserves about 10 GB of
	// that for WebAssembly, which it never uses.
	Memory int64 `json:"memory,omitempty"`
	// Processes bounds the processes and threads the server's user runs
	// at once (RLIMIT_NPROC): counted for the server alone where it has a
	// user of its own or a user namespace, which the hub sees to.
	Processes int64 `json:"processes,omitempty"`
	// FileSize bounds the size of any file the server writes
	// (RLIMIT_FSIZE), in bytes.
	FileSize int64 `json:"fileSize,omitempty"`
}

// Command returns the arguments that run command with args under spec:
// what follows the program's own name.
func Command(spec Spec, command string, args []string) ([]string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("confine: %w", err)
	}
	return append([]string{Arg, string(b), command}, args...), nil
}

// Main returns at once unless args (a program's os.Args) ask for it. When
// they do, it never returns: it runs the command they name under their
// spec, or, if it cannot, says why on stderr and exits with status 126, as
// a shell does for a command it cannot run.
func Main(args []string) {
	if len(args) < 2 || args[1] != Arg {
		return
	}
	if err := run(args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgram: cannot start the server: %v\n", err)
		os.Exit(126)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("want %s SPEC COMMAND [ARGS...]", Arg)
	}
	var spec Spec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	return become(spec, args[1], args[1:])
}
