package hub

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// refusedWrites find, in what a server wrote (its stderr, a tool's
// error), a write the system refused and the path it was to: Node.js
// ("EROFS: read-only file system, open '/x'"), Python ("Read-only file
// system: '/x'"), Go and C ("open /x: read-only file system"), and the
// same for "permission denied".
var refusedWrites = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(?:EROFS|EACCES|read-only file system|permission denied)[^/'"\n]{0,40}['"]?(/[^'"\s,)]+)`),
	regexp.MustCompile(`(?i)(/[^'"\s,:)]+)['"]?: (?:read-only file system|permission denied)`),
}

// refusedWrite returns the path of a refused write that text tells of,
// or "".
func refusedWrite(text string) string {
	for _, re := range refusedWrites {
		if m := re.FindStringSubmatch(text); m != nil {
			return filepath.Clean(m[1])
		}
	}
	return ""
}

// sandboxHint says how to let a server write at path, refused it, where
// the sandbox is why: a path its view shows read-only or not at all (rw
// are the paths it may write), or, inside those, a file that is not its
// user's (uid, where not the bot's). It is "" where neither explains it.
func sandboxHint(path string, rw []string, sandboxed bool, uid int) string {
	if path == "" || strings.HasPrefix(path, "/proc/") || strings.HasPrefix(path, "/sys/") {
		return ""
	}
	inside := slices.ContainsFunc(rw, func(p string) bool { return within(path, p) })
	switch {
	case sandboxed && !inside:
		return fmt.Sprintf(`its sandbox let it not write %s: if it must, name a file or folder of its own for it in its entry (an env value or argument, such as a folder under the settings file's data/), or add %s to "sandbox": {"paths": [...]}`, path, filepath.Dir(path))
	case inside && uid != 0:
		return fmt.Sprintf("its user %d may not write %s, which is not its own: give it to that user (chown %d %s)", uid, path, uid, path)
	}
	return ""
}

// noteRefusal remembers, for mcp list and /servers, the last write the
// sandbox refused the server, told of in text; it returns the hint, or ""
// where text tells of none.
func (s *server) noteRefusal(text string) string {
	path := refusedWrite(text)
	if path == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	hint := s.last.hint(path)
	if hint != "" && hint != s.last.refusal {
		s.last.refusal = hint
		s.log.Warn("the sandbox refused the server a write", "hint", hint)
	}
	return hint
}

// notes are the notes of a catalog, catalog, and, first, the last write
// the sandbox refused the process of r.
func (r *lastRun) notes(catalog []string) []string {
	if r.refusal == "" {
		return slices.Clone(catalog)
	}
	return append([]string{r.refusal}, catalog...)
}
