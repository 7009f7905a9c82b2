package hub

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/mcpgram/mcpgram/internal/suggest"
)

// findCommand finds the program of a command named without a slash on the
// bot's PATH, or says how to fix the entry: with the name of a program
// there that it is probably a typo of.
func findCommand(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err == nil {
		return path, nil
	}
	if near, ok := suggest.Closest(name, programsOnPath()); ok {
		return "", fmt.Errorf("command %q not found on PATH (did you mean %q?): fix \"command\" in its entry", name, near)
	}
	return "", fmt.Errorf("command %q not found on PATH: install it, or give its full path in \"command\"", name)
}

// programsOnPath lists the names of the programs in the folders of PATH.
func programsOnPath() []string {
	seen := map[string]bool{}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if info, err := e.Info(); err == nil && info.Mode()&0o111 != 0 && !e.IsDir() {
				seen[e.Name()] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
