package hub

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// stderrKeep is how much of a server's recent stderr the hub keeps.
const stderrKeep = 16 << 10

// A tail keeps the last stderrKeep bytes a server wrote to stderr.
type tail struct {
	mu   sync.Mutex
	buf  []byte
	eof  chan struct{}
	once sync.Once
}

func newTail() *tail { return &tail{eof: make(chan struct{})} }

// settle waits briefly for the last of stderr to arrive after an exit; a
// grandchild may hold the pipe open, so it does not wait for the end.
func (t *tail) settle() {
	select {
	case <-t.eof:
	case <-time.After(200 * time.Millisecond):
	}
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - stderrKeep; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// readFrom keeps what f yields until its end, and logs it line by line at
// debug level for whoever is chasing a misbehaving server.
// Each line goes to each, if not nil, as it comes.
func (t *tail) readFrom(f *os.File, log *slog.Logger, each func(string)) {
	defer t.once.Do(func() { close(t.eof) })
	defer f.Close()
	r := bufio.NewReaderSize(f, 4096)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			_, _ = t.Write(line)
			if each != nil {
				each(string(line))
			}
			if log.Enabled(context.Background(), slog.LevelDebug) {
				log.Debug("server stderr", "line", strings.TrimRight(string(line), "\r\n"))
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// String returns the kept stderr.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// lastLine returns the last non-empty line of the kept stderr.
func (t *tail) lastLine() string {
	lines := strings.Split(t.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}
