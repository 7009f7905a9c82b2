package llm

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// A TranscriberConfig configures a Transcriber.
type TranscriberConfig struct {
	BaseURL string // an OpenAI-compatible API, ending in /v1
	APIKey  string
	Model   string // such as whisper-1
	// Timeout bounds one transcription; default 2 minutes.
	Timeout time.Duration
}

// A Transcriber turns speech into text through an OpenAI-compatible
// /audio/transcriptions endpoint, which takes OGG/Opus (Telegram's voice
// notes), MP3, M4A, MP4 and more.
type Transcriber struct {
	client *openai.Client
	cfg    TranscriberConfig
}

// NewTranscriber returns a Transcriber, or an error naming what is missing.
func NewTranscriber(cfg TranscriberConfig) (*Transcriber, error) {
	if cfg.Model == "" || cfg.BaseURL == "" {
		return nil, errors.New("transcriber: a model and a base URL are required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = &http.Client{Timeout: cfg.Timeout}
	return &Transcriber{client: openai.NewClientWithConfig(oc), cfg: cfg}, nil
}

// Transcribe returns the text spoken in audio; name is the file's name,
// whose extension tells the endpoint the format. A failure is an *Error,
// with the key scrubbed from it.
func (t *Transcriber) Transcribe(ctx context.Context, name string, audio []byte) (string, error) {
	resp, err := t.client.CreateTranscription(ctx, openai.AudioRequest{
		Model:    t.cfg.Model,
		FilePath: name,
		Reader:   bytes.NewReader(audio),
		Format:   openai.AudioResponseFormatJSON,
	})
	if err != nil {
		e := classify(err, 0)
		e.Attempts = 1
		return "", scrub(e, t.cfg.APIKey)
	}
	return strings.TrimSpace(resp.Text), nil
}
