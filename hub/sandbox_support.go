package hub

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/mcpgram/mcpgram"
)

// The sandboxes, as ServerInfo.Sandbox names them.
const (
	engineBubblewrap = "bubblewrap"
	engineLandlock   = "landlock"
)

// A SandboxSupport says which sandboxes this machine offers MCP servers.
type SandboxSupport struct {
	// Bubblewrap is the path of a bwrap that could make a sandbox here;
	// where none could, BubblewrapErr says why.
	Bubblewrap    string
	BubblewrapErr string
	// LandlockABI is the kernel's Landlock version where mcpgram can use
	// it (2 or later); where it cannot, LandlockErr says why.
	LandlockABI int
	LandlockErr string
}

// Best is the sandbox SandboxAuto picks: "bubblewrap", "landlock", or ""
// where there is none.
func (s SandboxSupport) Best() string {
	switch {
	case s.Bubblewrap != "":
		return engineBubblewrap
	case s.LandlockABI > 0:
		return engineLandlock
	}
	return ""
}

// String says in a sentence what servers get, for the start-up log.
func (s SandboxSupport) String() string {
	switch s.Best() {
	case engineBubblewrap:
		return "MCP servers run sandboxed with bubblewrap (" + s.Bubblewrap + ")"
	case engineLandlock:
		return "MCP servers run sandboxed with Landlock (ABI " + strconv.Itoa(s.LandlockABI) + "), without their own process namespace or /tmp; bubblewrap, which gives both, is out: " + s.BubblewrapErr
	}
	return "MCP servers run without a sandbox and can read whatever this user can: " + s.none()
}

// none says why neither sandbox can be had.
func (s SandboxSupport) none() string {
	return "bubblewrap: " + s.BubblewrapErr + "; Landlock: " + s.LandlockErr
}

// machine is what this machine offers, found out once per process: it
// does not change while the bot runs.
var machine = sync.OnceValue(probeSandboxes)

func (h *Hub) support() SandboxSupport { return machine() }

// Sandboxes says which sandboxes this machine offers MCP servers. The
// first call in a process tries them, which takes a few milliseconds.
func Sandboxes() SandboxSupport { return machine() }

// A sandboxPlan is how one server is to start.
type sandboxPlan struct {
	engine string // engineBubblewrap, engineLandlock, or "": unconfined
	// why says why a server runs unconfined.
	why string
	// err is why it must not start at all.
	err error
}

// noSandboxFix says what fixes a server that may not start for want of
// the sandbox mode asks for, which its own entry (own) or MCP_SANDBOX set.
func noSandboxFix(mode mcpgram.SandboxMode, own bool) string {
	where := "MCP_SANDBOX=auto"
	if own {
		where = `"sandbox": "auto" in its entry`
	}
	if mode == mcpgram.SandboxBubblewrap || mode == mcpgram.SandboxLandlock {
		return "ask for " + where + ", which takes whichever sandbox this machine has"
	}
	return "install bubblewrap (apt-get install -y bubblewrap), or ask for " + where + ", which runs it unconfined where none can be had"
}

// errNoSandbox starts the message of a server that may not start
// unconfined and cannot be confined.
var errNoSandbox = errors.New("not started: its sandbox cannot be had")

// plan decides how cfg's server runs on this machine.
func (h *Hub) plan(cfg config) sandboxPlan {
	mode, own := cfg.sandbox.mode, true
	if mode == "" {
		mode, own = h.opts.Sandbox, false
	}
	if mode == mcpgram.SandboxOff {
		if own {
			return sandboxPlan{why: "its settings turn the sandbox off"}
		}
		return sandboxPlan{why: "the sandbox is off for all servers"}
	}
	sup := h.support()
	var p sandboxPlan
	switch mode {
	case mcpgram.SandboxBubblewrap:
		if sup.Bubblewrap == "" {
			return sandboxPlan{err: fmt.Errorf("%w: bubblewrap: %s; %s", errNoSandbox, sup.BubblewrapErr, noSandboxFix(mode, own))}
		}
		p.engine = engineBubblewrap
	case mcpgram.SandboxLandlock:
		if sup.LandlockABI == 0 {
			return sandboxPlan{err: fmt.Errorf("%w: Landlock: %s; %s", errNoSandbox, sup.LandlockErr, noSandboxFix(mode, own))}
		}
		p.engine = engineLandlock
	default:
		p.engine = sup.Best()
		if p.engine == "" && mode == mcpgram.SandboxRequired {
			return sandboxPlan{err: fmt.Errorf("%w: %s; %s", errNoSandbox, sup.none(), noSandboxFix(mode, own))}
		}
		if p.engine == "" {
			return sandboxPlan{why: "this machine offers no sandbox (" + sup.none() + ")"}
		}
	}
	if p.engine == engineLandlock && cfg.sandbox.noNetwork && sup.LandlockABI < 4 {
		return sandboxPlan{err: fmt.Errorf("%w: its settings cut the network, which Landlock can do from ABI 4 (Linux 6.7), and this kernel has ABI %d; install bubblewrap, or drop \"network\": false from its \"sandbox\"", errNoSandbox, sup.LandlockABI)}
	}
	return p
}
