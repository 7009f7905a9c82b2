package limits

import (
	"sync"
	"time"
)

// refusalInterval is the least time between two refusals to one stranger.
const refusalInterval = time.Minute

// Refusals decide when a user who may not use the bot is told so: once
// per refusalInterval at most, then silence, so that strangers cannot
// spend the bot's Telegram budget (about one message a second per chat)
// by writing to it. The zero value is ready for use; it is safe for
// concurrent use.
type Refusals struct {
	now   func() time.Time // nil: time.Now
	mu    sync.Mutex
	told  map[int64]time.Time // stranger -> when last told the bot is private
	swept time.Time           // when told was last cleared of old entries
}

// Due reports whether user, who may not use the bot, should be told so
// now.
func (r *Refusals) Due(user int64) bool {
	now := time.Now()
	if r.now != nil {
		now = r.now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.swept) >= refusalInterval {
		// Entries old enough to refuse again are no longer needed; dropping
		// them keeps a stream of new strangers from growing the map, and a
		// new map, of the strangers of the last minute alone, lets go of
		// the room a burst of them took (a map does not shrink).
		kept := make(map[int64]time.Time, len(r.told)/2)
		for id, at := range r.told {
			if now.Sub(at) < refusalInterval {
				kept[id] = at
			}
		}
		r.told, r.swept = kept, now
	}
	if at, ok := r.told[user]; ok && now.Sub(at) < refusalInterval {
		return false
	}
	r.told[user] = now
	return true
}
