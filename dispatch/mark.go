package dispatch

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// prune drops done items older than Retain. Telegram keeps updates for
// 24 hours, so older ones can never come again.
func (q *Queue) prune(ctx context.Context) {
	if n, err := q.cfg.Inbox.InboxPrune(ctx, time.Now().Add(-q.cfg.Retain)); err != nil {
		q.logger.Warn("prune inbox", "err", err)
	} else if n > 0 {
		q.logger.Debug("pruned inbox", "items", n)
	}
}

func (q *Queue) markDone(id int64) {
	q.done <- id
}

// maxMarks caps the marks written together.
const maxMarks = 256

// A mark that could not be written is tried again after markRetryFirst,
// doubling up to markRetryMax: the inbox's database is away, and the
// item, done, must not run again once it is back.
const (
	markRetryFirst = 100 * time.Millisecond
	markRetryMax   = 5 * time.Second
)

// mark writes done marks until q.done is closed, off the jobs' path: each
// write may be an fsync on the store's one writer, and hundreds of lanes
// finishing at once would otherwise queue their fsyncs in front of the
// jobs' own writes. Every mark waiting when a write starts goes into it,
// so one fsync serves all the items that finished during the previous
// one, and a lone mark is not delayed. Marks whose write failed are
// written again, with the marks that came meanwhile; those still failing
// when the queue closes run again after a restart.
func (q *Queue) mark() {
	defer close(q.doneStopped)
	var ids []int64
	var retry <-chan time.Time
	wait := markRetryFirst
	open := true
	for {
		if len(ids) == 0 {
			id, ok := <-q.done
			if !ok {
				return
			}
			ids = append(ids, id)
		} else if retry != nil {
			select {
			case id, ok := <-q.done:
				if ok {
					ids = append(ids, id)
					continue // wait out the retry
				}
				open = false
			case <-retry:
			}
		}
		ids, open = q.gather(ids, open)
		if !open {
			// Closing: each mark gets one last try.
			for len(ids) > 0 {
				n := min(len(ids), maxMarks)
				q.writeMarks(ids[:n], false)
				ids = ids[n:]
			}
			return
		}
		n := min(len(ids), maxMarks)
		if !q.writeMarks(ids[:n], true) {
			retry = time.After(wait)
			wait = min(2*wait, markRetryMax)
			continue
		}
		ids, retry, wait = slices.Delete(ids, 0, n), nil, markRetryFirst
	}
}

// gather adds the marks waiting in q.done to ids, up to maxMarks, and
// says whether q.done is still open.
func (q *Queue) gather(ids []int64, open bool) ([]int64, bool) {
	for open && len(ids) < maxMarks {
		select {
		case id, ok := <-q.done:
			if !ok {
				return ids, false
			}
			ids = append(ids, id)
		default:
			return ids, open
		}
	}
	return ids, open
}

// writeMarks writes the marks of ids, and reports whether it did; open
// is false when the queue is closing, and a failure is the last word.
func (q *Queue) writeMarks(ids []int64, open bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := q.cfg.Inbox.InboxDone(ctx, ids...)
	cancel()
	switch {
	case errors.Is(err, store.ErrNotFound):
		q.logger.Warn("mark items done: some were not in the inbox", "err", err)
	case err != nil && open:
		q.logger.Warn("mark items done; trying again", "updates", len(ids), "err", err)
		return false
	case err != nil:
		q.logger.Error("mark items done; they run again after a restart", "update_ids", ids, "err", err)
		return false
	}
	q.mu.Lock()
	q.marked = append(q.marked, ids...)
	q.mu.Unlock()
	if q.claimer != nil {
		// The next claim hands back chats left with nothing queued,
		// and takes new ones for the slots freed.
		q.Wake()
	}
	return true
}
