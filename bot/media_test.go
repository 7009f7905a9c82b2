package bot_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// transcriber is the real client against the fake endpoint: "OggS-<words>"
// is heard as <words>; "garbled" fails.
func transcriber(t *testing.T) *llm.Transcriber {
	t.Helper()
	fake := llmfake.New(t, llmfake.Script())
	fake.SetTranscriber(func(tr llmfake.Transcription) (string, int) {
		if string(tr.Audio) == "garbled" {
			return "", http.StatusBadRequest
		}
		return strings.TrimPrefix(string(tr.Audio), "OggS-"), 0
	})
	tr, err := llm.NewTranscriber(fake.URL(), "whisper-1", llm.TranscriberOptions{APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A voice note is transcribed, the user sees what was heard, and the
// model gets it as the message; what cannot be heard is said so, and no
// turn runs for it.
func TestVoice(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	h := startBot(t, fake, t.TempDir(), a, newFakeHub(1), func(c *bot.Options) { c.Transcriber = transcriber(t) })

	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "voice", MIMEType: "audio/ogg", Data: []byte("OggS-turn on the <lights>")})
	heard := waitText(t, fake, alice, "I heard")
	if !strings.Contains(heard.Plain, "turn on the <lights>") || !strings.Contains(heard.Text, "<blockquote expandable>turn on the &lt;lights&gt;</blockquote>") {
		t.Errorf("the transcript shown: %q", heard.Text)
	}
	waitText(t, fake, alice, "echo: turn on the <lights>")

	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "audio", Name: "memo.mp3", Data: []byte("OggS-second"), Caption: "From my walk:"})
	waitText(t, fake, alice, "echo: From my walk:\n\nsecond")

	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "voice", Data: []byte("garbled")})
	waitText(t, fake, alice, "could not transcribe")
	downloads := fake.Downloads()
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "voice", Data: []byte("OggS-x"), Size: tgfake.MaxDownload + 1})
	waitText(t, fake, alice, "too large for me to fetch")
	waitHandled(t, h)
	if fake.Downloads() != downloads {
		t.Error("a recording over 20 MB was downloaded")
	}
	if a.Turns("garbled") != 0 || len(a.turnsWith("x")) != 0 {
		t.Error("a turn ran for a recording that was not heard")
	}
}

// Without a transcriber, a voice note gets a clear answer and no turn.
func TestVoiceNotSetUp(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	h := startBot(t, fake, t.TempDir(), a, newFakeHub(1), nil)
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "voice", Data: []byte("OggS-hello")})
	waitText(t, fake, alice, "Voice messages are not set up")
	waitHandled(t, h)
	if len(a.turnsWith("hello")) != 0 || fake.Downloads() != 0 {
		t.Error("a voice note ran a turn or was downloaded without a transcriber")
	}
}

// A text file reaches the model with its name, fenced so that its own
// backticks cannot end the fence; other files get a clear answer.
func TestDocuments(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	h := startBot(t, fake, t.TempDir(), a, newFakeHub(1), func(c *bot.Options) { c.MaxDocumentBytes = 1000 })

	notes := "# Notes\n\n```go\nx := 1\n```\n"
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "document", Name: "notes.md", MIMEType: "text/markdown", Data: []byte(notes), Caption: "Summarise this"})
	waitText(t, fake, alice, "echo: Summarise this")
	want := "Summarise this\n\nThe user sent the file \"notes.md\":\n````\n# Notes\n\n```go\nx := 1\n```\n````"
	if got := a.turnsWith("notes.md"); len(got) != 1 || got[0] != want {
		t.Errorf("the model got %q, want %q", got, want)
	}

	for _, tt := range []struct {
		up   tgfake.Upload
		want string
	}{
		{tgfake.Upload{Name: "report.pdf", MIMEType: "application/pdf", Data: []byte("%PDF-1.7")}, "could not read that PDF"},
		{tgfake.Upload{Name: "big.txt", MIMEType: "text/plain", Data: []byte(strings.Repeat("a", 1001))}, "up to 1000 bytes"},
		{tgfake.Upload{Name: "latin1.txt", MIMEType: "text/plain", Data: []byte{'c', 'a', 'f', 0xe9}}, "not UTF-8"},
		{tgfake.Upload{Name: "blob.bin", MIMEType: "application/octet-stream", Data: []byte{1, 2}}, "not files of type application/octet-stream"},
	} {
		tt.up.ChatID, tt.up.UserID, tt.up.Kind = bob, bob, "document"
		fake.SendFile(tt.up)
		waitText(t, fake, bob, tt.want)
	}
	waitHandled(t, h)
	if n := len(a.turnsWith("")); n != 1 {
		t.Errorf("%d turns ran, want 1 (only for the Markdown file)", n)
	}
}

// A long transcript reaches the model cut at MAX_DOCUMENT_BYTES, as a text
// file is bounded, and the user sees its beginning in one message and is
// told it was cut: a 1 MB transcript was 247 messages and a 1 MB model
// input.
func TestVoiceLongTranscript(t *testing.T) {
	fake := tgfake.New(t)
	a := newFakeAgent()
	h := startBot(t, fake, t.TempDir(), a, newFakeHub(1), func(c *bot.Options) {
		c.Transcriber = transcriber(t)
		c.MaxDocumentBytes = 2048
	})
	words := strings.Repeat("blah ", 200_000)
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "voice", MIMEType: "audio/ogg", Data: []byte("OggS-" + words)})
	echo := waitText(t, fake, alice, "echo: blah blah")
	waitHandled(t, h)
	if n := len(echo.Plain); n > 2048+200 {
		t.Errorf("the model got %d bytes of the transcript, want at most MAX_DOCUMENT_BYTES and a note", n)
	}
	if !strings.Contains(echo.Plain, "cut") {
		t.Errorf("the model is not told the transcript was cut: %q", echo.Plain[len(echo.Plain)-100:])
	}
	got := botMessages(fake, alice)
	if len(got) > 3 {
		t.Errorf("the transcript took %d messages, want what was heard in one, a word that it was cut, and the answer", len(got))
	}
	heard := waitText(t, fake, alice, "I heard")
	if !strings.Contains(heard.Plain, "blah blah") || len([]rune(heard.Plain)) > 4096 {
		t.Errorf("what was heard is shown as %d characters", len([]rune(heard.Plain)))
	}
}

// A PDF sent as a document reaches the model as its text, on the real
// stack; the user is told what was left out, and a PDF that cannot be
// read gets a plain sentence and no turn.
func TestE2EPDF(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	h := s.start(nil)
	pages := make([]string, 52)
	for i := range pages {
		pages[i] = fmt.Sprintf("Page %d: the invoice total is %d EUR.", i+1, 100+i)
	}
	s.fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "document", Name: "invoice.pdf", MIMEType: "application/pdf",
		Data: testenv.PDF(pages...), Caption: "What is the total on page 2?"})
	waitText(t, s.fake, alice, "I read the first 50 of that PDF's 52 pages.")
	waitText(t, s.fake, alice, "You said: What is the total on page 2?")
	calls := s.model.Calls()
	last := calls[len(calls)-1].Request.Last()
	for _, want := range []string{"The user sent the PDF \"invoice.pdf\" (52 pages); the text of its first 50 pages:", "Page 2: the invoice total is 101 EUR.", "Page 50:"} {
		if !strings.Contains(last, want) {
			t.Errorf("the model read %.300q…, want %q in it", last, want)
		}
	}
	if strings.Contains(last, "Page 51:") {
		t.Error("the model read past the pages read")
	}
	s.fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "document", Name: "scan.pdf", MIMEType: "application/pdf",
		Data: append([]byte("%PDF-1.4\n"), strings.Repeat("not a real PDF ", 50)...)})
	waitText(t, s.fake, alice, "I could not read that PDF")
	waitHandled(t, h)
	if n := len(s.model.Calls()); n != len(calls) {
		t.Errorf("the model was called for a PDF that could not be read")
	}
}
