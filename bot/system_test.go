package bot_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/hub"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// realAgent is the real agent on a hub with the echo server, a real
// SQLite store and the fake model answering with h.
func realAgent(t *testing.T, h llmfake.Handler) (*agent.Agent, *hub.Hub, *sqlite.DB, *llmfake.Server) {
	t.Helper()
	dir := t.TempDir()
	hb := testenv.StartHub(t, testenv.WriteSettings(t, dir, map[string]any{"echo": testenv.EchoEntry(t)}), hub.Options{NoWatch: true})
	db := testenv.SQLite(t, filepath.Join(dir, "mcpgram.db"))
	model := llmfake.New(t, h)
	a := newAgent(t, db, hb, model, func(p *mcpgram.Profile, _ *agent.Options) { p.Vision = true })
	return a, hb, db, model
}

// A chat's /system instructions reach the model for that chat only, and
// persist; in a group only its administrators change them.
func TestSystemInstructions(t *testing.T) {
	a, h, db, model := realAgent(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("Bonjour.") })
	fake := tgfake.New(t)
	startBotWith(t, fake, db, false, a, h, nil)

	fake.Text(alice, alice, "/system")
	waitText(t, fake, alice, "no instructions of its own")
	fake.Text(alice, alice, "/system Answer in French, <briefly>.")
	saved := waitText(t, fake, alice, "Saved.")
	if !strings.Contains(saved.Plain, "Answer in French, <briefly>.") {
		t.Errorf("the saved instructions shown: %q", saved.Plain)
	}
	fake.Text(alice, alice, "hello")
	waitText(t, fake, alice, "Bonjour.")
	fake.Text(bob, bob, "hello")
	waitText(t, fake, bob, "Bonjour.")
	system := func(i int) string { return model.Calls()[i].Request.Messages[0].Content }
	if !strings.HasSuffix(system(0), "Answer in French, <briefly>.") || strings.Contains(system(1), "French") {
		t.Errorf("system prompts: alice's %q, bob's %q", system(0), system(1))
	}

	const group = -55
	fake.Send(tgfake.Incoming{ChatID: group, UserID: bob, Text: "/system Talk like a pirate."})
	waitText(t, fake, group, "Only the group's administrators")
	fake.SetChatAdmin(group, alice)
	fake.Send(tgfake.Incoming{ChatID: group, UserID: alice, Text: "/system Talk like a pirate."})
	waitText(t, fake, group, "Saved.")
	fake.Send(tgfake.Incoming{ChatID: group, UserID: bob, Text: "/system"})
	waitText(t, fake, group, "Talk like a pirate.")
	if got, err := db.ChatInstructions(t.Context(), "-55"); err != nil || got != "Talk like a pirate." {
		t.Errorf("stored group instructions = %q, %v", got, err)
	}
	fake.Text(alice, alice, "/system clear")
	waitText(t, fake, alice, "Instructions cleared.")
	if got, _ := db.ChatInstructions(t.Context(), "2"); got != "" {
		t.Errorf("instructions after clear = %q", got)
	}
}

// /retry through the bot: the last message is answered again.
func TestRetryCommand(t *testing.T) {
	a, h, db, model := realAgent(t, llmfake.Script(llmfake.Text("First try."), llmfake.Text("Second try.")))
	fake := tgfake.New(t)
	startBotWith(t, fake, db, false, a, h, nil)
	fake.Text(alice, alice, "/retry")
	waitText(t, fake, alice, "no message to answer again")
	fake.Text(alice, alice, "tell me a joke")
	waitText(t, fake, alice, "First try.")
	fake.Text(alice, alice, "/retry")
	waitText(t, fake, alice, "Second try.")
	if last := model.Calls()[1].Request.Messages; strings.Contains(last[len(last)-1].Content, "First try.") || last[len(last)-1].Content != "tell me a joke" {
		t.Errorf("the retry asked the model %+v", last)
	}
}

// /tools offers to turn a server off for the chat alone; the press is
// authorised when pressed (a group's member may not, its administrator
// may), and the agent then leaves the server out for that chat only.
func TestChatServers(t *testing.T) {
	a, h, db, _ := realAgent(t, llmfake.Script())
	fake := tgfake.New(t)
	startBotWith(t, fake, db, false, a, h, nil)
	fake.Text(alice, alice, "/tools")
	tools := waitText(t, fake, alice, "Echoes its message")
	data := ""
	for _, row := range tools.Keyboard {
		for _, btn := range row {
			if btn.Text == "Turn off echo here" && btn.CallbackData != nil {
				data = *btn.CallbackData
			}
		}
	}
	if data == "" {
		t.Fatalf("no switch on /tools: %+v", tools.Keyboard)
	}
	waitAnswer(t, fake, fake.Press(alice, alice, tools.ID, data))
	waitText(t, fake, alice, "echo: off in this chat")
	if off, err := agent.NewPrefs(a).ServersOff(t.Context(), "2"); err != nil || len(off) != 1 || off[0] != "echo" {
		t.Errorf("servers off in alice's chat = %q, %v", off, err)
	}

	const group = -66
	fake.Send(tgfake.Incoming{ChatID: group, UserID: bob, Text: "/tools"})
	gtools := waitText(t, fake, group, "Echoes its message")
	if ans := waitAnswer(t, fake, fake.Press(group, bob, gtools.ID, data)); !ans.ShowAlert || !strings.Contains(ans.Text, "administrators") {
		t.Errorf("a member's press: %+v", ans)
	}
	if off, _ := agent.NewPrefs(a).ServersOff(t.Context(), "-66"); len(off) != 0 {
		t.Errorf("a member turned a server off: %q", off)
	}
	fake.SetChatAdmin(group, alice)
	waitAnswer(t, fake, fake.Press(group, alice, gtools.ID, data))
	if off, _ := agent.NewPrefs(a).ServersOff(t.Context(), "-66"); len(off) != 1 {
		t.Errorf("the administrator's press: servers off = %q", off)
	}
}

// A photo with its caption reaches a model that sees images as an image
// part; for one that does not, the caption goes on with a word to the
// user, and a photo without a caption gets a clear answer and no turn.
func TestPhotos(t *testing.T) {
	a, h, db, model := realAgent(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("A red square.") })
	fake := tgfake.New(t)
	startBotWith(t, fake, db, false, a, h, func(c *bot.Options) { c.Vision = true })
	png := pngOf(t, 0)
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "photo", Data: png, Caption: "What is this?"})
	waitText(t, fake, alice, "A red square.")
	m := model.Calls()[0].Request.Messages
	last := m[len(m)-1]
	if len(last.Images) != 1 || !strings.HasPrefix(last.Images[0], "data:image/png;base64,") || !strings.HasPrefix(last.Content, "What is this?") {
		t.Errorf("the model got %+v", last)
	}
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "photo", Data: png, Size: 11 << 20})
	waitText(t, fake, alice, "too large")
}

func TestPhotosWithoutVision(t *testing.T) {
	a, h, db, model := realAgent(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("Noted.") })
	fake := tgfake.New(t)
	hs := startBotWith(t, fake, db, false, a, h, nil)
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "photo", Data: []byte("\xff\xd8"), Caption: "My receipt"})
	waitText(t, fake, alice, "cannot see images: I read only the caption")
	waitText(t, fake, alice, "Noted.")
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "photo", Data: []byte("\xff\xd8")})
	waitText(t, fake, alice, "Please describe the picture in words.")
	waitHandled(t, hs)
	if n := len(model.Calls()); n != 1 || len(model.Calls()[0].Request.Messages[len(model.Calls()[0].Request.Messages)-1].Images) != 0 {
		t.Errorf("model calls: %d", n)
	}
	if fake.Downloads() != 0 {
		t.Error("a photo was downloaded for a model that cannot see it")
	}
}
