// Package promptmenu names the servers' prompts as Telegram commands:
// 1 to 32 of a-z 0-9 _, none the same as one of the bot's own commands
// or as another prompt's, the same name for the same prompt whatever the
// chat, so that /NAME means one prompt everywhere. It is pure: a catalog
// in, commands out.
package promptmenu

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram"
)

// MaxCommand is Telegram's limit on a command's length.
const MaxCommand = 32

// maxDescription is Telegram's limit on a command's description.
const maxDescription = 256

// A Command is one prompt as a command.
type Command struct {
	// Name is the command without its slash.
	Name           string
	Server, Prompt string
	// Description is what the menu shows: the prompt's title or
	// description, one line.
	Description string
}

// Commands names every prompt of the running servers of cat, in the
// order of servers and prompts. A prompt is named after itself,
// lowercased, with every other character made _; when that is one of
// reserved (the bot's own commands) or the name of another prompt, after
// its server and itself; when that clashes too, with a hash of both
// added. Which prompt clashes is decided over the whole catalog, so a
// chat that turns a server off sees the others under the same names.
func Commands(cat mcpgram.Catalog, reserved []string) []Command {
	var out []Command
	count := map[string]int{}
	for _, s := range cat.Running() {
		for _, p := range s.Prompts {
			out = append(out, Command{Name: clean(p.Name), Server: s.Name, Prompt: p.Name, Description: describe(p)})
			count[clean(p.Name)]++
		}
	}
	taken := map[string]bool{}
	for _, r := range reserved {
		taken[r] = true
	}
	for i, c := range out {
		if count[c.Name] == 1 && !taken[c.Name] {
			taken[c.Name] = true
			continue
		}
		out[i].Name = ""
	}
	for i, c := range out {
		if c.Name != "" {
			continue
		}
		name := clean(c.Server + "_" + c.Prompt)
		if taken[name] {
			sum := sha256.Sum256([]byte(c.Server + "\x00" + c.Prompt))
			h := hex.EncodeToString(sum[:4])
			name = strings.TrimRight(name[:min(len(name), MaxCommand-len(h)-1)], "_") + "_" + h
		}
		taken[name] = true
		out[i].Name = name
	}
	return out
}

// Find returns the command named name (without its slash) among cmds.
func Find(cmds []Command, name string) (Command, bool) {
	name = strings.ToLower(name)
	if i := slices.IndexFunc(cmds, func(c Command) bool { return c.Name == name }); i >= 0 {
		return cmds[i], true
	}
	return Command{}, false
}

// clean makes s a command: lowercase a-z 0-9 _, runs of others one _, no
// _ at either end, at most MaxCommand; "prompt" when nothing is left.
func clean(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	out := b.String()
	if len(out) > MaxCommand {
		out = out[:MaxCommand]
	}
	out = strings.TrimRight(out, "_")
	if out == "" {
		return "prompt"
	}
	return out
}

// describe is the menu's line of p: 1 to maxDescription characters.
func describe(p mcpgram.Prompt) string {
	d := p.Title
	if d == "" {
		d = p.Description
	}
	d = strings.Join(strings.Fields(d), " ")
	if d == "" {
		d = "Prompt " + p.Name
	}
	if r := []rune(d); len(r) > maxDescription {
		d = string(r[:maxDescription-1]) + "…"
	}
	return d
}
