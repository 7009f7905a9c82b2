package hub

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpgram/mcpgram/hub/internal/jsonobj"
	"github.com/mcpgram/mcpgram/internal/lines"
	"github.com/mcpgram/mcpgram/internal/suggest"
)

// entryFields are the fields of a server entry that mcpgram reads: those
// of entry, by their JSON names.
var entryFields = func() []string {
	var out []string
	t := reflect.TypeFor[entry]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}()

// fieldHints say more of fields other hosts read and mcpgram does not,
// where a "did you mean" would not.
var fieldHints = map[string]string{
	"alwaysAllow": `Cline's former name of "autoApprove": rename it`,
	"envFile":     "VS Code's, not read: put the variables in \"env\"",
}

// unread lists, as warnings that name the file and line, what the
// settings file holds that mcpgram does not read: a field it does not
// know is ignored, not refused, so that a file shared with other hosts
// keeps working, but a mistyped one ("disable") must not pass unseen.
func unread(path string, data []byte) []string {
	var out []string
	warn := func(line int, msg string) {
		if line > 0 {
			out = append(out, fmt.Sprintf("%s:%d: %s", path, line, msg))
		} else {
			out = append(out, path+": "+msg)
		}
	}
	top, ok := fieldsOf(data, 0)
	if !ok {
		return nil // a layout spans cannot follow: nothing to say for sure
	}
	lists := 0
	for _, f := range top {
		switch {
		case slices.Contains(serverLists, f.key):
			lists++
			servers, _ := fieldsOf(data, f.start)
			for _, server := range servers {
				fields, _ := fieldsOf(data, server.start)
				for _, ef := range fields {
					if !slices.Contains(entryFields, ef.key) {
						warn(ef.line, fmt.Sprintf("server %q: %s", server.key, unknown("field", ef.key, entryFields)))
					}
				}
			}
		case f.key == "inputs":
			warn(f.line, `"inputs" (VS Code's prompts for values) is not read: a server whose entry uses ${input:…} does not start; write ${env:NAME} instead, with NAME set in the environment or .env`)
		default:
			warn(f.line, unknown("key", f.key, serverLists))
		}
	}
	if lists == 0 {
		warn(0, `no "mcpServers" (nor VS Code's "servers"): no server will start`)
	}
	return out
}

// unknown says that name is not read, and what was probably meant.
func unknown(kind, name string, known []string) string {
	msg := fmt.Sprintf("unknown %s %q", kind, name)
	if hint, ok := fieldHints[name]; ok {
		return msg + " (" + hint + "): ignored"
	}
	if best, ok := suggest.Closest(name, known); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	}
	return msg + ": ignored"
}

// A field is one member of a JSON object in the file: its key, the line
// of the key (0 where the file's layout could not be followed) and where
// its value starts.
type field struct {
	key   string
	line  int
	start int
}

// fieldsOf returns the members of the JSON object at data[off:]; ok is
// false when it is no object, or one whose layout spans cannot follow.
func fieldsOf(data []byte, off int) (fields []field, ok bool) {
	members, _, err := jsonobj.Spans(data, off)
	if err != nil {
		return nil, false
	}
	out := make([]field, len(members))
	for i, m := range members {
		line, _ := lines.Position(data, int64(m.KeyStart))
		out[i] = field{key: m.Key, line: line, start: m.Start}
	}
	return out, true
}
