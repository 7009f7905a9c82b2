//go:build pprof

package main

import (
	"log/slog"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
)

// A binary built with -tags pprof serves Go's profiles at
// MCPGRAM_PPROF_LISTEN, for the soak of BenchmarkManyChats (see
// docs/benchmarks.md). Normal builds have no such listener and no such
// setting: profiles show every chat's state, and are nobody's business
// in production. The listener lives as long as the process.
func init() {
	addr := os.Getenv("MCPGRAM_PPROF_LISTEN")
	if addr == "" {
		return
	}
	go func() {
		if err := http.ListenAndServe(addr, nil); err != nil {
			slog.Error("pprof listener", "addr", addr, "err", err)
		}
	}()
}
