package bot_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// pngOf returns a real 2×2 PNG, a different one for each n.
func pngOf(t testing.TB, n int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{R: uint8(n), G: uint8(n >> 8), B: 7, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// photos returns n photo uploads from user in chat, the caption on the
// second (Telegram puts it on any one of them).
func photos(t testing.TB, chat, user int64, n, seed int, caption string) []tgfake.Upload {
	var ups []tgfake.Upload
	for i := range n {
		up := tgfake.Upload{ChatID: chat, UserID: user, Kind: "photo", Data: pngOf(t, seed+i)}
		if i == 1 || n == 1 {
			up.Caption = caption
		}
		ups = append(ups, up)
	}
	return ups
}

// lastUser is the last message of a call: the user's.
func lastUser(c llmfake.Call) llmfake.Message {
	m := c.Request.Messages
	return m[len(m)-1]
}

// An album of three photos is one turn: one model call with the three
// images and the caption, however many updates carried it.
func TestAlbum(t *testing.T) {
	a, h, db, model := realAgent(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("Three squares.") })
	fake := tgfake.New(t)
	hs := startBotWith(t, fake, db, false, a, h, func(c *bot.Options) { c.Vision, c.AlbumWait = true, 100*time.Millisecond })
	fake.SendAlbum(photos(t, alice, alice, 3, 0, "Which is darkest?")...)
	waitText(t, fake, alice, "Three squares.")
	waitHandled(t, hs)
	calls := model.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls, want 1", len(calls))
	}
	m := lastUser(calls[0])
	if len(m.Images) != 3 || !strings.HasPrefix(m.Content, "Which is darkest?") || !strings.Contains(m.Content, "[The user sent 3 photos.]") {
		t.Errorf("the model got %d images with %q", len(m.Images), m.Content)
	}
	for i, img := range m.Images {
		if !strings.HasPrefix(img, "data:image/png;base64,") {
			t.Errorf("image %d: %.40s", i, img)
		}
	}
	if n := countText(fake, alice, "Three squares."); n != 1 {
		t.Errorf("%d answers, want 1", n)
	}
}

// An album split across two getUpdates answers is still one turn: the
// first item waits for the rest (here until the user's next message shows
// the album complete, as AlbumWait is a minute), and the next message is
// answered after it.
func TestAlbumAcrossBatches(t *testing.T) {
	a, h, db, model := realAgent(t, func(c llmfake.Call) llmfake.Reply {
		if c.N == 1 {
			return llmfake.Text("Three squares.")
		}
		return llmfake.Text("You are welcome.")
	})
	fake := tgfake.New(t)
	hs := startBotWith(t, fake, db, false, a, h, func(c *bot.Options) { c.Vision, c.AlbumWait = true, time.Minute })
	ups := photos(t, alice, alice, 3, 10, "Which is darkest?")
	fake.SendAlbum(ups[:2]...)
	fake.WaitFor(t, 30*time.Second, "the first two items stored", func() bool {
		items, err := hs.db.InboxQueued(t.Context(), 0, 0)
		return err == nil && len(items) == 2 && fake.Unconfirmed() == 0
	})
	fake.SendAlbum(ups[2])
	fake.Text(alice, alice, "thanks")
	waitText(t, fake, alice, "You are welcome.")
	waitHandled(t, hs)
	calls := model.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2", len(calls))
	}
	if m := lastUser(calls[0]); len(m.Images) != 3 || !strings.HasPrefix(m.Content, "Which is darkest?") {
		t.Errorf("the album's call: %d images with %q", len(m.Images), m.Content)
	}
	if m := lastUser(calls[1]); m.Content != "thanks" || len(m.Images) != 0 {
		t.Errorf("the next message's call: %q with %d images", m.Content, len(m.Images))
	}
	msgs := fake.Messages(alice)
	first, second := -1, -1
	for i, m := range msgs {
		switch m.Plain {
		case "Three squares.":
			first = i
		case "You are welcome.":
			second = i
		}
	}
	if first < 0 || second < first {
		t.Errorf("the answers out of order: album at %d, next message at %d", first, second)
	}
}

// More items than an album holds (Telegram's 10) are answered ten at a
// time; one media group id used in two chats is an album in each.
func TestAlbumHugeAndMixed(t *testing.T) {
	a, h, db, model := realAgent(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("Seen.") })
	fake := tgfake.New(t)
	hs := startBotWith(t, fake, db, false, a, h, func(c *bot.Options) { c.Vision, c.AlbumWait = true, 100*time.Millisecond })
	fake.SendAlbum(photos(t, alice, alice, 12, 100, "Twelve")...)
	mixed := append(photos(t, bob, bob, 2, 200, "Bob's"), photos(t, -77, alice, 1, 300, "@"+tgfake.BotUser.UserName+" in the group")...)
	for i := range mixed {
		mixed[i].MediaGroupID = "shared"
	}
	fake.SendAlbum(mixed...)
	waitHandled(t, hs)
	var sizes []int
	bobs, groups := 0, 0
	for _, c := range model.Calls() {
		m := lastUser(c)
		switch {
		case strings.HasPrefix(m.Content, "Bob's"):
			bobs = len(m.Images)
		case strings.HasPrefix(m.Content, "in the group"):
			groups = len(m.Images)
		default:
			sizes = append(sizes, len(m.Images))
		}
	}
	if len(sizes) != 2 || sizes[0] != 10 || sizes[1] != 2 {
		t.Errorf("twelve items gave turns of %v images, want [10 2]", sizes)
	}
	if bobs != 2 || groups != 1 {
		t.Errorf("one media group id in two chats: bob's turn had %d images (want 2), the group's %d (want 1)", bobs, groups)
	}
	if n := len(model.Calls()); n != 4 {
		t.Errorf("%d model calls, want 4", n)
	}
}

// An image sent as a file is read as a photo; a file that claims to be an
// image and is not, a type models do not take and a file over the limit
// (refused before the download, or cut off by it) each get a clear
// answer and no turn. Names never reach the media folder: it holds the
// images by hash alone.
func TestImageDocuments(t *testing.T) {
	a, h, db, model := realAgent(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("A square.") })
	fake := tgfake.New(t)
	hs := startBotWith(t, fake, db, false, a, h, func(c *bot.Options) { c.Vision = true })
	img := pngOf(t, 1)
	fake.SendFile(tgfake.Upload{ChatID: alice, UserID: alice, Kind: "document", Name: "../../../etc/passwd.png", MIMEType: "image/png", Data: img, Caption: "What is it?"})
	waitText(t, fake, alice, "A square.")
	if m := lastUser(model.Calls()[0]); len(m.Images) != 1 || !strings.HasPrefix(m.Content, "What is it?") {
		t.Errorf("the model got %d images with %q", len(m.Images), m.Content)
	}
	entries, err := os.ReadDir(filepath.Join(hs.dbDir, "media"))
	if err != nil || len(entries) != 1 || entries[0].Name() != store.MediaHash(img) {
		t.Errorf("the media folder holds %v, %v; want the image's hash alone", entries, err)
	}

	downloads := fake.Downloads()
	fake.SendFile(tgfake.Upload{ChatID: bob, UserID: bob, Kind: "document", Name: "huge.png", MIMEType: "image/png", Data: img, Size: 11 << 20})
	waitText(t, fake, bob, "too large")
	waitHandled(t, hs)
	if fake.Downloads() != downloads {
		t.Error("an image Telegram reports over the limit was downloaded")
	}
	for _, tt := range []struct {
		up   tgfake.Upload
		want string
	}{
		{tgfake.Upload{Name: "fake.png", MIMEType: "image/png", Data: []byte("just some text, honestly")}, "not an image I can read"},
		{tgfake.Upload{Name: "cut.png", MIMEType: "image/png", Data: img[:20]}, "not an image I can read"},
		{tgfake.Upload{Name: "scan.tiff", MIMEType: "image/tiff", Data: []byte("II*\x00")}, "not images of type image/tiff"},
		{tgfake.Upload{Name: "lies.png", MIMEType: "image/png", Data: append(append([]byte{}, img...), make([]byte, 10<<20)...), Size: 100}, "too large"},
	} {
		tt.up.ChatID, tt.up.UserID, tt.up.Kind = bob, bob, "document"
		fake.SendFile(tt.up)
		waitText(t, fake, bob, tt.want)
	}
	waitHandled(t, hs)
	if n := len(model.Calls()); n != 1 {
		t.Errorf("%d model calls, want 1 (only for the real image)", n)
	}
}

// The images users sent are deleted once older than MEDIA_RETENTION.
func TestMediaRetention(t *testing.T) {
	a, h, db, _ := realAgent(t, func(llmfake.Call) llmfake.Reply { return llmfake.Text("ok") })
	ref, err := db.MediaPut(t.Context(), "image/png", pngOf(t, 5))
	if err != nil {
		t.Fatal(err)
	}
	// The cut-off is to the millisecond: let one pass, so that a
	// retention of a nanosecond leaves the image behind it.
	stored, err := db.MediaGet(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	for time.Now().UnixMilli() < stored.StoredAt.UnixMilli()+2 {
		time.Sleep(time.Millisecond)
	}
	fake := tgfake.New(t)
	hs := startBotWith(t, fake, db, false, a, h, func(c *bot.Options) { c.MediaRetention = time.Nanosecond })
	fake.WaitFor(t, 30*time.Second, "the retention's log line", func() bool {
		return strings.Contains(hs.log.String(), "deleted images past MEDIA_RETENTION")
	})
	if _, err := db.MediaGet(t.Context(), ref); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an image past the retention: %v, want ErrNotFound", err)
	}
}

// albumAgent counts the images of each turn; its first turn waits for
// block, or its end.
type albumAgent struct {
	fakeSettings
	mu      sync.Mutex
	turns   []string // text and image count of each turn
	started chan struct{}
	block   chan struct{}
}

func (a *albumAgent) Turn(ctx context.Context, req agent.Request, emit func(agent.Event)) error {
	a.mu.Lock()
	a.turns = append(a.turns, fmt.Sprintf("%s (%d images)", strings.SplitN(req.Text, "\n", 2)[0], len(req.Images)))
	first := len(a.turns) == 1
	a.mu.Unlock()
	if first {
		close(a.started)
		select {
		case <-ctx.Done():
			emit(agent.Event{Kind: agent.EventError, Text: "Stopped."})
			return ctx.Err()
		case <-a.block:
		}
	}
	emit(agent.Event{Kind: agent.EventAnswer, Text: fmt.Sprintf("seen %q with %d images", req.Text, len(req.Images))})
	return nil
}

func (a *albumAgent) Reset(context.Context, string) error { return nil }
func (a *albumAgent) Expire(context.Context, time.Time, func(string) func(agent.Event)) error {
	return nil
}

// A restart in the middle of an album's turn replays the whole album as
// one turn, once, and the chat's next message after it: no item is lost,
// none answered alone or twice.
func TestAlbumRestart(t *testing.T) {
	fake := tgfake.New(t)
	dir := t.TempDir()
	a := &albumAgent{started: make(chan struct{}), block: make(chan struct{})}
	edit := func(c *bot.Options) {
		c.Vision, c.AlbumWait, c.ShutdownGrace = true, 100*time.Millisecond, 100*time.Millisecond
	}
	h1 := startBot(t, fake, dir, a, newFakeHub(1), edit)
	fake.SendAlbum(photos(t, alice, alice, 3, 400, "Look")...)
	fake.Text(alice, alice, "after")
	<-a.started
	fake.WaitFor(t, 5*time.Second, "batch confirmed", func() bool { return fake.Unconfirmed() == 0 })
	h1.stopWant(bot.ErrCutShort)

	close(a.block)
	waitHandled(t, startBot(t, fake, dir, a, newFakeHub(1), edit))
	a.mu.Lock()
	turns := slices.Clone(a.turns)
	a.mu.Unlock()
	if want := []string{"Look (3 images)", "Look (3 images)", "after (0 images)"}; !slices.Equal(turns, want) {
		t.Errorf("turns %q, want %q (the first cut short by the stop)", turns, want)
	}
	if n := countText(fake, alice, "with 3 images"); n != 1 {
		t.Errorf("the album answered %d times, want 1", n)
	}
}
