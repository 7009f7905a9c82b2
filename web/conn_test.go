package web_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgram/mcpgram/metrics"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/web"
)

// bound is how long a test waits for what must happen; reaching it is a
// failure, never a pass.
const bound = 10 * time.Second

func startServer(t *testing.T, opts web.Options) *web.Server {
	t.Helper()
	s := web.New("127.0.0.1:0", opts)
	s.Handle("POST /body", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "cut short", http.StatusBadRequest)
		}
	}))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

// client is one raw connection to the server.
type client struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, s *web.Server) *client {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{Conn: c, r: bufio.NewReader(c)}
}

// get sends a GET of /healthz on the connection, keeping it open.
func (c *client) send(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: mcpgram\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
}

// response reads one response, within bound.
func (c *client) response(t *testing.T) (*http.Response, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(bound))
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, err
}

// closedByServer fails t unless the server closes the connection within
// bound: the read ends with EOF (or a reset), not the test's deadline.
func (c *client) closedByServer(t *testing.T, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(bound))
	_, err := c.r.ReadByte()
	if err == nil {
		t.Fatalf("%s: the server sent more", what)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the connection is still open after %v", what, bound)
	}
}

// The server closes connections that idle: kept alive after a request,
// opened and silent, or stalled in the middle of a body.
func TestIdleConnectionsClosed(t *testing.T) {
	s := startServer(t, web.Options{IdleTimeout: 200 * time.Millisecond, ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 300 * time.Millisecond})

	kept := dial(t, s)
	kept.send(t)
	if resp, err := kept.response(t); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %v, %v", resp, err)
	}
	kept.closedByServer(t, "a kept-alive connection after its request")

	dial(t, s).closedByServer(t, "a connection that never sent a byte")

	stalled := dial(t, s)
	if _, err := io.WriteString(stalled, "POST /body HTTP/1.1\r\nHost: mcpgram\r\nContent-Length: 100\r\n\r\nonly ten b"); err != nil {
		t.Fatal(err)
	}
	if resp, err := stalled.response(t); err == nil && resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a stalled body got %d", resp.StatusCode)
	}
	stalled.closedByServer(t, "a connection whose body stalled")
}

// metric reads a metric of reg by name.
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		m := f.GetMetric()[0]
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// waitMetric waits until the metric has value want.
func waitMetric(t *testing.T, reg *prometheus.Registry, name string, want float64) {
	t.Helper()
	testenv.Waiter{Explain: func() string { return fmt.Sprintf("%s = %v", name, metric(t, reg, name)) }}.
		Eventually(t, bound, fmt.Sprintf("%s = %v", name, want), func() bool { return metric(t, reg, name) == want })
}

// At most MaxConns connections are served at once: one more waits, and is
// served once a slot frees.
func TestConnectionCap(t *testing.T) {
	m := metrics.New()
	s := startServer(t, web.Options{MaxConns: 2, IdleTimeout: time.Minute, Metrics: m})
	var open []*client
	for range 2 {
		c := dial(t, s)
		c.send(t)
		if _, err := c.response(t); err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	waitMetric(t, m.Registry, "mcpgram_http_connections", 2)

	third := dial(t, s)
	third.send(t)
	served := make(chan error, 1)
	go func() {
		_, err := third.response(t)
		served <- err
	}()
	// The listener holds the third connection, unserved.
	waitMetric(t, m.Registry, "mcpgram_http_connections_waited_total", 1)
	select {
	case err := <-served:
		t.Fatalf("a connection beyond the cap was served (%v)", err)
	default:
	}
	if got := metric(t, m.Registry, "mcpgram_http_connections"); got != 2 {
		t.Errorf("%v connections open, want the cap, 2", got)
	}
	open[0].Close()
	if err := <-served; err != nil {
		t.Fatalf("the waiting connection, once a slot freed: %v", err)
	}
	if got := metric(t, m.Registry, "mcpgram_http_connections"); got > 2 {
		t.Errorf("%v connections open, want at most 2", got)
	}
}

// Two servers on one set of metrics share its connection metrics.
func TestTwoServersOneMetrics(t *testing.T) {
	m := metrics.New()
	a := startServer(t, web.Options{Metrics: m})
	startServer(t, web.Options{Metrics: m})
	c := dial(t, a)
	c.send(t)
	if _, err := c.response(t); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, m.Registry, "mcpgram_http_connections", 1)
}

// The limits docs/operations.md states are the defaults.
func TestDefaultLimits(t *testing.T) {
	got := web.New("", web.Options{}).Options()
	want := web.Options{ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 60 * time.Second, MaxConns: 64}
	if got.ReadHeaderTimeout != want.ReadHeaderTimeout || got.ReadTimeout != want.ReadTimeout || got.WriteTimeout != want.WriteTimeout ||
		got.IdleTimeout != want.IdleTimeout || got.MaxConns != want.MaxConns {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	page, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	secs := func(d time.Duration) string { return fmt.Sprint(int(d.Seconds())) + " s" }
	for _, says := range []string{
		"no whole request header within " + secs(got.ReadHeaderTimeout),
		"no whole request within " + secs(got.ReadTimeout),
		"sends nothing for " + secs(got.IdleTimeout) + " between requests",
		"gives each answer " + secs(got.WriteTimeout) + " to be written",
		"serves at most " + fmt.Sprint(got.MaxConns) + " connections at once",
	} {
		if !strings.Contains(string(page), says) {
			t.Errorf("docs/operations.md does not say %q", says)
		}
	}
}
