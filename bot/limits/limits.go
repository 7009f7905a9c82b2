// Package limits keeps the bot's two rates: how many messages a user may
// send a minute, and how fast the bot sends messages over all its chats.
// In one process they are counted in memory (golang.org/x/time/rate);
// over a store that several instances share (Shared, which
// *postgres.DB is), they are counted there, so that they hold for the bot
// as a whole however many instances serve it. If the store cannot be
// asked, the process's own count decides rather than refusing everyone.
// Refusals, in each process's memory, tell a stranger that the bot is
// private once a minute at most.
package limits

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpgram/mcpgram/bot/telegram"
	"github.com/mcpgram/mcpgram/store"
)

// Shared keeps rates where several instances share them: a store that
// has store.Rates.
type Shared interface {
	store.Rates
}

// sendsKey is the shared rate of the messages the bot sends.
const sendsKey = "telegram:sends"

// pruneInterval is how often the shared rates are cleared of rows that no
// longer limit anything.
const pruneInterval = time.Hour

// A Users applies the per-user message limit. It is safe for concurrent
// use.
type Users struct {
	perMinute int
	shared    Shared // nil: counted here
	logger    *slog.Logger

	now       func() time.Time
	mu        sync.Mutex
	local     map[int64]*userLimit
	nextSweep int       // the size of local that sweeps it (see sweep)
	pruned    time.Time // when the shared rates were last pruned
}

// sweepFloor is the fewest users counted here before the idle ones are
// swept out: a sweep reads them all, so it waits for that many at least,
// and then for twice as many as the last one kept.
const sweepFloor = 1024

type userLimit struct {
	lim    *rate.Limiter
	warned bool
}

// NewUsers returns a limit of perMinute messages a user, counted in shared
// when it is not nil.
func NewUsers(perMinute int, shared Shared, logger *slog.Logger) *Users {
	return &Users{
		perMinute: perMinute, shared: shared, logger: logger, now: time.Now,
		local: map[int64]*userLimit{}, nextSweep: sweepFloor,
	}
}

// Allow counts a message of user; warn is true the first time a user is
// refused in a row, so the polite message is not itself a flood.
func (u *Users) Allow(ctx context.Context, user int64) (ok, warn bool) {
	every := time.Minute / time.Duration(u.perMinute)
	if u.shared != nil {
		u.prune(ctx)
		refusals, err := u.shared.TakeRate(ctx, fmt.Sprintf("user:%d", user), every, u.perMinute)
		if err == nil {
			return refusals == 0, refusals == 1
		}
		u.logger.Warn("shared rate limit unavailable; counting on this instance", "err", err)
	}
	now := u.now()
	u.mu.Lock()
	defer u.mu.Unlock()
	l := u.local[user]
	if l == nil {
		if len(u.local) >= u.nextSweep {
			u.sweep(now)
		}
		l = &userLimit{lim: rate.NewLimiter(rate.Every(every), u.perMinute)}
		u.local[user] = l
	}
	if l.lim.AllowN(now, 1) {
		l.warned = false
		return true, false
	}
	warn = !l.warned
	l.warned = true
	return false, warn
}

// sweep forgets the users whose buckets are full again: a full bucket
// allows what a new one does, and its user, allowed next time, is not
// warned either, so forgetting it changes nothing. What is left is the
// users heard from within about a minute (the time a bucket takes to
// fill), in a map of their size: a map does not shrink as it empties.
// u.mu is held.
func (u *Users) sweep(now time.Time) {
	kept := make(map[int64]*userLimit, len(u.local)/2)
	for id, l := range u.local {
		if l.lim.TokensAt(now) < float64(l.lim.Burst()) {
			kept[id] = l
		}
	}
	u.local = kept
	u.nextSweep = max(sweepFloor, 2*len(kept))
}

// prune clears the shared rates of old rows about once an hour.
func (u *Users) prune(ctx context.Context) {
	u.mu.Lock()
	due := time.Since(u.pruned) >= pruneInterval
	if due {
		u.pruned = time.Now()
	}
	u.mu.Unlock()
	if due {
		// Rows whole again for a minute limit nothing; an error here only
		// leaves them for the next time.
		_, _ = u.shared.PruneRates(ctx, time.Now().Add(-time.Minute))
	}
}

// NewPacer returns what paces the messages the bot sends: nil when
// perSecond is 0; over shared, a pace every instance shares; otherwise
// this process's own. Either allows a burst of perSecond.
func NewPacer(perSecond float64, shared Shared, logger *slog.Logger) telegram.Pacer {
	if perSecond <= 0 {
		return nil
	}
	burst := max(1, int(perSecond))
	local := rate.NewLimiter(rate.Limit(perSecond), burst)
	if shared == nil {
		return local
	}
	return &sharedPacer{shared: shared, every: time.Duration(float64(time.Second) / perSecond), burst: burst, local: local, logger: logger}
}

// A sharedPacer books each sent message in the shared rates and waits for
// its turn; if the store cannot be asked, this instance's own pace holds.
type sharedPacer struct {
	shared Shared
	every  time.Duration
	burst  int
	local  *rate.Limiter
	logger *slog.Logger
}

// Wait blocks until the next message may be sent, or ctx ends.
func (p *sharedPacer) Wait(ctx context.Context) error {
	d, err := p.shared.ReserveRate(ctx, sendsKey, p.every, p.burst)
	if err != nil {
		p.logger.Warn("shared send pace unavailable; pacing on this instance", "err", err)
		return p.local.Wait(ctx)
	}
	if d > 0 && !telegram.Sleep(ctx, d) {
		return ctx.Err()
	}
	return nil
}
