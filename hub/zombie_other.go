//go:build unix && !linux

package hub

// zombiesOnly cannot tell a zombie from a live process without /proc, so a
// group that answers signals counts as alive.
func zombiesOnly(int) bool { return false }

// groupMembers cannot list a group without /proc; no sandbox runs here.
func groupMembers(int) []int { return nil }
