//go:build !unix

package hub

import (
	"os/exec"
	"time"
)

// Without process groups only the server's own process can be stopped.
func setProcessGroup(*exec.Cmd)        {}
func endGroup(int, time.Duration) bool { return false }
func groupAlive(int) bool              { return false }
func terminate(cmd *exec.Cmd, _ bool)  { _ = cmd.Process.Kill() }
func kill(cmd *exec.Cmd)               { _ = cmd.Process.Kill() }
