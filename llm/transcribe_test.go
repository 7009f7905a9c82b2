package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/llm"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
)

func TestTranscribe(t *testing.T) {
	fake := llmfake.New(t, llmfake.Script())
	fake.SetTranscriber(func(tr llmfake.Transcription) (string, int) {
		if string(tr.Audio) == "broken" {
			return "", http.StatusBadRequest
		}
		return "  hello " + tr.Model + " " + tr.FileName + "  ", 0
	})
	tr, err := llm.NewTranscriber(fake.URL(), "whisper-1", llm.TranscriberOptions{APIKey: "sk-voice"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := tr.Transcribe(context.Background(), "voice.oga", []byte("OggS..."))
	if err != nil || got != "hello whisper-1 voice.oga" {
		t.Errorf("Transcribe = %q, %v", got, err)
	}
	if ts := fake.Transcriptions(); len(ts) != 1 || ts[0].Authorization != "Bearer sk-voice" || string(ts[0].Audio) != "OggS..." {
		t.Errorf("requests: %+v", ts)
	}
	_, err = tr.Transcribe(context.Background(), "voice.oga", []byte("broken"))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.KindBadRequest || strings.Contains(err.Error(), "sk-voice") {
		t.Errorf("a refused transcription: %v", err)
	}
	if _, err := llm.NewTranscriber(fake.URL(), "", llm.TranscriberOptions{}); err == nil {
		t.Error("a transcriber without a model was made")
	}
}

// A transcript has a bound too: an endpoint that answers with more than
// any recording Telegram lets a bot fetch could hold fails the call,
// rather than the bot holding what it sent.
func TestTranscriptBound(t *testing.T) {
	fake := llmfake.New(t, llmfake.Script())
	fake.SetTranscriber(func(llmfake.Transcription) (string, int) {
		return strings.Repeat("words ", (llm.MaxTranscriptBytes+1)/6+1), 0
	})
	tr, err := llm.NewTranscriber(fake.URL(), "whisper-1", llm.TranscriberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Transcribe(context.Background(), "voice.oga", []byte("OggS..."))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.KindTooLong {
		t.Errorf("a transcript over the bound: %v, want KindTooLong", err)
	}
}
