package bot_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/agent"
	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/bot/album"
	"github.com/mcpgram/mcpgram/bot/media"
	"github.com/mcpgram/mcpgram/bot/render"
	"github.com/mcpgram/mcpgram/internal/config"
	"github.com/mcpgram/mcpgram/llm"
)

// Every limit docs/telegram.md states is the program's: each phrase below
// is made from the constant that keeps the limit, so a limit changed in
// the code and not on the page, or on the page and not in the code,
// fails here, as TestConfigurationPageIsCurrent keeps the settings table.
func TestTelegramPageLimits(t *testing.T) {
	b, err := os.ReadFile("../docs/telegram.md")
	if err != nil {
		t.Fatal(err)
	}
	page := strings.Join(strings.Fields(string(b)), " ")
	maxTokens, err := strconv.Atoi(settingDefault(t, "LLM_MAX_TOKENS"))
	if err != nil {
		t.Fatal(err)
	}
	approvals := minutes(agent.DefaultApprovalTimeout)
	tests := []struct{ limit, phrase string }{
		{"/system", fmt.Sprintf("(up to %s characters)", thousands(agent.MaxInstructions))},
		{"a reply", fmt.Sprintf("may be %s, or %d bytes a token of `LLM_MAX_TOKENS`", size(llm.DefaultMaxReplyBytes), llm.BytesPerToken)},
		{"a reply at the default", fmt.Sprintf("(%s at the default %d;", size(llm.BytesPerToken*maxTokens), maxTokens)},
		{"a message", fmt.Sprintf("messages of at most %d characters", render.MaxMessageLen)},
		{"an answer as a file", fmt.Sprintf("more than %d messages (about %s characters)", bot.MaxParts, thousands(bot.MaxParts*render.MaxMessageLen/1000*1000))},
		{"an approval", fmt.Sprintf("unanswered approvals expire after %s as denied", approvals)},
		{"a form", fmt.Sprintf("expires after the approval timeout (%s)", approvals)},
		{"a transcript shown", fmt.Sprintf("its first %s characters, in one message", thousands(bot.MaxHeardShown))},
		{"a transcription's answer", fmt.Sprintf("answer over %s fails the recording", size(llm.MaxTranscriptBytes))},
		{"an image", fmt.Sprintf("Up to %s: a larger one is refused", size(media.MaxImageBytes))},
		{"an image's download", fmt.Sprintf("the download itself stops at %s.", size(media.MaxImageBytes))},
		{"an image's tokens", fmt.Sprintf("Each image counts as %s tokens", thousands(agent.ImageTokens))},
		{"an album", fmt.Sprintf("(up to %d photos or files sent together", album.MaxItems)},
		{"an album's wait", fmt.Sprintf("waits until %s passes with no more of its items", seconds(album.DefaultWait))},
		{"an album's items", fmt.Sprintf("more than %d items under one album id", album.MaxItems)},
		{"a PDF", fmt.Sprintf("A PDF (up to %s)", size(media.MaxPDFBytes))},
		{"a PDF's pages", fmt.Sprintf("its first %d pages, in order", media.MaxPDFPages)},
		{"a PDF's page tree", fmt.Sprintf("at most %d levels deep", media.MaxPageTreeDepth)},
		{"a PDF's time", fmt.Sprintf("killed after %s", seconds(media.PDFTimeout))},
		{"a PDF's memory", fmt.Sprintf("stopping itself past %s of memory", size(media.PDFMemory))},
		{"a recording", fmt.Sprintf("Recordings over Telegram's %s download limit", size(media.MaxAudioBytes))},
		{"a form's message", fmt.Sprintf("cut at %s characters on the card", thousands(bot.MaxShownMessage))},
		{"a link's button", fmt.Sprintf("in at most %d characters", render.MaxButtonHost)},
	}
	for _, tt := range tests {
		t.Run(tt.limit, func(t *testing.T) {
			if !strings.Contains(page, tt.phrase) {
				t.Errorf("docs/telegram.md does not say %q, which the code's limit makes", tt.phrase)
			}
		})
	}
}

// settingDefault is the default of the setting name.
func settingDefault(t *testing.T, name string) string {
	t.Helper()
	for _, s := range config.Settings {
		if s.Name == name {
			return s.Default
		}
	}
	t.Fatalf("no setting %s", name)
	return ""
}

// thousands writes n with a comma between thousands, as the page does.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// size writes a number of bytes as the page does: in MB or KB.
func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d KB", n>>10)
}

func minutes(d time.Duration) string { return fmt.Sprintf("%d minutes", int(d/time.Minute)) }

func seconds(d time.Duration) string { return fmt.Sprintf("%d s", int(d/time.Second)) }
