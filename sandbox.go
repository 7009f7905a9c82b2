package mcpgram

import (
	"fmt"
	"strings"
)

// A SandboxMode says whether and how the process of a stdio server is
// confined. A server is a stranger: it runs as the bot's user, and unconfined
// it can read whatever that user can (the bot's database, settings, .env and
// secret files) and, unless the bot hides itself, the bot's own memory.
type SandboxMode string

// The sandbox modes.
const (
	// SandboxAuto confines the server with the best this machine offers,
	// bubblewrap or else Landlock, and runs it unconfined, saying so in
	// its ServerInfo and the log, where it offers neither.
	SandboxAuto SandboxMode = "auto"
	// SandboxRequired is SandboxAuto that refuses to start a server it
	// cannot confine.
	SandboxRequired SandboxMode = "required"
	// SandboxBubblewrap and SandboxLandlock ask for that sandbox, and
	// refuse to start the server without it.
	SandboxBubblewrap SandboxMode = "bubblewrap"
	SandboxLandlock   SandboxMode = "landlock"
	// SandboxOff runs the server unconfined.
	SandboxOff SandboxMode = "off"
)

// sandboxModes is every mode, in the order errors list them.
var sandboxModes = []SandboxMode{SandboxAuto, SandboxRequired, SandboxBubblewrap, SandboxLandlock, SandboxOff}

// ParseSandboxMode reads a mode as the settings write it; case does not
// matter.
func ParseSandboxMode(s string) (SandboxMode, error) {
	m := SandboxMode(strings.ToLower(strings.TrimSpace(s)))
	for _, known := range sandboxModes {
		if m == known {
			return m, nil
		}
	}
	return "", fmt.Errorf("want auto, required, bubblewrap, landlock or off, got %q", s)
}
