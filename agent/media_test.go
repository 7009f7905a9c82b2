package agent_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

// images returns the data URLs of a call's images, over all its messages.
func images(c llmfake.Call) []string {
	var out []string
	for _, m := range c.Request.Messages {
		out = append(out, m.Images...)
	}
	return out
}

const photoText = "What is this?\n\n[The user sent a photo.]"

// A photo is kept by reference with the user's message: every later call
// of the turn, later turns, a restart and /retry send it again. Once the
// retention limit deleted it, the history says it is no longer kept.
func TestImagesKeptByReference(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c llmfake.Call) llmfake.Reply {
		if c.N == 1 {
			return llmfake.Text(echo("a cat"))
		}
		return llmfake.Text(complete("It is a cat."))
	}, setup{config: func(c *wiring) { c.Vision = true }})
	img := llm.Image{MIMEType: "image/png", Data: []byte("\x89PNG")}
	const url = "data:image/png;base64,iVBORw=="
	if _, err := e.turn(agent.Request{Caller: alice, Text: photoText, Images: []llm.Image{img}}); err != nil {
		t.Fatal(err)
	}
	for i, c := range e.model.Calls() {
		m := c.Request.Messages[1]
		if got := images(c); len(got) != 1 || got[0] != url || len(m.Images) != 1 || !strings.HasPrefix(m.Content, "What is this?") {
			t.Errorf("call %d sent images %q with %q", i+1, got, m.Content)
		}
	}
	h := e.history()
	if len(h) == 0 || h[0].Content != photoText || len(h[0].Media) != 1 || h[0].Media[0] != store.MediaHash(img.Data) {
		t.Fatalf("stored user message: %+v", h)
	}

	e.restart()
	e.say("And now?")
	e.turn(agent.Request{Caller: alice, Retry: true})
	calls := e.model.Calls()
	for _, c := range calls[len(calls)-2:] {
		if got := images(c); len(got) != 1 || got[0] != url {
			t.Errorf("a later turn after a restart, and /retry, sent images %q, want the photo", got)
		}
	}

	if _, err := e.db.MediaPrune(t.Context(), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	e.say("Still there?")
	last := e.model.Calls()[len(e.model.Calls())-1]
	if got := images(last); len(got) != 0 || !strings.Contains(last.Request.Messages[1].Content, "no longer kept") {
		t.Errorf("after the retention limit: images %q, first message %q", got, last.Request.Messages[1].Content)
	}
}

// Over the context budget, images leave old turns first, each with a note
// in their place; the current turn keeps its own.
func TestImagesOverBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c llmfake.Call) llmfake.Reply { return llmfake.Text("Seen.") },
		setup{config: func(c *wiring) {
			c.Vision, c.ContextTokens = true, 2000
			c.SystemPrompt = func(mcpgram.Catalog) string { return "You are mcpgram." }
		}})
	first := llm.Image{MIMEType: "image/png", Data: []byte("\x89PNG first")}
	second := llm.Image{MIMEType: "image/png", Data: []byte("\x89PNG second")}
	if _, err := e.turn(agent.Request{Caller: alice, Text: "one", Images: []llm.Image{first}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.turn(agent.Request{Caller: alice, Text: "two", Images: []llm.Image{second}}); err != nil {
		t.Fatal(err)
	}
	c := e.model.Calls()[1]
	msgs := c.Request.Messages
	if got := images(c); len(got) != 1 || got[0] != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(second.Data) {
		t.Errorf("the second turn sent images %q, want its own only", got)
	}
	if len(msgs) != 4 || !strings.HasPrefix(msgs[1].Content, "one") || !strings.Contains(msgs[1].Content, "left out to keep within the context budget") {
		t.Errorf("the old turn: %+v, want its text with a note for its image", msgs)
	}
}

// A model that does not see images gets none, each a note instead; the
// images are still kept, so that a chat that switches to a model that
// sees them sends them all.
func TestImagesWithoutVision(t *testing.T) {
	t.Parallel()
	vision := true
	e := newEnv(t, func(c llmfake.Call) llmfake.Reply { return llmfake.Text("Noted.") },
		setup{config: func(c *wiring) { c.Vision = vision }})
	img := llm.Image{MIMEType: "image/png", Data: []byte("\x89PNG")}
	if _, err := e.turn(agent.Request{Caller: alice, Text: photoText, Images: []llm.Image{img}}); err != nil {
		t.Fatal(err)
	}
	vision = false
	e.restart()
	if _, err := e.turn(agent.Request{Caller: alice, Text: "another", Images: []llm.Image{img}}); err != nil {
		t.Fatal(err)
	}
	c := e.model.Calls()[1]
	if got := images(c); len(got) != 0 || !strings.Contains(c.Request.Messages[1].Content, "this model does not see images") {
		t.Errorf("without vision: images %q, first message %q", got, c.Request.Messages[1].Content)
	}
	if h := e.history(); len(h) != 4 || len(h[2].Media) != 1 {
		t.Errorf("without vision the image was not kept: %+v", h)
	}
	vision = true
	e.restart()
	if _, err := e.turn(agent.Request{Caller: alice, Text: "and now?"}); err != nil {
		t.Fatal(err)
	}
	if got := images(e.model.Calls()[2]); len(got) != 2 {
		t.Errorf("with vision again: %d images sent, want both kept ones", len(got))
	}
}
