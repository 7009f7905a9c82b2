package bot_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
)

// awayDB is a database that goes away: while down, a turn's reads and
// writes fail as an engine's do past its retries; the inbox still takes
// updates.
type awayDB struct {
	*sqlite.DB
	down     atomic.Bool
	failures atomic.Int64
}

func (d *awayDB) away() error {
	if d.down.Load() {
		d.failures.Add(1)
		return fmt.Errorf("%w: connection refused", store.ErrUnavailable)
	}
	return nil
}

func (d *awayDB) ChatInstructions(ctx context.Context, chatID string) (string, error) {
	if err := d.away(); err != nil {
		return "", err
	}
	return d.DB.ChatInstructions(ctx, chatID)
}

func (d *awayDB) AppendTurn(ctx context.Context, w store.TurnWrite) (int64, error) {
	if err := d.away(); err != nil {
		return 0, err
	}
	return d.DB.AppendTurn(ctx, w)
}

// A turn whose database is away is not failed for its user: the update
// stays in the inbox, the user is told once that the answer comes when
// the database is back, and it does, once, before the messages sent after
// it.
func TestE2EDatabaseAway(t *testing.T) {
	s := newStack(t, scriptedModel(0), nil)
	away := &awayDB{DB: s.db}
	s.agent = newAgent(t, away, s.hub, s.model, nil)
	h := startBotWith(t, s.fake, s.db, false, s.agent, s.hub, nil)

	away.down.Store(true)
	s.fake.Text(alice, alice, "hello")
	waitText(t, s.fake, alice, "I cannot reach my database right now")
	if items, err := s.db.InboxQueued(t.Context(), 0, 0); err != nil || len(items) != 1 {
		t.Fatalf("the inbox holds %d updates (%v), want the message, not done", len(items), err)
	}
	away.down.Store(false)
	s.fake.Text(alice, alice, "and then")
	waitText(t, s.fake, alice, "You said: and then")
	waitHandled(t, h)

	var answers []string
	for _, m := range botMessages(s.fake, alice) {
		if strings.Contains(m.Plain, "You said:") {
			answers = append(answers, m.Plain)
		}
	}
	if want := []string{"Hello! You said: hello", "Hello! You said: and then"}; !slices.Equal(answers, want) {
		t.Errorf("answers %q, want %q", answers, want)
	}
	if n := countText(s.fake, alice, "cannot reach my database"); n != 1 {
		t.Errorf("told %d times that the database is away, want once", n)
	}
	if n := countText(s.fake, alice, "went wrong"); n != 0 {
		t.Errorf("told %d times that something went wrong", n)
	}
}
