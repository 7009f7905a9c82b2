package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var _ = wait

// held keeps what alloc took, so that it stays taken.
var held [][]byte

// attack does one thing a server that wants out of its sandbox, or more
// than its share of the machine, would try, and says how it went.
//
//	whoami              its user, group and capabilities
//	procsys             open for writing what of /proc and /sys changes the
//	                    machine (core_pattern, sysrq-trigger); it writes
//	                    nothing, opening is the hole
//	symlink PATH TARGET replace PATH with a link to TARGET (for its next start)
//	plant PATH          create PATH, as a journal planted for the bot
//	write PATH          replace the file PATH with other bytes
//	forks N             start N processes that wait, and count those that started
//	fill PATH           write to PATH until refused, and say how much
//	bigfile PATH N      write N bytes to PATH
//	alloc N             take N MiB of memory, a MiB at a time, and keep it
//	env NAME            the value of the environment variable NAME
func attack(what, path, target string, n int) Result {
	r := Result{Target: what}
	var err error
	switch what {
	case "whoami":
		r.Info = fmt.Sprintf("uid=%d gid=%d groups=%v %s", os.Getuid(), os.Getgid(), groups(), capabilities().Info)
	case "procsys":
		var open []string
		for _, p := range []string{"/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger", "/proc/sys/kernel/domainname", "/sys/kernel/uevent_helper"} {
			if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
				f.Close()
				open = append(open, p)
			}
		}
		r.Info = strings.Join(open, " ")
	case "symlink":
		if err = os.RemoveAll(path); err == nil {
			err = os.Symlink(target, path)
		}
	case "plant":
		err = os.WriteFile(path, []byte("planted by a server"), 0o644)
	case "write":
		err = os.WriteFile(path+".new", []byte("replaced by a server"), 0o644)
		if err == nil {
			err = os.Rename(path+".new", path)
		}
	case "forks":
		r.Bytes, err = forks(n)
		r.Info = strconv.Itoa(r.Bytes) + " started"
	case "fill":
		r.Bytes, err = fill(path, -1)
	case "bigfile":
		r.Bytes, err = fill(path, n)
	case "alloc":
		// A MiB at a time, as a leak grows.
		for range n {
			b := make([]byte, 1<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			held = append(held, b)
			r.Bytes += len(b)
		}
	case "env":
		r.Info = os.Getenv(path)
	default:
		err = fmt.Errorf("no attack %q", what)
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

func groups() []int {
	g, _ := os.Getgroups()
	return g
}

// forks starts n processes that wait (sleep, which needs no thread more),
// and leaves them running: the server's bound, not this count, must stop
// them.
func forks(n int) (int, error) {
	started := 0
	for range n {
		cmd := exec.Command("sleep", "3600")
		if err := cmd.Start(); err != nil {
			return started, err
		}
		started++
	}
	return started, nil
}

// fill writes to path until it is refused, or max bytes (max < 0: no end).
func fill(path string, max int) (int, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	total := 0
	for max < 0 || total < max {
		n, err := f.Write(chunk)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// wait is what a forked copy does: nothing, for a long time.
func wait() {
	time.Sleep(time.Hour)
	syscall.Exit(0)
}
