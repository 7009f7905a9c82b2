package promptmenu_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/bot/promptmenu"
)

func catalog(servers map[string][]string) mcpgram.Catalog {
	var cat mcpgram.Catalog
	for _, name := range []string{"a", "b", "c", "files"} {
		prompts, ok := servers[name]
		if !ok {
			continue
		}
		s := mcpgram.ServerInfo{Name: name, Status: mcpgram.StatusRunning}
		for _, p := range prompts {
			s.Prompts = append(s.Prompts, mcpgram.Prompt{Name: p})
		}
		cat.Servers = append(cat.Servers, s)
	}
	return cat
}

var valid = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

// Names are valid commands, unique, clear of the bot's own, and the same
// whichever servers run beside.
func TestCommands(t *testing.T) {
	long := strings.Repeat("Long-Name.", 20)
	cat := catalog(map[string][]string{
		"a":     {"Review-Code", "help", "dup", long, "a_b"},
		"b":     {"dup", long, "b"},
		"files": {"---"},
	})
	cmds := promptmenu.Commands(cat, []string{"help", "start"})
	got := map[string]string{}
	seen := map[string]bool{}
	for _, c := range cmds {
		if !valid.MatchString(c.Name) {
			t.Errorf("%s/%s: %q is not a valid command", c.Server, c.Prompt, c.Name)
		}
		if seen[c.Name] {
			t.Errorf("%q given twice", c.Name)
		}
		seen[c.Name] = true
		got[c.Server+"/"+c.Prompt] = c.Name
	}
	want := map[string]string{
		"a/Review-Code": "review_code",
		"a/help":        "a_help",
		"a/dup":         "a_dup",
		"b/dup":         "b_dup",
		"a/a_b":         "a_b",
		"b/b":           "b",
		"files/---":     "prompt",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	if got["a/"+long] == got["b/"+long] {
		t.Errorf("two long names clash: %q", got["a/"+long])
	}
	again := promptmenu.Commands(cat, []string{"help", "start"})
	for i := range cmds {
		if cmds[i] != again[i] {
			t.Fatalf("not deterministic: %v then %v", cmds[i], again[i])
		}
	}
	if c, ok := promptmenu.Find(cmds, "Review_Code"); !ok || c.Prompt != "Review-Code" {
		t.Errorf("Find = %+v, %v", c, ok)
	}
}
