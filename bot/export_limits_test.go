package bot

import (
	"github.com/mcpgram/mcpgram/bot/forms"
	"github.com/mcpgram/mcpgram/bot/intake"
	"github.com/mcpgram/mcpgram/bot/reply"
)

// The bot's own limits that docs/telegram.md states, for its test.
const (
	MaxParts        = reply.MaxParts
	MaxHeardShown   = intake.MaxHeardShown
	MaxShownMessage = forms.MaxShownMessage
)
