package media

import (
	"context"
	"fmt"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// ReadAlbum reads the items of an album (messages sharing a media group)
// as one message: the captions first, then what each item carries, its
// images together. An item it cannot read is named in a Notice while the
// rest goes on; when it can read none, Problem says why.
func (r *Reader) ReadAlbum(ctx context.Context, items []*tgbotapi.Message) Result {
	var captions, parts, heard, problems []string
	var res Result
	unseen := 0
	for _, m := range items {
		if c := strings.TrimSpace(m.Caption); c != "" {
			captions = append(captions, c)
		}
		bare := *m
		bare.Caption, bare.CaptionEntities = "", nil
		if !r.Vision && (len(m.Photo) > 0 || (m.Document != nil && imageFile(m.Document.FileName, m.Document.MimeType))) {
			unseen++
			continue
		}
		one, ok := r.Read(ctx, &bare)
		switch {
		case !ok:
			problems = append(problems, "I can read photos, images, recordings and text files, not videos or this kind of item.")
		case one.Problem != "":
			problems = append(problems, one.Problem)
		default:
			parts = append(parts, one.Text)
			res.Images = append(res.Images, one.Images...)
			if one.Heard != "" {
				heard = append(heard, one.Heard)
			}
		}
	}
	caption := strings.Join(captions, "\n\n")
	res.Heard = strings.Join(heard, "\n\n")
	var notices []string
	if unseen > 0 {
		if caption == "" && len(parts) == 0 {
			return Result{Problem: "This bot's model cannot see images. Please describe the pictures in words."}
		}
		notices = append(notices, "(This bot's model cannot see images: I read the album without them.)")
	}
	if len(problems) > 0 {
		if caption == "" && len(parts) == 0 {
			return Result{Problem: problems[0]}
		}
		notices = append(notices, fmt.Sprintf("I could not read %d of the album's %d items: %s", len(problems), len(items), problems[0]))
	}
	res.Notice = strings.Join(notices, "\n")
	if len(parts) == 0 {
		res.Text = caption
		res.Images = nil
		return res
	}
	res.Text = joinCaption(caption, collapse(parts))
	return res
}

// collapse joins the items' texts, an album of photos in one note.
func collapse(parts []string) string {
	photos := 0
	for _, p := range parts {
		if p == photoMark {
			photos++
		}
	}
	if photos == len(parts) && photos > 1 {
		return fmt.Sprintf("[The user sent %d photos.]", photos)
	}
	return strings.Join(parts, "\n\n")
}
