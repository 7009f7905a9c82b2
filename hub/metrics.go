package hub

import (
	"github.com/mcpgram/mcpgram"
	"github.com/prometheus/client_golang/prometheus"
)

// statusDesc describes the servers' status as a scrape reads it.
var (
	statusDesc = prometheus.NewDesc("mcpgram_server_status", "1 for each server's current status (running, starting, restarting, failed, disabled).", []string{"server", "status"}, nil)
	toolsDesc  = prometheus.NewDesc("mcpgram_server_tools", "Tools a running server offers.", []string{"server"}, nil)
)

// A collector reports the catalog at each scrape, so the figures are never
// stale and nothing is counted on the call path.
type collector struct{ h *Hub }

// Collector returns a Prometheus collector of the servers' status and
// tool counts, for metrics.Metrics.Collector.
func (h *Hub) Collector() prometheus.Collector { return collector{h} }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- statusDesc
	ch <- toolsDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.h.Catalog().Servers {
		ch <- prometheus.MustNewConstMetric(statusDesc, prometheus.GaugeValue, 1, s.Name, string(s.Status))
		if s.Status == mcpgram.StatusRunning {
			ch <- prometheus.MustNewConstMetric(toolsDesc, prometheus.GaugeValue, float64(len(s.Tools)), s.Name)
		}
	}
}
