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
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	zombies := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
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
		if f[0] != "Z" && f[0] != "X" {
			return false
		}
		zombies++
	}
	return zombies > 0
}
