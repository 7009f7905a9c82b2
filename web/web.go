// Package web serves mcpgram's HTTP endpoint for machines: /metrics for
// Prometheus, /healthz (the process lives and its database answers) and
// /readyz (updates arrive and the model answers). It is one http.Server
// with routes, started and stopped with the bot, so that other routes (a
// webhook) can join it.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpgram/mcpgram/metrics"
)

// A Check reports a problem, or nil when all is well.
type Check struct {
	Name  string
	Check func(ctx context.Context) error
}

// Options are a Server's optional settings.
type Options struct {
	// Metrics is served on /metrics; nil serves none.
	Metrics *metrics.Metrics
	// Health is what /healthz checks; Ready, what /readyz checks beside it.
	Health, Ready []Check
	// CheckTimeout bounds each check; default 5s.
	CheckTimeout time.Duration
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are the
	// http.Server's (defaults 10s, 30s, 60s, 60s); MaxConns caps the
	// connections open at once (default 64).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	MaxConns                                                  int
	Logger                                                    *slog.Logger
}

// config is what New was given, the defaults filled in.
type config struct {
	Options
	Addr string
}

// A Server is the HTTP endpoint. Start it, then Close it.
type Server struct {
	cfg    config
	mux    *http.ServeMux
	hosts  []hostRoute // tried first, in order
	srv    *http.Server
	ln     net.Listener
	served chan error
	open   prometheus.Gauge   // connections open
	waited prometheus.Counter // connections that waited for a slot
}

// New returns a Server with its routes, not yet listening; it is to
// listen at addr, such as 127.0.0.1:9090 (HTTP_LISTEN).
func New(addr string, opts Options) *Server {
	cfg := config{Options: opts, Addr: addr}
	if cfg.CheckTimeout <= 0 {
		cfg.CheckTimeout = 5 * time.Second
	}
	cfg.ReadHeaderTimeout = orDefault(cfg.ReadHeaderTimeout, 10*time.Second)
	cfg.ReadTimeout = orDefault(cfg.ReadTimeout, 30*time.Second)
	cfg.WriteTimeout = orDefault(cfg.WriteTimeout, 60*time.Second)
	cfg.IdleTimeout = orDefault(cfg.IdleTimeout, 60*time.Second)
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux()}
	if cfg.Metrics != nil {
		s.mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Metrics.Registry, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelError)}))
	}
	s.mux.HandleFunc("GET /healthz", s.checks(cfg.Health))
	s.mux.HandleFunc("GET /readyz", s.checks(append(append([]Check(nil), cfg.Health...), cfg.Ready...)))
	// Every connection ends: one that sends nothing, stalls in a request
	// or idles between requests is closed, and at most MaxConns are open,
	// so no client can hold the server's connections (or its memory).
	// Writes get twice the 30 s a webhook update may take to store.
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.route),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	s.open = prometheus.NewGauge(prometheus.GaugeOpts{Name: "mcpgram_http_connections", Help: "Connections open to the HTTP endpoint."})
	s.waited = prometheus.NewCounter(prometheus.CounterOpts{Name: "mcpgram_http_connections_waited_total", Help: "Connections that waited for a free slot: HTTP_LISTEN had its most connections open."})
	if cfg.Metrics != nil {
		s.open = register(cfg.Metrics.Registry, s.open)
		s.waited = register(cfg.Metrics.Registry, s.waited)
	}
	return s
}

// register registers c, or returns the collector registered before under
// its name: a second Server on the same metrics counts on the same ones.
func register[C prometheus.Collector](r *prometheus.Registry, c C) C {
	var are prometheus.AlreadyRegisteredError
	if err := r.Register(c); errors.As(err, &are) {
		if old, ok := are.ExistingCollector.(C); ok {
			return old
		}
	}
	return c
}

// DefaultMaxConns is the connections the endpoint serves at once: above
// the 40 Telegram opens to a webhook at most by default, with room for
// Prometheus and health checks.
const DefaultMaxConns = 64

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Options returns the Server's options, defaults filled in.
func (s *Server) Options() Options { return s.cfg.Options }

// Handle adds a route, before Start.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// A hostRoute takes the requests whose Host header it matches.
type hostRoute struct {
	match func(host string) bool
	h     http.Handler
}

// HandleHost gives h every request whose Host header match accepts,
// before Start: such requests reach none of the other routes, so that a
// second host name (or port) of the endpoint serves h alone.
func (s *Server) HandleHost(match func(host string) bool, h http.Handler) {
	s.hosts = append(s.hosts, hostRoute{match, h})
}

// route serves r by its host's route, else by its path's.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	for _, hr := range s.hosts {
		if hr.match(r.Host) {
			hr.h.ServeHTTP(w, r)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// Start listens on Addr and serves in the background. An address in use
// is an error here, not a log line later.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on HTTP_LISTEN %q: %w", s.cfg.Addr, err)
	}
	s.ln = newLimitListener(ln, s.cfg.MaxConns, s.open, s.waited)
	s.served = make(chan error, 1)
	go func() { s.served <- s.srv.Serve(s.ln) }()
	s.cfg.Logger.Info("serving /metrics, /healthz and /readyz", "addr", ln.Addr().String())
	return nil
}

// Addr is the address the Server listens on, once started.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops the Server, letting requests in flight finish until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	if s.ln == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if serr := <-s.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// A report is what /healthz and /readyz answer.
type report struct {
	Status string            `json:"status"` // ok or failing
	Checks map[string]string `json:"checks"` // name -> ok, or the problem
}

// checks answers 200 when every check passes, else 503, with each check's
// result in JSON.
func (s *Server) checks(list []Check) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rep := report{Status: "ok", Checks: map[string]string{}}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, c := range list {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(r.Context(), s.cfg.CheckTimeout)
				defer cancel()
				res := "ok"
				if err := c.Check(ctx); err != nil {
					res = err.Error()
				}
				mu.Lock()
				defer mu.Unlock()
				rep.Checks[c.Name] = res
				if res != "ok" {
					rep.Status = "failing"
				}
			}()
		}
		wg.Wait()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if rep.Status != "ok" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(rep)
	}
}
