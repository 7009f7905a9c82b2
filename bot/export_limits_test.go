package bot

import "github.com/mcpgram/mcpgram/bot/forms"

// The bot's own limits that docs/telegram.md states, for its test.
const (
	MaxParts        = maxParts
	MaxHeardShown   = maxHeardShown
	MaxShownMessage = forms.MaxShownMessage
)
