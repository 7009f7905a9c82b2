//go:build !linux

package hub

import (
	"errors"
	"os/exec"
)

// Both sandboxes are Linux's.
func probeSandboxes() SandboxSupport {
	return SandboxSupport{BubblewrapErr: "sandboxes need Linux", LandlockErr: "sandboxes need Linux"}
}

func startLandlocked(*exec.Cmd, view, int) error {
	return errors.New("Landlock needs Linux")
}
