package media_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"log/slog"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/media"
)

func encoded(t *testing.T, enc func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := enc(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// An image is what its bytes say, not what its name or type claim.
func TestCheckImage(t *testing.T) {
	pngData := encoded(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) })
	jpegData := encoded(t, func(b *bytes.Buffer, i image.Image) error { return jpeg.Encode(b, i, nil) })
	gifData := encoded(t, func(b *bytes.Buffer, i image.Image) error { return gif.Encode(b, i, nil) })
	webp := append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), make([]byte, 24)...)
	for _, tt := range []struct {
		name string
		data []byte
		mime string
		ok   bool
	}{
		{"png", pngData, "image/png", true},
		{"jpeg", jpegData, "image/jpeg", true},
		{"gif", gifData, "image/gif", true},
		{"webp", webp, "image/webp", true},
		{"text", []byte("hello, I am a PNG"), "text/plain; charset=utf-8", false},
		{"png cut in its header", pngData[:12], "image/png", false},
		{"bmp", []byte("BM\x00\x00\x00\x00\x00\x00\x00\x00"), "image/bmp", false},
		{"empty", nil, "text/plain; charset=utf-8", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if mime, ok := media.CheckImage(tt.data); mime != tt.mime || ok != tt.ok {
				t.Errorf("CheckImage = %q, %v; want %q, %v", mime, ok, tt.mime, tt.ok)
			}
		})
	}
}

// files is a Downloader of fixed files.
type files map[string][]byte

func (f files) Download(ctx context.Context, id string, limit int64) ([]byte, string, error) {
	return f[id], "", nil
}

func photo(id, caption string) *tgbotapi.Message {
	return &tgbotapi.Message{Chat: &tgbotapi.Chat{ID: 1}, Caption: caption, MediaGroupID: "g",
		Photo: []tgbotapi.PhotoSize{{FileID: id, FileSize: 100}}}
}

// An album's items are read together: its captions first, its images
// together; what cannot be read is pointed out while the rest goes on.
func TestReadAlbum(t *testing.T) {
	img := encoded(t, func(b *bytes.Buffer, i image.Image) error { return png.Encode(b, i) })
	f := files{"a": img, "b": img, "bad": []byte("not an image")}
	seeing := &media.Reader{Files: f, Vision: true, Logger: slog.New(slog.DiscardHandler)}
	blind := &media.Reader{Files: f, Logger: slog.New(slog.DiscardHandler)}
	video := &tgbotapi.Message{Chat: &tgbotapi.Chat{ID: 1}, MediaGroupID: "g", Video: &tgbotapi.Video{FileID: "v"}}

	res := seeing.ReadAlbum(t.Context(), []*tgbotapi.Message{photo("a", ""), photo("b", "Compare them")})
	if res.Text != "Compare them\n\n[The user sent 2 photos.]" || len(res.Images) != 2 || res.Problem != "" || res.Notice != "" {
		t.Errorf("two photos: %+v", res)
	}
	res = seeing.ReadAlbum(t.Context(), []*tgbotapi.Message{photo("a", "Look"), photo("bad", ""), video})
	if !strings.HasPrefix(res.Text, "Look") || len(res.Images) != 1 || !strings.Contains(res.Notice, "could not read 2 of the album's 3 items") {
		t.Errorf("a photo, a false image and a video: %+v", res)
	}
	res = seeing.ReadAlbum(t.Context(), []*tgbotapi.Message{photo("bad", ""), video})
	if res.Problem == "" || res.Text != "" || len(res.Images) != 0 {
		t.Errorf("nothing readable: %+v", res)
	}
	res = blind.ReadAlbum(t.Context(), []*tgbotapi.Message{photo("a", "Look"), photo("b", "")})
	if res.Text != "Look" || len(res.Images) != 0 || !strings.Contains(res.Notice, "cannot see images") {
		t.Errorf("a model without vision, with a caption: %+v", res)
	}
	if res = blind.ReadAlbum(t.Context(), []*tgbotapi.Message{photo("a", "")}); res.Problem == "" {
		t.Errorf("a model without vision, no caption: %+v", res)
	}
}
