package bot

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/internal/lines"
)

// A Transcriber turns speech into text; *llm.Transcriber is one.
type Transcriber interface {
	Transcribe(ctx context.Context, name string, audio []byte) (string, error)
}

// maxAudioBytes is what the cloud Bot API lets a bot download.
const maxAudioBytes = 20 << 20

// mediaText turns what a message carries besides its text into text for
// the model: a recording's transcript, or a text file's content with its
// name. ok is false when the message carries nothing the bot reads, or
// when the bot has already told the user why it cannot read it.
func (b *Bot) mediaText(ctx context.Context, m *tgbotapi.Message) (text string, ok bool) {
	switch {
	case m.Voice != nil:
		return b.transcribe(ctx, m, m.Voice.FileID, m.Voice.FileSize, "voice.ogg")
	case m.VideoNote != nil:
		return b.transcribe(ctx, m, m.VideoNote.FileID, m.VideoNote.FileSize, "video_note.mp4")
	case m.Audio != nil:
		name := m.Audio.FileName
		if name == "" {
			name = "audio.mp3"
		}
		return b.transcribe(ctx, m, m.Audio.FileID, m.Audio.FileSize, name)
	case m.Document != nil:
		return b.document(ctx, m)
	}
	return "", false
}

// transcribe fetches a recording, shows the user what was heard, and
// returns it with the caption, if any.
func (b *Bot) transcribe(ctx context.Context, m *tgbotapi.Message, fileID string, size int, name string) (string, bool) {
	chatID := m.Chat.ID
	if b.cfg.Transcriber == nil {
		b.say(ctx, chatID, "Voice messages are not set up on this bot (the operator can set TRANSCRIPTION_MODEL). Please type your message.")
		return "", false
	}
	if size > maxAudioBytes {
		b.say(ctx, chatID, "That recording is too large for me to fetch (over 20 MB). Please send a shorter one, or type your message.")
		return "", false
	}
	audio, _, err := b.tg.Download(ctx, fileID, maxAudioBytes)
	if err != nil {
		b.logger.Error("download a recording", "chat", chatID, "err", err)
		b.say(ctx, chatID, b.downloadProblem(err, "recording"))
		return "", false
	}
	heard, err := b.cfg.Transcriber.Transcribe(ctx, name, audio)
	if err != nil {
		b.logger.Error("transcribe a recording", "chat", chatID, "err", err)
		b.say(ctx, chatID, "Sorry, I could not transcribe that recording. Please try again, or type your message.")
		return "", false
	}
	if strings.TrimSpace(heard) == "" {
		b.say(ctx, chatID, "I could not make out any words in that recording.")
		return "", false
	}
	shown := "🎤 <i>I heard:</i>\n<blockquote expandable>" + render.Escape(heard) + "</blockquote>"
	if _, err := b.tg.SendLong(ctx, chatID, m.MessageID, shown, nil); err != nil {
		b.logger.Error("send the transcript", "chat", chatID, "err", err)
	}
	return joinCaption(m.Caption, heard), true
}

// document reads a text file for the model: its name and its content,
// fenced so that nothing in it reads as the message's own structure.
func (b *Bot) document(ctx context.Context, m *tgbotapi.Message) (string, bool) {
	d, chatID := m.Document, m.Chat.ID
	limit := b.cfg.MaxDocumentBytes
	if !textLike(d.FileName, d.MimeType) {
		b.say(ctx, chatID, fmt.Sprintf("I can read text files (plain text, Markdown, CSV, JSON, YAML, source code), not %s. Please send the text, or a text file.", render.Escape(kindOf(d.FileName, d.MimeType))))
		return "", false
	}
	if d.FileSize > limit {
		b.say(ctx, chatID, fmt.Sprintf("That file is too large for me: I read text files of up to %s.", sizeText(limit)))
		return "", false
	}
	data, _, err := b.tg.Download(ctx, d.FileID, int64(limit))
	if err != nil {
		b.logger.Error("download a document", "chat", chatID, "err", err)
		if errors.Is(err, telegram.ErrTooBig) {
			b.say(ctx, chatID, fmt.Sprintf("That file is too large for me: I read text files of up to %s.", sizeText(limit)))
		} else {
			b.say(ctx, chatID, b.downloadProblem(err, "file"))
		}
		return "", false
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		b.say(ctx, chatID, "That file is not text I can read (it is not UTF-8). Please send it as plain text.")
		return "", false
	}
	name := d.FileName
	if name == "" {
		name = "file"
	}
	fence := lines.Fence(string(data))
	file := fmt.Sprintf("The user sent the file %q:\n%s\n%s\n%s", name, fence, strings.TrimRight(string(data), "\n"), fence)
	return joinCaption(m.Caption, file), true
}

func (b *Bot) downloadProblem(err error, what string) string {
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
	case mime == "application/pdf" || strings.EqualFold(path.Ext(name), ".pdf"):
		return "PDF files yet"
	case strings.HasPrefix(mime, "image/"):
		return "images yet"
	case mime != "":
		return "files of type " + mime
	}
	return "this kind of file"
}

func sizeText(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d KB", n>>10)
}
