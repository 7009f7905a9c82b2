package bot

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpgram/mcpgram/bot/telegram"
)

// SharedRates keeps rates in the store, where several instances share
// them; *postgres.DB is one. A Bot over such a store counts the per-user
// rate limit there and paces the messages it sends there, so that both
// limits hold for the bot as a whole, however many instances serve it.
type SharedRates interface {
	// TakeRate counts an event against burst events, one more every
	// `every`, and returns 0 when it fits, else the refusals in a row.
	TakeRate(ctx context.Context, key string, every time.Duration, burst int) (int, error)
	// ReserveRate books an event and returns how long to wait for it.
	ReserveRate(ctx context.Context, key string, every time.Duration, burst int) (time.Duration, error)
	// PruneRates forgets rates whole again since before.
	PruneRates(ctx context.Context, before time.Time) (int64, error)
}

// sendsKey is the shared rate of the messages the bot sends.
const sendsKey = "telegram:sends"

// ratePruneInterval is how often the shared rates are cleared of rows
// that no longer limit anything.
const ratePruneInterval = time.Hour

// sharedRates wraps a SharedRates with the pruning it needs now and then.
type sharedRates struct {
	SharedRates
	mu     sync.Mutex
	pruned time.Time
}

// take is TakeRate, pruning old rows first about once an hour.
func (r *sharedRates) take(ctx context.Context, key string, every time.Duration, burst int) (int, error) {
	r.mu.Lock()
	due := time.Since(r.pruned) >= ratePruneInterval
	if due {
		r.pruned = time.Now()
	}
	r.mu.Unlock()
	if due {
		// Rows whole again for a minute limit nothing; an error here only
		// leaves them for the next time.
		_, _ = r.PruneRates(ctx, time.Now().Add(-time.Minute))
	}
	return r.TakeRate(ctx, key, every, burst)
}

// newPacer returns what paces the messages the bot sends: nil when
// perSecond is 0; over shared rates, a pace every instance shares;
// otherwise this process's own.
func newPacer(perSecond float64, shared *sharedRates, logger *slog.Logger) telegram.Pacer {
	if perSecond <= 0 {
		return nil
	}
	burst := max(1, int(perSecond))
	local := rate.NewLimiter(rate.Limit(perSecond), burst)
	if shared == nil {
		return local
	}
	return &sharedPacer{rates: shared, every: time.Duration(float64(time.Second) / perSecond), burst: burst, local: local, logger: logger}
}

// A sharedPacer books each sent message in the shared rates and waits for
// its turn; if the store cannot be asked, this instance's own pace holds.
type sharedPacer struct {
	rates  *sharedRates
	every  time.Duration
	burst  int
	local  *rate.Limiter
	logger *slog.Logger
}

// Wait blocks until the next message may be sent, or ctx ends.
func (p *sharedPacer) Wait(ctx context.Context) error {
	d, err := p.rates.ReserveRate(ctx, sendsKey, p.every, p.burst)
	if err != nil {
		p.logger.Warn("shared send pace unavailable; pacing on this instance", "err", err)
		return p.local.Wait(ctx)
	}
	if d > 0 && !telegram.Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}
