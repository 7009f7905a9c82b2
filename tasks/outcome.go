package tasks

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpgram/mcpgram"
)

// How a task ended, as an Outcome says: a server's final status, or one
// of the poller's own.
const (
	EndCompleted = string(mcpgram.TaskCompleted)
	EndFailed    = string(mcpgram.TaskFailed)
	EndCancelled = string(mcpgram.TaskCancelled)
	// EndExpired: its deadline passed before it ended.
	EndExpired = "expired"
	// EndLost: its server no longer knows it (it restarted, or dropped it).
	EndLost = "lost"
)

// MaxOutcomeText bounds the text an Outcome keeps of a result.
const MaxOutcomeText = 64 << 10

// An Outcome is how a task ended, as stored with it (store.Task.Outcome)
// for the conversation it belongs to.
type Outcome struct {
	End string `json:"end"`
	// Text is the result's text (completed), or what the server or the
	// poller said of the end; untrusted where it is the server's.
	Text string `json:"text,omitempty"`
	// IsError: the tool reported its own failure in its result.
	IsError bool `json:"is_error,omitempty"`
	// Cut is how many bytes of the text were left out.
	Cut int `json:"cut,omitempty"`
}

// newOutcome is the outcome end with text, bounded.
func newOutcome(end, text string, isError bool) Outcome {
	o := Outcome{End: end, IsError: isError}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) > MaxOutcomeText {
		n := MaxOutcomeText
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		o.Cut, text = len(text)-n, text[:n]
	}
	o.Text = text
	return o
}

func (o Outcome) encode() []byte {
	b, _ := json.Marshal(o) // strings and numbers only: it cannot fail
	return b
}

// DecodeOutcome reads an outcome stored with a task.
func DecodeOutcome(b []byte) (Outcome, error) {
	var o Outcome
	if err := json.Unmarshal(b, &o); err != nil {
		return Outcome{}, fmt.Errorf("decode task outcome: %w", err)
	}
	return o, nil
}
