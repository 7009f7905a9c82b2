package hub

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// DefaultUserBase is where the users stdio servers run as begin, where the
// bot runs as root: a server never runs as root. Each has a user of its
// own, DefaultUserBase plus one plus a number from its name, below
// DefaultUserBase+userSpan, so that its processes are counted apart and
// no other server's may signal them; all share the group DefaultUserBase,
// so that a folder two servers are given serves both. (Files a server
// writes show these numbers as their owner and group.)
const DefaultUserBase = 1_000_000_000

// userSpan is how many users servers may be given.
const userSpan = 1_000_000

// A user is the user and group a server runs as.
type user struct{ uid, gid int }

// serverUser is the user server name runs as: where the bot runs as root,
// one of its own in the servers' group, else the zero user: the bot's.
func (h *Hub) serverUser(name string) user {
	if !runsAsRoot() {
		return user{}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if u, ok := h.users[name]; ok {
		return u
	}
	names := make([]string, 0, len(h.servers))
	for n := range h.servers {
		names = append(names, n)
	}
	u := user{uid: userOf(h.path, name, names, h.opts.UserBase), gid: h.opts.UserBase}
	if h.users == nil {
		h.users = make(map[string]user, len(h.servers))
	}
	h.users[name] = u
	return u
}

// runsAsRoot reports whether the bot runs as root, once: its user does not
// change, and every catalog asks.
var runsAsRoot = sync.OnceValue(func() bool { return os.Geteuid() == 0 })

// userOf is the user of server name among the servers names of the
// settings file at path: base plus one plus a number drawn from both, the
// next free one where a server whose name sorts first drew the same. The
// file is drawn from too, so that two bots of one machine (or two tests)
// give their servers of one name users of their own.
func userOf(path, name string, names []string, base int) int {
	slices.Sort(names)
	taken := map[int]string{}
	for _, n := range names {
		u := draw(path + "\x00" + n)
		for taken[u] != "" && taken[u] != n {
			u = (u + 1) % userSpan
		}
		taken[u] = n
		if n == name {
			return base + 1 + u
		}
	}
	return base + 1 + draw(path+"\x00"+name)
}

func draw(name string) int {
	sum := sha256.Sum256([]byte(name))
	return int(binary.BigEndian.Uint32(sum[:4]) % userSpan)
}

// ConfineProgram is the name of the program, built from cmd/mcpgram-confine
// and installed beside mcpgram, that every stdio server starts through.
const ConfineProgram = "mcpgram-confine"

// confineProgram finds ConfineProgram: beside this process's binary, or on
// PATH. Where neither has it, this process's binary runs confine.Main
// itself (mcpgram's does), at the cost of readying all it links at each
// server's start.
func confineProgram() string {
	self, err := os.Executable()
	if err == nil {
		if p := filepath.Join(filepath.Dir(self), ConfineProgram); isProgram(p) {
			return p
		}
	}
	if p, err := exec.LookPath(ConfineProgram); err == nil {
		return p
	}
	return self
}

func isProgram(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// cacheFolder is the folder of server name's package caches: a folder of
// its own, so that no server can change the packages another one runs.
func (h *Hub) cacheFolder(name string) string {
	root := h.opts.CacheDir
	if root == "" {
		root = defaultCacheDir()
	}
	if root == "" {
		return ""
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return filepath.Join(root, folderName(h.path, name))
}

// defaultCacheDir is where servers' caches go: under /var/cache for a bot
// run as root (where each server's own user can reach them), else in the
// user's cache folder.
func defaultCacheDir() string {
	if runsAsRoot() {
		return "/var/cache/mcpgram/servers"
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "mcpgram", "servers")
}

// folderName is a server's name made safe for a folder's ("..", spaces,
// dots), with a digest of it and of the settings file at path: two names
// that look alike, or two bots' servers of one name, are kept apart.
func folderName(path, name string) string {
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
	sum := sha256.Sum256([]byte(path + "\x00" + name))
	return safe + "-" + hex.EncodeToString(sum[:4])
}

// adopt gives the server's user u what of the read-write paths rw belongs
// to root (a folder an older mcpgram made, or its server wrote as root),
// writable by the servers' group too: the folder and what it holds, but
// not what a link points to, what lies on another filesystem, or a file
// with other names elsewhere (a hard link a server left could otherwise
// hand over any file of the machine). A path already a server's, or
// someone else's, stays as it is. It returns the paths it gave.
func adopt(rw []string, u user) ([]string, error) {
	var given []string
	for _, root := range rw {
		var st syscall.Stat_t
		if err := syscall.Lstat(root, &st); err != nil || st.Uid != 0 {
			continue
		}
		dev := st.Dev
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			var st syscall.Stat_t
			if syscall.Lstat(p, &st) != nil || st.Uid != 0 || d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			if st.Dev != dev {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && (!d.Type().IsRegular() || st.Nlink > 1) {
				return nil
			}
			if err := os.Lchown(p, u.uid, u.gid); err != nil {
				return err
			}
			return os.Chmod(p, fs.FileMode(st.Mode&0o7777)|groupWrite(d.IsDir()))
		})
		if err != nil {
			return given, fmt.Errorf("give %s to the server's user %d: %w", root, u.uid, err)
		}
		given = append(given, root)
	}
	return given, nil
}

// groupWrite is what the servers' group may do with what a server is
// given: write, and pass a folder.
func groupWrite(dir bool) fs.FileMode {
	if dir {
		return 0o070
	}
	return 0o060
}

// unreachable returns the first folder on the way to p that user uid may
// not pass (not its, and closed to others), or "". Outside a bubblewrap
// sandbox, which makes the folders on the way itself, a server that runs
// as its own user needs them open.
func unreachable(p string, u user) string {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if syscall.Stat(d, &st) == nil && st.Mode&0o001 == 0 && int(st.Uid) != u.uid && !(int(st.Gid) == u.gid && st.Mode&0o010 != 0) {
			return d
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}
