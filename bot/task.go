// Tasks: the tool calls servers run in the background (see package
// tasks). The bot runs the poller that follows them with its own
// lifecycle; bot/taskcards shows them and delivers each one's end, which
// the bot runs as a job of its queue.

package bot

import (
	"context"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/store"
)

// A TaskPoller follows the tasks turns start until they end; *tasks.Poller
// is one, whose Finished the program points at Bot.TaskEnded.
type TaskPoller interface {
	Start()
	Close() error
	Follow(ctx context.Context, id int64) error
	// Stop cancels a call it runs in the background in this process.
	Stop(id int64) bool
}

// TaskChanged shows the new status of task t, which the poller stored, on
// its card, as a job of the queue, and asks its user what it waits for if
// it waits for input. Call it while Run runs.
func (b *Bot) TaskChanged(t store.Task) {
	b.queue.Go(func(work context.Context) { b.tasks.Changed(work, t) })
	if t.Status == string(mcpgram.TaskInputRequired) && b.inputs != nil {
		b.queue.Go(func(work context.Context) { b.inputs.Ask(work, t) })
	}
}

// TaskEnded closes what task t still asks, and hands the end of t, which
// the poller stored, to its conversation, as a job of the queue (which
// Run's end waits for). Call it while Run runs.
func (b *Bot) TaskEnded(t store.Task) {
	if b.inputs != nil {
		b.inputs.Stop(t.ID)
	}
	b.queue.Go(func(work context.Context) { b.delivery.Deliver(work, t) })
}
