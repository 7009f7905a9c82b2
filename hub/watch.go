package hub

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watch starts watching the settings file. It watches the folder: editors
// save by writing a new file and renaming it over the old one, which a
// watch on the file itself would lose.
func (h *Hub) watch() error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(filepath.Dir(h.path)); err != nil {
		w.Close()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.watchCancel, h.watchDone = cancel, make(chan struct{})
	go func() {
		defer close(h.watchDone)
		defer w.Close()
		h.watchLoop(ctx, w)
	}()
	return nil
}

func (h *Hub) watchLoop(ctx context.Context, w *fsnotify.Watcher) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if filepath.Clean(ev.Name) != h.path || ev.Op == fsnotify.Chmod {
				continue
			}
			timer.Reset(h.opts.WatchDelay)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			h.log.Warn("watch settings file", "err", err)
		case <-timer.C:
			h.reload(ctx)
		}
	}
}

// reload reconciles the running servers with the settings file: added
// servers start, removed ones stop, changed ones restart, and the others
// are left alone. A file that no longer parses changes nothing.
func (h *Hub) reload(ctx context.Context) {
	h.fileMu.Lock()
	cfgs, warnings, err := loadSettings(h.path, h.opts.LookupEnv)
	if err != nil {
		h.fileMu.Unlock()
		if !errors.Is(err, os.ErrNotExist) {
			h.log.Error("settings file changed but cannot be used; keeping the servers as they are", "err", err)
		}
		return
	}
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		h.fileMu.Unlock()
		return
	}
	actions := h.reconcile(cfgs, warnings)
	h.mu.Unlock()
	h.fileMu.Unlock()
	h.changed()

	var wg sync.WaitGroup
	for _, a := range actions {
		wg.Go(func() { a.run(ctx) })
	}
	wg.Wait()
}

// An action is what a reload does to one server: stop it, start it, or
// both, in that order.
type action struct {
	s           *server
	stop, start bool
}

// run stops and starts the server of a as a says, waiting for its start
// until ctx ends.
func (a action) run(ctx context.Context) {
	a.s.op.Lock()
	defer a.s.op.Unlock()
	if a.stop || !a.start {
		a.s.stopLogged("")
	}
	if a.start {
		select {
		case <-a.s.start():
		case <-ctx.Done():
		}
	}
}

// reconcile takes the settings cfgs and warnings of a new reading in,
// adding and removing servers, and returns what to do to each server
// the reading changed; h.mu and h.fileMu are held.
func (h *Hub) reconcile(cfgs []config, warnings []string) []action {
	var actions []action
	if !slices.Equal(h.warnings, warnings) {
		for _, w := range warnings {
			h.log.Warn("settings file: " + w)
		}
		h.warnings = warnings
	}
	seen := make(map[string]bool)
	for _, cfg := range cfgs {
		seen[cfg.name] = true
		enabled := !cfg.disabled && cfg.err == nil
		s, ok := h.servers[cfg.name]
		if !ok {
			s = newServer(h, cfg)
			h.servers[cfg.name] = s
			h.users = nil
			h.log.Info("settings: server added", "server", cfg.name)
			actions = append(actions, action{s: s, start: enabled})
			continue
		}
		s.mu.Lock()
		old := s.cfg
		s.cfg = cfg
		s.mu.Unlock()
		switch {
		case old.launchKey() != cfg.launchKey():
			h.log.Info("settings: server changed", "server", cfg.name)
			actions = append(actions, action{s: s, stop: true, start: enabled})
		case old.disabled != cfg.disabled:
			actions = append(actions, action{s: s, stop: cfg.disabled, start: enabled})
		case !slices.Equal(old.autoApprove, cfg.autoApprove):
			h.changed()
		}
	}
	for name, s := range h.servers {
		if !seen[name] {
			h.log.Info("settings: server removed", "server", name)
			delete(h.servers, name)
			h.users = nil
			actions = append(actions, action{s: s, stop: true})
		}
	}
	return actions
}
