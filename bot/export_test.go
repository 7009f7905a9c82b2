package bot

// Behind reports how many of the chats' jobs wait for a command sent
// ahead of them that runs beside the chat's turn.
func (b *Bot) Behind() int64 { return b.behind.Load() }
