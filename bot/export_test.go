package bot

// A DraftView is the streaming draft's rendering, for tests: HTML is what
// the draft shows of the text streamed so far.
type DraftView struct{ v draftView }

// HTML returns the draft of text.
func (d *DraftView) HTML(text string) string { return d.v.html(text) }

// Behind reports how many of the chats' jobs wait for a command sent
// ahead of them that runs beside the chat's turn.
func (b *Bot) Behind() int64 { return b.behind.Load() }
