package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/mcpgram/mcpgram/bot/render"
)

// SendPhoto sends image data to place to as the i-th photo of a
// message, named by its type so Telegram takes it.
func (c *Client) SendPhoto(ctx context.Context, to Place, data []byte, mimeType, caption string, i int) error {
	if len(data) == 0 {
		return nil
	}
	if mimeType == "" {
		mimeType = http.DetectContentType(data)
	}
	ext := ".png"
	switch {
	case strings.Contains(mimeType, "jpeg"):
		ext = ".jpg"
	case strings.Contains(mimeType, "gif"):
		ext = ".gif"
	case strings.Contains(mimeType, "webp"):
		ext = ".webp"
	}
	params := tgbotapi.Params{}
	params.AddNonEmpty("caption", render.Shorten(caption, 1000))
	file := tgbotapi.FileBytes{Name: fmt.Sprintf("image%d%s", i+1, ext), Bytes: data}
	_, err := c.post(ctx, "sendPhoto", to, params, tgbotapi.RequestFile{Name: "photo", Data: file})
	return err
}

// Download fetches a file a user sent: getFile for its path, then the
// file under the API URL (so a local Bot API server works too), reading
// at most limit bytes. It returns the file's path on the server, whose
// extension tells its format.
func (c *Client) Download(ctx context.Context, fileID string, limit int64) ([]byte, string, error) {
	var f tgbotapi.File
	err := c.retry(ctx, "getFile", func() error {
		var err error
		f, err = c.api.GetFile(tgbotapi.FileConfig{FileID: fileID})
		return err
	})
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) && strings.Contains(apiErr.Message, "too big") {
		return nil, "", ErrTooBig
	}
	if err != nil {
		return nil, "", fmt.Errorf("getFile: %w", err)
	}
	if int64(f.FileSize) > limit {
		return nil, f.FilePath, ErrTooBig
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.APIURL+"/file/bot"+c.cfg.Token+"/"+f.FilePath, nil)
	if err != nil {
		return nil, "", redact(err, c.cfg.Token)
	}
	resp, err := c.sends.client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("download %s: %w", f.FilePath, redact(err, c.cfg.Token))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("download %s: HTTP %d", f.FilePath, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, "", fmt.Errorf("download %s: %w", f.FilePath, redact(err, c.cfg.Token))
	}
	if int64(len(data)) > limit {
		return nil, f.FilePath, ErrTooBig
	}
	return data, f.FilePath, nil
}

// SendFile sends data to place to as a document named name, quoting
// message replyTo (0: none).
func (c *Client) SendFile(ctx context.Context, to Place, replyTo int, data []byte, name, caption string) error {
	params := tgbotapi.Params{}
	params.AddNonEmpty("caption", render.Shorten(caption, 1000))
	if replyTo != 0 {
		params.AddNonZero("reply_to_message_id", replyTo)
		params.AddBool("allow_sending_without_reply", true)
	}
	file := tgbotapi.FileBytes{Name: name, Bytes: data}
	_, err := c.post(ctx, "sendDocument", to, params, tgbotapi.RequestFile{Name: "document", Data: file})
	return err
}
