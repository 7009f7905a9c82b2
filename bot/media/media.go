// Package media turns what a Telegram message carries besides its text
// into what the model reads: a recording's transcript (voice notes, audio,
// video notes), a text file's content with its name, a PDF's text (read
// in a child process, see pdf.go), an image (a photo, or
// an image sent as a file) for a model that sees them; an album's items
// together. What it cannot read, it explains in one sentence for the
// user, and nothing is sent to the model then.
package media

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // image.DecodeConfig checks GIF, JPEG and PNG headers
	_ "image/jpeg"
	_ "image/png"
	"log/slog"
	"net/http"
	"path"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/internal/lines"
	"github.com/mcpgram/mcpgram/llm"
)

// A Transcriber turns speech into text; *llm.Transcriber is one.
type Transcriber interface {
	Transcribe(ctx context.Context, name string, audio []byte) (string, error)
}

// A Downloader fetches a file a user sent; *telegram.Client is one.
type Downloader interface {
	Download(ctx context.Context, fileID string, limit int64) ([]byte, string, error)
}

// A Reader reads messages' files. Transcriber may be nil: recordings are
// then answered that voice messages are not set up.
type Reader struct {
	Files       Downloader
	Transcriber Transcriber
	// MaxDocument caps the text files read, in bytes.
	MaxDocument int
	// Vision says the model sees images: photos then go to it.
	Vision bool
	// PDFTimeout and PDFMemory bound reading one PDF; defaults
	// PDFTimeout and PDFMemory.
	PDFTimeout time.Duration
	PDFMemory  int
	// MaxPDFReaders caps the PDFs read at once, each a child process
	// busy on a CPU: the others wait their turn, or their context's end.
	// 0: the number of CPUs.
	MaxPDFReaders int
	Logger        *slog.Logger

	pdfOnce  sync.Once
	pdfSlots chan struct{}
	// pdfWaiting and pdfReading, when set (by tests), are called as a
	// PDF waits for a reader's turn and once it has one.
	pdfWaiting, pdfReading func()
}

// A Result is what a message carried.
type Result struct {
	// Text is for the model, with the caption before it; "" when there is
	// nothing to send.
	Text string
	// Heard is a recording's transcript, to show the user.
	Heard string
	// Images go to the model with Text.
	Images []llm.Image
	// Problem, when not "", is why the message cannot be read, for the
	// user; Notice, a word for the user while Text still goes on.
	Problem, Notice string
}

// MaxAudioBytes is what the cloud Bot API lets a bot download.
const MaxAudioBytes = 20 << 20

// Read reads what m carries; ok is false when it carries nothing this
// package reads (text, photos, stickers…).
func (r *Reader) Read(ctx context.Context, m *tgbotapi.Message) (res Result, ok bool) {
	switch {
	case m.Voice != nil:
		return r.transcribe(ctx, m, m.Voice.FileID, m.Voice.FileSize, "voice.ogg"), true
	case m.VideoNote != nil:
		return r.transcribe(ctx, m, m.VideoNote.FileID, m.VideoNote.FileSize, "video_note.mp4"), true
	case m.Audio != nil:
		name := m.Audio.FileName
		if name == "" {
			name = "audio.mp3"
		}
		return r.transcribe(ctx, m, m.Audio.FileID, m.Audio.FileSize, name), true
	case m.Document != nil && imageFile(m.Document.FileName, m.Document.MimeType):
		return r.image(ctx, m, m.Document.FileID, m.Document.FileSize, "image"), true
	case m.Document != nil:
		return r.document(ctx, m), true
	case len(m.Photo) > 0:
		best := m.Photo[len(m.Photo)-1]
		for _, p := range m.Photo {
			if p.FileSize > best.FileSize && p.FileSize <= MaxImageBytes {
				best = p
			}
		}
		return r.image(ctx, m, best.FileID, best.FileSize, "photo"), true
	}
	return Result{}, false
}

// transcribe fetches a recording and returns what was heard.
func (r *Reader) transcribe(ctx context.Context, m *tgbotapi.Message, fileID string, size int, name string) Result {
	if r.Transcriber == nil {
		return Result{Problem: "Voice messages are not set up on this bot (the operator can set TRANSCRIPTION_MODEL). Please type your message."}
	}
	if size > MaxAudioBytes {
		return Result{Problem: "That recording is too large for me to fetch (over 20 MB). Please send a shorter one, or type your message."}
	}
	audio, _, err := r.Files.Download(ctx, fileID, MaxAudioBytes)
	if err != nil {
		r.Logger.Error("download a recording", "chat", m.Chat.ID, "err", err)
		return Result{Problem: downloadProblem(err, "recording")}
	}
	heard, err := r.Transcriber.Transcribe(ctx, name, audio)
	if err != nil {
		r.Logger.Error("transcribe a recording", "chat", m.Chat.ID, "err", err)
		return Result{Problem: "Sorry, I could not transcribe that recording. Please try again, or type your message."}
	}
	heard = strings.TrimSpace(heard)
	if heard == "" {
		return Result{Problem: "I could not make out any words in that recording."}
	}
	if len(heard) <= r.MaxDocument {
		return Result{Text: joinCaption(m.Caption, heard), Heard: heard}
	}
	// A transcript is bounded as a text file is: a long recording's
	// whole transcript would fill the model's context, and the chat.
	cut := cutText(heard, r.MaxDocument)
	note := fmt.Sprintf("\n\n[The transcript was cut here, at %s of %s.]", sizeText(len(cut)), sizeText(len(heard)))
	return Result{
		Text: joinCaption(m.Caption, cut+note), Heard: cut,
		Notice: fmt.Sprintf("That recording's transcript is long: I read its first %s.", sizeText(len(cut))),
	}
}

// cutText cuts s to at most n bytes, at a space when there is one in the
// last tenth, else at a rune's start.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if i := strings.LastIndexByte(s[:n], ' '); i > n-n/10 {
		n = i
	}
	return strings.TrimSpace(s[:n])
}

// document reads a text file for the model: its name and its content,
// fenced so that nothing in it reads as the message's own structure.
func (r *Reader) document(ctx context.Context, m *tgbotapi.Message) Result {
	d, limit := m.Document, r.MaxDocument
	tooLarge := Result{Problem: fmt.Sprintf("That file is too large for me: I read text files of up to %s.", sizeText(limit))}
	if pdfLike(d.FileName, d.MimeType) {
		return r.pdfDocument(ctx, m)
	}
	if !textLike(d.FileName, d.MimeType) {
		return Result{Problem: fmt.Sprintf("I can read text files (plain text, Markdown, CSV, JSON, YAML, source code) and PDFs, not %s. Please send the text, or a text file.", kindOf(d.FileName, d.MimeType))}
	}
	if d.FileSize > limit {
		return tooLarge
	}
	data, _, err := r.Files.Download(ctx, d.FileID, int64(limit))
	if errors.Is(err, telegram.ErrTooBig) {
		return tooLarge
	}
	if err != nil {
		r.Logger.Error("download a document", "chat", m.Chat.ID, "err", err)
		return Result{Problem: downloadProblem(err, "file")}
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		return Result{Problem: "That file is not text I can read (it is not UTF-8). Please send it as plain text."}
	}
	name := d.FileName
	if name == "" {
		name = "file"
	}
	return Result{Text: joinCaption(m.Caption, fenced(fmt.Sprintf("The user sent the file %q:", name), string(data)))}
}

// fenced is a file's text after a line that says what it is, fenced so
// that nothing in it reads as the message's own structure.
func fenced(intro, body string) string {
	body = strings.TrimRight(body, "\n")
	fence := lines.Fence(body)
	return fmt.Sprintf("%s\n%s\n%s\n%s", intro, fence, body, fence)
}

// pdfLike reports whether a document is a PDF, by its type, or its name
// when Telegram gives no type.
func pdfLike(name, mime string) bool {
	mime = strings.ToLower(mime)
	if mime != "" && mime != "application/octet-stream" {
		return mime == "application/pdf"
	}
	return strings.EqualFold(path.Ext(name), ".pdf")
}

// pdfDocument reads a PDF's text for the model (see pdf.go): the first
// MaxPDFPages pages, up to MaxDocument bytes of text, the user told what
// was left out; a PDF it cannot read gets a sentence saying so.
func (r *Reader) pdfDocument(ctx context.Context, m *tgbotapi.Message) Result {
	d := m.Document
	tooLarge := Result{Problem: fmt.Sprintf("That PDF is too large for me: I read PDFs of up to %d MB.", MaxPDFBytes>>20)}
	if d.FileSize > MaxPDFBytes {
		return tooLarge
	}
	data, _, err := r.Files.Download(ctx, d.FileID, MaxPDFBytes)
	if errors.Is(err, telegram.ErrTooBig) {
		return tooLarge
	}
	if err != nil {
		r.Logger.Error("download a PDF", "chat", m.Chat.ID, "err", err)
		return Result{Problem: downloadProblem(err, "PDF")}
	}
	if !bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")) {
		return Result{Problem: "That file is not a PDF I can read: it does not start as a PDF does. Please send its text instead."}
	}
	release, err := r.pdfTurn(ctx)
	if err != nil {
		r.Logger.Warn("read a PDF", "chat", m.Chat.ID, "bytes", len(data), "err", err)
		return Result{Problem: "I stopped before reading that PDF. Please send it again."}
	}
	defer release()
	timeout := cmp.Or(r.PDFTimeout, PDFTimeout)
	doc, err := readPDF(ctx, data, MaxPDFPages, r.MaxDocument, timeout, cmp.Or(r.PDFMemory, PDFMemory))
	switch {
	case errors.Is(err, errPDFEncrypted):
		return Result{Problem: "That PDF is protected with a password, so I cannot read it. Please send it without the password, or send its text."}
	case errors.Is(err, errPDFEncryption):
		return Result{Problem: "That PDF is encrypted in a way I cannot read. Please send it without the encryption, or send its text."}
	case err != nil:
		r.Logger.Warn("read a PDF", "chat", m.Chat.ID, "bytes", len(data), "err", err)
		return Result{Problem: "I could not read that PDF: it may be damaged, or made in a way I cannot read. Please send its text instead."}
	case strings.TrimSpace(doc.Text) == "":
		return Result{Problem: "That PDF has no text I can read: its pages may be scanned images. Please send its text instead."}
	}
	name := cmp.Or(d.FileName, "document.pdf")
	intro := fmt.Sprintf("The user sent the PDF %q (%s); its text:", name, render.Count(doc.Pages, "page"))
	var notice string
	switch {
	case doc.Cut:
		intro = fmt.Sprintf("The user sent the PDF %q (%s); the first %s of its text:", name, render.Count(doc.Pages, "page"), sizeText(r.MaxDocument))
		notice = fmt.Sprintf("(That PDF's text is long: I read its first %s, up to page %d of %d.)", sizeText(r.MaxDocument), doc.Read, doc.Pages)
	case doc.Read < doc.Pages:
		intro = fmt.Sprintf("The user sent the PDF %q (%s); the text of its first %d pages:", name, render.Count(doc.Pages, "page"), doc.Read)
		notice = fmt.Sprintf("(I read the first %d of that PDF's %d pages.)", doc.Read, doc.Pages)
	}
	return Result{Text: joinCaption(m.Caption, fenced(intro, doc.Text)), Notice: notice}
}

// pdfTurn waits until fewer than MaxPDFReaders PDFs are being read, or
// ctx ends; release ends the turn.
func (r *Reader) pdfTurn(ctx context.Context) (release func(), err error) {
	r.pdfOnce.Do(func() {
		n := r.MaxPDFReaders
		if n <= 0 {
			n = runtime.NumCPU()
		}
		r.pdfSlots = make(chan struct{}, max(n, 1))
	})
	select {
	case r.pdfSlots <- struct{}{}:
	default:
		if r.pdfWaiting != nil {
			r.pdfWaiting()
		}
		select {
		case r.pdfSlots <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for a PDF reader: %w", ctx.Err())
		}
	}
	if r.pdfReading != nil {
		r.pdfReading()
	}
	return func() { <-r.pdfSlots }, nil
}

// MaxImageBytes is the largest image sent to a model: OpenAI's limit is
// 20 MB, and a photo Telegram compressed is far smaller.
const MaxImageBytes = 10 << 20

// photoMark stands for an image in the stored message.
const photoMark = "[The user sent a photo.]"

// imageTypes are the image types models take (OpenAI, Anthropic, Gemini).
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/webp": true, "image/gif": true}

var imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".webp": true, ".gif": true}

// imageFile reports whether a document is an image a model takes, by its
// type, or its name when Telegram gives no type.
func imageFile(name, mime string) bool {
	mime = strings.ToLower(mime)
	if mime != "" && mime != "application/octet-stream" {
		return imageTypes[mime]
	}
	return imageExts[strings.ToLower(path.Ext(name))]
}

// image fetches an image for a model that sees images, checking that it
// is one (what is claimed is not trusted); for a model that does not,
// only the caption goes on. what names it for the user: "photo", "image".
func (r *Reader) image(ctx context.Context, m *tgbotapi.Message, fileID string, size int, what string) Result {
	caption := strings.TrimSpace(m.Caption)
	if !r.Vision {
		if caption == "" {
			return Result{Problem: "This bot's model cannot see images. Please describe the picture in words."}
		}
		return Result{Text: caption, Notice: "(This bot's model cannot see images: I read only the caption.)"}
	}
	tooLarge := Result{Problem: fmt.Sprintf("That %s is too large for me to send to the model (over %d MB). Please send a smaller one.", what, MaxImageBytes>>20)}
	if size > MaxImageBytes {
		return tooLarge
	}
	data, _, err := r.Files.Download(ctx, fileID, MaxImageBytes)
	if errors.Is(err, telegram.ErrTooBig) {
		return tooLarge
	}
	if err != nil {
		r.Logger.Error("download an image", "chat", m.Chat.ID, "err", err)
		return Result{Problem: downloadProblem(err, what)}
	}
	mime, ok := CheckImage(data)
	if !ok {
		return Result{Problem: fmt.Sprintf("That %s is not an image I can read: I take JPEG, PNG, WebP and GIF images.", what)}
	}
	return Result{Text: joinCaption(caption, photoMark), Images: []llm.Image{{MIMEType: mime, Data: data}}}
}

// CheckImage reports the type of an image from its bytes, and whether it
// is one a model takes whose header reads as that type: a file's claimed
// type and name are the sender's word, not the image's.
func CheckImage(data []byte) (string, bool) {
	mime := http.DetectContentType(data)
	if !imageTypes[mime] {
		return mime, false
	}
	if mime == "image/webp" {
		return mime, true // no WebP decoder in the standard library; the sniffed header is RIFF....WEBPVP
	}
	_, _, err := image.DecodeConfig(bytes.NewReader(data))
	return mime, err == nil
}

func downloadProblem(err error, what string) string {
	if errors.Is(err, telegram.ErrTooBig) {
		return "That " + what + " is too large for me to fetch (over 20 MB)."
	}
	return "Sorry, I could not fetch that " + what + " from Telegram. Please try again."
}

// joinCaption puts the caption, the user's own words, before the rest.
func joinCaption(caption, rest string) string {
	if c := strings.TrimSpace(caption); c != "" {
		return c + "\n\n" + rest
	}
	return rest
}

// textExts are the extensions of files read as text whatever their type.
var textExts = map[string]bool{
	".txt": true, ".md": true, ".markdown": true, ".csv": true, ".tsv": true, ".json": true, ".jsonl": true,
	".yaml": true, ".yml": true, ".toml": true, ".ini": true, ".xml": true, ".log": true, ".sql": true,
	".html": true, ".css": true, ".go": true, ".py": true, ".js": true, ".ts": true, ".tsx": true, ".jsx": true,
	".java": true, ".kt": true, ".c": true, ".h": true, ".cpp": true, ".hpp": true, ".cs": true, ".rs": true,
	".rb": true, ".php": true, ".sh": true, ".swift": true, ".lua": true, ".r": true, ".tex": true, ".diff": true, ".patch": true,
}

// textLike reports whether a file is one the bot reads as text.
func textLike(name, mime string) bool {
	mime = strings.ToLower(mime)
	switch {
	case strings.HasPrefix(mime, "text/"),
		mime == "application/json", mime == "application/xml", mime == "application/x-yaml", mime == "application/yaml",
		mime == "application/javascript", mime == "application/x-sh", mime == "application/sql", mime == "application/toml":
		return true
	}
	return textExts[strings.ToLower(path.Ext(name))]
}

// kindOf names a file's kind for a refusal.
func kindOf(name, mime string) string {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return "images of type " + mime + " (I take JPEG, PNG, WebP and GIF)"
	case mime != "":
		return "files of type " + mime
	}
	return "this kind of file"
}

func sizeText(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KB", (n+1<<9)>>10)
}
