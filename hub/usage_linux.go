package hub

import (
	"os"
	"strconv"
	"strings"
)

// A usage is what a tree of processes takes of the machine.
type usage struct {
	tasks int64 // processes and threads
	rss   int64 // resident memory, in bytes
}

var pageSize = int64(os.Getpagesize())

// treeUsage sums the usage of process root's descendants that lie depth
// generations below it (0: root too), as /proc tells them. It follows
// each thread's children, so that it costs what the tree is, not the
// machine.
func treeUsage(root, depth int) usage {
	var u usage
	var walk func(pid, level int)
	walk = func(pid, level int) {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			return
		}
		if level >= depth {
			u.tasks += int64(len(tasks))
			u.rss += residentOf(pid)
		}
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if child, err := strconv.Atoi(f); err == nil {
					walk(child, level+1)
				}
			}
		}
	}
	walk(root, 0)
	return u
}

// residentOf is the resident memory of process pid, in bytes (the second
// field of /proc/PID/statm, in pages).
func residentOf(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * pageSize
}
