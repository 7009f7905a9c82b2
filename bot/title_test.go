package bot_test

import (
	"strings"
	"testing"
)

// A server's title (its serverInfo.title) is shown beside its name,
// never in its place, where tools' titles are: /tools, an approval card
// and the status message.
func TestServerTitleInTelegram(t *testing.T) {
	s := newFormStack(t, false, nil)
	s.start(nil)
	f := s.fake
	f.Text(alice, alice, "/tools")
	card(t, f, alice, "f (Features Test Server)\n• add_prompt")

	f.Text(alice, alice, `tool index {"count": 1}`)
	c := card(t, f, alice, "Approval needed")
	if want := "Run index (Index the files) on f (Features Test Server) with"; !strings.Contains(c.Plain, want) {
		t.Errorf("the approval card does not say %q:\n%s", want, c.Plain)
	}
	press(t, f, alice, alice, c, "✅ Approve")
	waitText(t, f, alice, "Tool said: indexed 1 of 1")
	if _, ok := lastWith(f, alice, "Index the files on f (Features Test Server)"); !ok {
		t.Error("no status message names the server with its title")
	}
}
