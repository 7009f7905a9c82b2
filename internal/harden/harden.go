// Package harden keeps the bot's secrets out of reach of the processes it
// starts. A child runs as the same user as the bot, and a process may read
// another of its user's /proc/<pid>/environ and /proc/<pid>/mem: that is
// where the Telegram token and the model key would be. On Linux,
// NotDumpable closes both to processes of the same user that are not root,
// and ForgetEnv wipes the secrets the configuration read from the
// environment out of the process's own environment, Go's copy and the
// kernel's alike, so that not even root finds them in environ. A root
// child can still read the memory; only a sandbox (package hub runs the
// servers in one) keeps it from the bot altogether.
package harden

import "os"

// ForgetEnv removes the variables named from the environment of this
// process: from what os.Getenv and a child started with the inherited
// environment see, and, on Linux, from the block the kernel shows in
// /proc/<pid>/environ, whose values are overwritten with zero bytes. Call
// it once the configuration has read them, and before NotDumpable, after
// which the process may no longer write its own memory through /proc. An
// error means the kernel's copy could not be wiped; Go's is gone either
// way.
func ForgetEnv(names []string) error {
	for _, n := range names {
		os.Unsetenv(n)
	}
	return wipe(names)
}

// NotDumpable makes the process non-dumpable (Linux): its environment,
// memory and open files under /proc are then closed to other processes of
// its user that lack CAP_SYS_PTRACE, and it leaves no core dump. Elsewhere
// it does nothing.
func NotDumpable() error { return notDumpable() }
