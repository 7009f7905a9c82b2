package bot_test

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/bot"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// The Bot API carries the token in the URL, and Go's HTTP client quotes
// the URL in its errors: none of that may reach the log.
func TestTokenNeverLogged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close() // nothing listens there now: every call fails at once

	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var log testenv.Buffer
	cfg := testConfig(tgfake.New(t), &log)
	cfg.APIURL = dead
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := bot.New("424242:SECRET-TOKEN-VALUE", newFakeAgent(), partsOf(newFakeAgent()), newFakeHub(0), db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	testenv.Eventually(t, 20*time.Second, "a refused connection logged", func() bool { return strings.Contains(log.String(), "connection refused") })
	cancel()
	err = <-done
	out := log.String()
	if !strings.Contains(out, "connection refused") {
		t.Fatalf("the failing calls were not logged:\n%s", out)
	}
	if strings.Contains(out, "SECRET-TOKEN-VALUE") {
		t.Errorf("the log shows the token:\n%s", out)
	}
	if err != nil && strings.Contains(err.Error(), "SECRET-TOKEN-VALUE") {
		t.Errorf("Run's error shows the token: %v", err)
	}
}
