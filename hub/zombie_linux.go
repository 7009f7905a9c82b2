package hub

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// zombiesOnly reports whether every process /proc shows in the group pgid
// has exited and only waits to be reaped. It answers false when it cannot
// tell, or finds no member at all: a process it cannot see may be alive.
func zombiesOnly(pgid int) bool {
	members, ok := scanGroup(pgid)
	if !ok {
		return false
	}
	for _, m := range members {
		if !m.dead {
			return false
		}
	}
	return len(members) > 0
}

// groupMembers returns the live processes /proc shows in the group pgid.
func groupMembers(pgid int) []int {
	members, _ := scanGroup(pgid)
	var out []int
	for _, m := range members {
		if !m.dead {
			out = append(out, m.pid)
		}
	}
	return out
}

type groupProc struct {
	pid  int
	dead bool // exited, waiting to be reaped
}

// scanGroup lists the processes of group pgid; ok is false when /proc
// cannot be read.
func scanGroup(pgid int) (members []groupProc, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// The state, parent and group follow the command name, which may
		// hold spaces and parentheses of its own.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		members = append(members, groupProc{pid: pid, dead: f[0] == "Z" || f[0] == "X"})
	}
	return members, true
}
