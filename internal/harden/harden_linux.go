package harden

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

func notDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the process non-dumpable: %w", err)
	}
	return nil
}

// wipe overwrites the values of names in the environment block the kernel
// keeps, between env_start and env_end of /proc/self/stat: os.Unsetenv
// changes only Go's copy, while /proc/<pid>/environ reads that block.
func wipe(names []string) error {
	start, err := envStart()
	if err != nil {
		return fmt.Errorf("wipe environment: %w", err)
	}
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return fmt.Errorf("wipe environment: %w", err)
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("wipe environment: %w", err)
	}
	defer mem.Close()
	off := 0
	for _, entry := range bytes.Split(env, []byte{0}) {
		name, value, ok := bytes.Cut(entry, []byte("="))
		if ok && len(value) > 0 && slices.Contains(names, string(name)) {
			at := start + int64(off+len(name)+1)
			if _, err := mem.WriteAt(make([]byte, len(value)), at); err != nil {
				return fmt.Errorf("wipe %s from the environment: %w", name, err)
			}
		}
		off += len(entry) + 1
	}
	return nil
}

// envStart reads where the environment block begins: the 50th field of
// /proc/self/stat, counted after the command name, which may hold spaces.
func envStart() (int64, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	// The fields after the name start with the third, the state.
	const envStartField = 50 - 3
	if len(f) <= envStartField {
		return 0, errors.New("/proc/self/stat has no env_start (Linux before 3.5)")
	}
	return strconv.ParseInt(string(f[envStartField]), 10, 64)
}
