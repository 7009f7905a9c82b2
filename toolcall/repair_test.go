package toolcall_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/toolcall"
)

// listSchema types a string, a boolean, an integer and an array, as a
// directory listing's tool does.
var listSchema = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"recursive":{"type":"boolean"},"depth":{"type":"integer"},"tags":{"type":"array"}},"required":["path"]}`)

func TestRepairJSON(t *testing.T) {
	tests := []struct {
		name, in   string
		closeAtEnd bool
		want       string // "" when not repaired
		kinds      []string
	}{
		{"valid JSON is not repaired", `{"a": 1}`, true, "", nil},
		{"trailing comma", `{"a": [1, 2, ], }`, true, `{"a": [1, 2 ] }`, []string{"json_trailing_comma"}},
		{"comma kept before a value", `{"a": 1, "b": 2,}`, true, `{"a": 1, "b": 2}`, []string{"json_trailing_comma"}},
		{"comment after a trailing comma", "{\"a\": 1, // one\n}", true, "{\"a\": 1 \n}", []string{"json_trailing_comma", "json_comments"}},
		{"slashes in strings are no comment", `{"url": "http://x", /* c */ "b": 1}`, true, `{"url": "http://x",   "b": 1}`, []string{"json_comments"}},
		{"single quotes, escapes", `{'a': 'x\'y', 'b': 'say "hi"\n'}`, true, `{"a": "x'y", "b": "say \"hi\"\n"}`, []string{"json_quotes"}},
		{"typographic quotes", `{“a”: ‘b’}`, true, `{"a": "b"}`, []string{"json_quotes"}},
		{"typographic quotes in strings stay", `{"a": "“x”",}`, true, `{"a": "“x”"}`, []string{"json_trailing_comma"}},
		{"typographic quotes paired as keyboards pair them", `{“a“: „b“, ”c”: ‚d‘}`, true, `{"a": "b", "c": "d"}`, []string{"json_quotes"}},
		{"a low quote only opens", `{„a„: 1}`, true, "", nil},
		{"typographic quotes inside a typographic string", `{“a”: “say “hi” now”}`, true, "", nil},
		{"unclosed", `{"a": [1, {"b": true`, true, `{"a": [1, {"b": true}]}`, []string{"json_unclosed"}},
		{"unclosed not asked", `{"a": 1`, false, "", nil},
		{"unclosed after a comma", `{"a": 1,`, true, "", nil},
		{"unclosed after a colon", `{"a":`, true, "", nil},
		{"unclosed, members may belong outside", `{"a": {"b": 1, "c": 2`, true, "", nil},
		{"unclosed array of several in an object", `{"a": [1, 2`, true, `{"a": [1, 2]}`, []string{"json_unclosed"}},
		{"string left open", `{"a": "b`, true, "", nil},
		{"comment left open", `{"a": 1 /* x`, true, "", nil},
		{"unquoted key is not repaired", `{a: 1,}`, true, "", nil},
		{"too deep", strings.Repeat("[", 65) + strings.Repeat("]", 65) + ",", true, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, kinds, ok := toolcall.RepairJSON(tc.in, tc.closeAtEnd)
			if ok != (tc.want != "") || got != tc.want || !slices.Equal(kinds, tc.kinds) {
				t.Errorf("got %q %q %v, want %q %q", got, kinds, ok, tc.want, tc.kinds)
			}
		})
	}
}

// The pass is linear: hostile input near the 1 MiB bound takes about as
// long as its size, not its square. A quadratic pass would take minutes.
func TestRepairJSONHostile(t *testing.T) {
	inputs := map[string]string{
		"commas":         "[" + strings.Repeat("1,", toolcall.MaxArgumentBytes/2-2) + "]",
		"open brackets":  strings.Repeat("[", toolcall.MaxArgumentBytes),
		"comment starts": strings.Repeat("/*", toolcall.MaxArgumentBytes/2),
		"quotes":         strings.Repeat("'a',", toolcall.MaxArgumentBytes/4),
		"spaces, comma":  "{\"a\":1," + strings.Repeat(" ", toolcall.MaxArgumentBytes-10) + "}",
	}
	for name, in := range inputs {
		start := time.Now()
		toolcall.RepairJSON(in, true)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: %v for %d bytes", name, d, len(in))
		}
	}
	// The argument forms too.
	for name, args := range map[string]string{
		"elements":       strings.Repeat("<path>/a</path>", toolcall.MaxArgumentBytes/16),
		"unclosed tags":  strings.Repeat("<path>", toolcall.MaxArgumentBytes/6),
		"lines":          strings.Repeat("path: /a\n", toolcall.MaxArgumentBytes/10),
		"no tag closing": "<" + strings.Repeat("p", toolcall.MaxArgumentBytes-1),
	} {
		start := time.Now()
		if _, _, err := toolcall.DecodeArguments(args, listSchema, true); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: %v for %d bytes", name, d, len(args))
		}
	}
	// Over the bound, the arguments are refused before any repair.
	big := `{"message": "` + strings.Repeat("x", toolcall.MaxArgumentBytes) + `",}`
	if _, _, err := toolcall.DecodeArguments(big, listSchema, true); err == nil {
		t.Errorf("arguments over 1 MiB were repaired and accepted")
	}
}

// Whatever the pass returns as repaired is valid JSON, and it never panics.
func FuzzRepairJSON(f *testing.F) {
	for _, s := range []string{`{"a": 1,}`, `{'a': 'b'}`, `{“a”: “b”}`, "{\"a\": 1 // c\n}", `{"a": [1, {"b": 2`, `{"a": "b`, `/*`, `{'a\'': "\"'"}`, "\xe2\x80", "{\"a\":\"\\\xe2\x80\x9c\"}"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, closeAtEnd bool) {
		out, kinds, ok := toolcall.RepairJSON(in, closeAtEnd)
		if !ok {
			if out != "" || kinds != nil {
				t.Fatalf("not repaired, yet returned %q %q", out, kinds)
			}
			return
		}
		if !json.Valid([]byte(out)) {
			t.Fatalf("repaired %q into invalid JSON %q", in, out)
		}
		if len(kinds) == 0 {
			t.Fatalf("repaired %q with no kind recorded", in)
		}
	})
}

// Whatever arguments a model writes, DecodeArguments with its repairs
// never panics, and what it accepts is one JSON object within the bounds;
// valid JSON is never repaired.
func FuzzDecodeArguments(f *testing.F) {
	for _, s := range []string{`{"path": "/x",}`, "<path>/x</path><depth>2</depth>", "path: /x\nrecursive: true", `{'path': '/x'`, "<path>", "a:", "{“path”: “/x”"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, args string, whole bool) {
		got, repairs, err := toolcall.DecodeArguments(args, listSchema, whole)
		if err != nil {
			return
		}
		canon, merr := json.Marshal(got)
		if merr != nil || got == nil || len(canon) > toolcall.MaxArgumentBytes {
			t.Fatalf("accepted %q as %q (%v)", args, canon, merr)
		}
		if json.Valid([]byte(args)) && len(repairs) > 0 {
			t.Fatalf("valid JSON %q repaired: %q", args, repairs)
		}
	})
}
