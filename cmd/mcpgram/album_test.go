package main_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/store/postgres"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// An album posted by webhook, one update per request, to `mcpgram run` on
// PostgreSQL is one turn with its three images, which stay in the
// database by reference, readable by any instance sharing it.
func TestRunAlbumWebhookPostgreSQL(t *testing.T) {
	dsn := testenv.Postgres(t)
	path := settings(t, nil)
	tg := tgfake.New(t)
	llm := llmfake.New(t, llmfake.Script(llmfake.Text(`<attempt_completion><result>Three squares.</result></attempt_completion>`)))
	e := runEnv(t, tg, llm.URL())
	const secret = "webhook-Secret_123"
	e["TELEGRAM_MODE"], e["TELEGRAM_WEBHOOK_SECRET"], e["HTTP_LISTEN"] = "webhook", secret, freeAddr(t)
	e["DATABASE_URL"], e["MODEL_VISION"] = dsn, "true"
	resp, err := http.PostForm(tg.URL()+"/bot"+tgfake.Token+"/setWebhook", map[string][]string{
		"url": {"http://" + e["HTTP_LISTEN"] + "/telegram"}, "secret_token": {secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, stop := startRun(t, e, path)
	defer stop()

	ups := album(t, 42, 3, "Which is darkest?")
	tg.SendAlbum(ups...)
	tg.WaitText(t, 42, "Three squares.")
	calls := llm.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls, want 1", len(calls))
	}
	msgs := calls[0].Request.Messages
	if last := msgs[len(msgs)-1]; len(last.Images) != 3 {
		t.Errorf("the model got %d images, want 3", len(last.Images))
	}

	db, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	conv, err := db.CurrentConversation(t.Context(), "42")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.Messages(t.Context(), conv)
	if err != nil || len(stored) == 0 || len(stored[0].Media) != 3 {
		t.Fatalf("the stored album: %+v, %v", stored, err)
	}
	for i, ref := range stored[0].Media {
		if m, err := db.MediaGet(t.Context(), ref); err != nil || !bytes.Equal(m.Data, ups[i].Data) {
			t.Errorf("image %d from the database: %v", i, err)
		}
	}
}

// album is n photo uploads from user chat in its private chat, the
// caption on the first.
func album(t *testing.T, chat int64, n int, caption string) []tgfake.Upload {
	t.Helper()
	var ups []tgfake.Upload
	for i := range n {
		img := image.NewRGBA(image.Rect(0, 0, 2, 2))
		img.Set(1, 1, color.RGBA{R: uint8(40 * i), G: uint8(chat), A: 255})
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		ups = append(ups, tgfake.Upload{ChatID: chat, UserID: chat, Kind: "photo", Data: buf.Bytes()})
	}
	ups[0].Caption = caption
	return ups
}

// Two instances behind a round-robin proxy get an album's updates in
// turn, one here, one there: the instance that holds the chat gathers
// them from the shared inbox, and each album is one turn with its images.
func TestScaleAlbumAcrossInstances(t *testing.T) {
	t.Parallel()
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		m := c.Request.Messages
		return llmfake.Text(fmt.Sprintf("<attempt_completion><result>%d images</result></attempt_completion>", len(m[len(m)-1].Images)))
	})
	cl := startCluster(t, 2, model, nil, "MODEL_VISION=true")
	const chats = 4
	for c := range int64(chats) {
		id := scaleFirst + c
		cl.tg.SendAlbum(album(t, id, 3, fmt.Sprint("album of chat ", id))...)
	}
	for c := range int64(chats) {
		cl.tg.WaitText(t, scaleFirst+c, "3 images")
	}
	// An item is marked done after its answer is sent; a clean stop
	// flushes the marks, so the inbox is read once both have stopped.
	cl.stop(t, 0)
	cl.stop(t, 1)
	cl.backlog(t)
	if n := len(model.Calls()); n != chats {
		t.Errorf("%d model calls for %d albums, want one each", n, chats)
	}
	for c := range int64(chats) {
		for _, m := range cl.tg.Messages(scaleFirst + c) {
			if m.FromID == tgfake.BotUser.ID && strings.Contains(m.Plain, "images") && !strings.Contains(m.Plain, "3 images") {
				t.Errorf("chat %d was answered %q: an album split", scaleFirst+c, m.Plain)
			}
		}
	}
}
