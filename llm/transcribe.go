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

// MaxTranscriptBytes bounds a transcription's answer: 20 MB of speech, the
// most Telegram lets a bot fetch, is a few hundred KB of text.
const MaxTranscriptBytes = 4 << 20

// TranscriberOptions are a Transcriber's optional settings.
type TranscriberOptions struct {
	// APIKey is sent as a bearer token; empty sends none (local servers).
	APIKey string
	// Timeout bounds one transcription; default 2 minutes.
	Timeout time.Duration
}

// A Transcriber turns speech into text through an OpenAI-compatible
// /audio/transcriptions endpoint, which takes OGG/Opus (Telegram's voice
// notes), MP3, M4A, MP4 and more.
type Transcriber struct {
	client *openai.Client
	model  string
	apiKey string
}

// NewTranscriber returns a Transcriber of model (such as whisper-1) at
// baseURL, an OpenAI-compatible API ending in /v1, or an error naming
// what is missing.
func NewTranscriber(baseURL, model string, opts TranscriberOptions) (*Transcriber, error) {
	if model == "" || baseURL == "" {
		return nil, errors.New("transcriber: a model and a base URL are required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	oc := openai.DefaultConfig(opts.APIKey)
	oc.BaseURL = strings.TrimRight(baseURL, "/")
	oc.HTTPClient = &http.Client{Timeout: opts.Timeout, Transport: boundedTransport{http.DefaultTransport}}
	return &Transcriber{client: openai.NewClientWithConfig(oc), model: model, apiKey: opts.APIKey}, nil
}

// Transcribe returns the text spoken in audio; name is the file's name,
// whose extension tells the endpoint the format. A failure is an *Error,
// with the key scrubbed from it.
func (t *Transcriber) Transcribe(ctx context.Context, name string, audio []byte) (string, error) {
	resp, err := t.client.CreateTranscription(ctx, openai.AudioRequest{
		Model:    t.model,
		FilePath: name,
		Reader:   bytes.NewReader(audio),
		Format:   openai.AudioResponseFormatJSON,
	})
	if errors.Is(err, errBodyTooLong) {
		return "", &Error{Kind: KindTooLong, Limit: MaxTranscriptBytes, Attempts: 1, Err: err}
	}
	if err != nil {
		e := classify(err, 0)
		e.Attempts = 1
		return "", scrub(e, t.apiKey)
	}
	return strings.TrimSpace(resp.Text), nil
}

// A boundedTransport stops reading an answer past MaxTranscriptBytes.
type boundedTransport struct{ http.RoundTripper }

func (t boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	if err == nil {
		resp.Body = &bodyBound{ReadCloser: resp.Body, info: &attemptInfo{}, total: MaxTranscriptBytes}
	}
	return resp, err
}
