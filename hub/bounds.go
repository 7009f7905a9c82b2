package hub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/hub/confine"
)

// DefaultBounds are the bounds of a server whose entry sets none. Each is
// several times what the bundled servers and the popular npm servers take
// in normal use (docs/security.md gives the figures), and far below what
// would hurt the machine.
var DefaultBounds = mcpgram.Bounds{
	Memory:    2 << 30,
	Processes: 256,
	Tmp:       256 << 20,
	FileSize:  1 << 30,
}

// unlimited is how an entry lifts one bound.
const unlimited = "unlimited"

// boundsEntry is the JSON shape of an entry's "limits": sizes as numbers
// of bytes or with a unit ("512MiB", "2GB"), processes as a number; any
// of them "unlimited".
type boundsEntry struct {
	Memory    json.RawMessage `json:"memory"`
	Processes json.RawMessage `json:"processes"`
	Tmp       json.RawMessage `json:"tmp"`
	FileSize  json.RawMessage `json:"fileSize"`
}

// readBounds reads an entry's "limits" over DefaultBounds.
func readBounds(raw json.RawMessage) (mcpgram.Bounds, error) {
	b := DefaultBounds
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return b, nil
	}
	var e boundsEntry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return b, fmt.Errorf(`limits: want an object with memory, processes, tmp and fileSize, such as {"memory": "1GiB", "processes": 128}: %w`, err)
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		to   *int64
		size bool
	}{
		{"memory", e.Memory, &b.Memory, true},
		{"processes", e.Processes, &b.Processes, false},
		{"tmp", e.Tmp, &b.Tmp, true},
		{"fileSize", e.FileSize, &b.FileSize, true},
	} {
		if len(f.raw) == 0 || string(f.raw) == "null" {
			continue
		}
		v, err := readBound(f.raw, f.size)
		if err != nil {
			return b, fmt.Errorf("limits: %s: %w", f.name, err)
		}
		*f.to = v
	}
	return b, nil
}

// readBound reads one bound: 0 for "unlimited".
func readBound(raw json.RawMessage, size bool) (int64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, errors.New(`want a number or a string such as "512MiB" or "unlimited"`)
		}
		s = strconv.FormatFloat(n, 'f', -1, 64)
	}
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, unlimited) {
		return 0, nil
	}
	var v uint64
	var err error
	if size {
		v, err = humanize.ParseBytes(s)
	} else {
		v, err = strconv.ParseUint(s, 10, 63)
	}
	switch {
	case err != nil && size:
		return 0, fmt.Errorf(`%q is not a size (such as "512MiB", "2GB" or a number of bytes), nor "unlimited"`, s)
	case err != nil:
		return 0, fmt.Errorf(`%q is not a whole number, nor "unlimited"`, s)
	case v == 0:
		return 0, errors.New(`0 would let it run nothing: write "unlimited" to lift the bound`)
	case v > math.MaxInt64:
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(v), nil
}

// limits are the resource limits that back b up: all but Tmp, which is a
// size of the sandbox's own /tmp. The memory and processes bounds are the
// hub's to keep (see watchBounds), which stops a server that reaches them;
// the kernel refuses a process memory past twice the bound, and a process
// or thread an eighth past it (at least 4), so that what outruns the hub's
// look (a storm, one huge allocation) is held until the hub stops it. The
// processes one is a resource limit only where it counts the server alone
// (own), not the bot and every other process of the bot's user.
func limits(b mcpgram.Bounds, own bool) confine.Limits {
	l := confine.Limits{Memory: 2 * b.Memory, FileSize: b.FileSize}
	if own && b.Processes > 0 {
		l.Processes = b.Processes + max(b.Processes/8, 4)
	}
	return l
}

// A boundError says which bound a server went past, which is why it was
// stopped (or why it ended).
type boundError struct {
	bound string // "memory", "processes", "file size"
	limit string
}

func (e *boundError) Error() string {
	return fmt.Sprintf("stopped: it went past its %s bound (%s); raise \"limits\" in its entry if it needs more", e.bound, e.limit)
}

// outOfMemory are what programs write to stderr as they die for want of
// memory: Node.js, Go, Python, C++ and libc.
var outOfMemory = []string{"heap out of memory", "out of memory", "Cannot allocate memory", "cannot allocate memory", "MemoryError", "std::bad_alloc", "ENOMEM"}

// endedByBound says which bound, if any, explains how a server's process
// ended: by its exit status (the kernel's signal for a file past the
// bound, directly or as bubblewrap passes it on, 128+signal), or because
// it said it ran out of memory.
func endedByBound(b mcpgram.Bounds, signal string, code int, outOfMemory bool) error {
	const sigxfsz = 25
	if b.FileSize > 0 && (strings.Contains(signal, "file size limit exceeded") || code == 128+sigxfsz) {
		return &boundError{"file size", humanize.IBytes(uint64(b.FileSize))}
	}
	if b.Memory > 0 && outOfMemory {
		return &boundError{"memory", humanize.IBytes(uint64(b.Memory))}
	}
	return nil
}

// refusedFork are what programs write to stderr when the kernel refuses
// them a process or a thread (EAGAIN, as RLIMIT_NPROC does): Go, Node.js,
// Python, shells, glibc.
var refusedFork = []string{"failed to create new OS thread", "fork: Resource temporarily unavailable", "fork: retry", "Cannot fork", "can't start new thread", "spawn EAGAIN", "pthread_create failed", "Resource temporarily unavailable (os error 11)"}

// stderrBound stops the server of c when a line of its stderr says the
// kernel refused it a process or thread at its processes bound: such a
// server has many processes waiting, or crashing, and none doing its
// work. A line that says it ran out of memory is remembered, for when it
// ends.
func (s *server) stderrBound(c *conn, b mcpgram.Bounds, line string) {
	has := func(m string) bool { return strings.Contains(line, m) }
	if b.Memory > 0 && slices.ContainsFunc(outOfMemory, has) {
		c.outOfMemory.Store(true)
	}
	if b.Processes <= 0 || !slices.ContainsFunc(refusedFork, has) {
		return
	}
	s.stopPastBound(c, &boundError{"processes", strconv.FormatInt(b.Processes, 10) + " processes and threads"}, usage{})
}

// stopPastBound stops the server of c, which went past a bound, once.
func (s *server) stopPastBound(c *conn, err error, u usage) {
	if c.stopReason() != nil {
		return
	}
	c.setReason(err)
	s.log.Error("stopping server", "err", err, "tasks", u.tasks, "memory", u.rss)
	kill(c.cmd)
}

// watchBounds stops the server of c once its processes together go past
// its bounds: the kernel holds each process to them as it runs, but only
// the whole tree's count and memory say the server as a whole is past
// them. It ends when the process does.
func (s *server) watchBounds(c *conn, b mcpgram.Bounds) {
	if b.Processes <= 0 && b.Memory <= 0 {
		return
	}
	t := time.NewTicker(s.hub.opts.BoundsEvery)
	defer t.Stop()
	for {
		select {
		case <-c.exited:
			return
		case <-t.C:
		}
		u := treeUsage(c.cmd.Process.Pid, c.depth)
		var err error
		switch {
		case b.Processes > 0 && u.tasks >= b.Processes:
			err = &boundError{"processes", strconv.FormatInt(b.Processes, 10) + " processes and threads"}
		case b.Memory > 0 && u.rss > b.Memory:
			err = &boundError{"memory", humanize.IBytes(uint64(b.Memory))}
		}
		if err != nil {
			s.stopPastBound(c, err, u)
			return
		}
	}
}
