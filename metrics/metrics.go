// Package metrics holds mcpgram's Prometheus metrics, on a registry of
// its own (so tests read exactly what one process counted) with the Go
// runtime and process collectors beside them.
//
// Every method is safe on a nil *Metrics, which counts nothing: packages
// take a *Metrics and need no check when none is configured. Labels have
// bounded values: models, servers, tools, outcomes and kinds, never user or
// chat ids.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics is the set of mcpgram's metrics.
type Metrics struct {
	// Registry holds every metric below, and the Go and process collectors.
	Registry *prometheus.Registry

	turns          *prometheus.CounterVec
	modelCalls     *prometheus.CounterVec
	modelSeconds   *prometheus.HistogramVec
	firstToken     *prometheus.HistogramVec
	tokens         *prometheus.CounterVec
	format         *prometheus.CounterVec
	toolCalls      *prometheus.CounterVec
	toolSeconds    *prometheus.HistogramVec
	resourceReads  *prometheus.CounterVec
	serverRestarts *prometheus.CounterVec
	serverStart    *prometheus.HistogramVec
	updates        prometheus.Counter
	tgRequests     *prometheus.CounterVec
	tgWaits        prometheus.Counter
	searches       *prometheus.CounterVec
	searchFound    *prometheus.CounterVec
	searchCalled   *prometheus.CounterVec
	appRequests    *prometheus.CounterVec
	tasksStarted   *prometheus.CounterVec
	tasksFinished  *prometheus.CounterVec
	taskSeconds    *prometheus.HistogramVec
}

// latency buckets, in seconds: from a local tool's few milliseconds to a
// slow model's minutes.
var latency = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// taskSpan buckets, in seconds: a background task runs from seconds to
// hours.
var taskSpan = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600}

// New returns the metrics, registered on a new registry.
func New() *Metrics {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := factory{r}
	return &Metrics{
		Registry:       r,
		turns:          f.counter("turns_total", "Turns by how they ended.", "outcome"),
		modelCalls:     f.counter("model_calls_total", "Model calls by model and outcome.", "model", "outcome"),
		modelSeconds:   f.histogram("model_call_seconds", "Duration of whole model calls.", "model"),
		firstToken:     f.histogram("model_first_token_seconds", "Time from a model call's start to its first streamed token.", "model"),
		tokens:         f.counter("tokens_total", "Tokens by model and direction (in: prompt, out: completion); source is provider or estimate.", "model", "direction", "source"),
		format:         f.counter("tool_format_total", "Tool calls in the model's replies, by model and result (first_try, repaired, fed_back) and kind of problem or repair.", "model", "result", "kind"),
		toolCalls:      f.counter("tool_calls_total", "MCP tool calls by server, tool and status (ok, tool_error, timeout, denied, invalid, failed).", "server", "tool", "status"),
		toolSeconds:    f.histogram("tool_call_seconds", "Duration of MCP tool calls.", "server", "tool"),
		resourceReads:  f.counter("resource_reads_total", "MCP resource reads by server and status.", "server", "status"),
		serverRestarts: f.counter("server_restarts_total", "MCP server restarts after a crash.", "server"),
		serverStart:    f.histogram("server_start_seconds", "Time for an MCP server to start and list its tools.", "server"),
		updates:        f.plainCounter("telegram_updates_total", "Telegram updates received."),
		tgRequests:     f.counter("telegram_requests_total", "Bot API calls by method and status (ok, or the HTTP code; network for transport errors).", "method", "status"),
		tgWaits:        f.plainCounter("telegram_retry_after_total", "Times Telegram asked to wait (429 with retry_after)."),
		searches:       f.counter("tool_searches_total", "Searches for tools (search_tools) by model and result (found, none).", "model", "result"),
		searchFound:    f.counter("tool_search_found_total", "Tools a search for tools returned, by server and tool.", "server", "tool"),
		searchCalled:   f.counter("tool_search_called_total", "Calls of a tool that a search of the same turn had returned, by server and tool.", "server", "tool"),
		appRequests:    f.counter("app_requests_total", "Requests of MCP Apps' pages to the bot, by method (page, frame, or the bridge's JSON-RPC method) and status (ok, refused, limited, error).", "method", "status"),
		tasksStarted:   f.counter("tasks_started_total", "Tool calls that became background tasks, or went on in the background, by server.", "server"),
		tasksFinished:  f.counter("tasks_finished_total", "Background tasks that ended, by server and outcome (completed, failed, cancelled, expired, lost, interrupted).", "server", "outcome"),
		taskSeconds:    f.histogramOf(taskSpan, "task_duration_seconds", "Time from a background task's start to its end.", "server"),
	}
}

// factory registers metrics with the mcpgram_ prefix.
type factory struct{ r *prometheus.Registry }

func (f factory) counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mcpgram", Name: name, Help: help}, labels)
	f.r.MustRegister(c)
	return c
}

func (f factory) plainCounter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: "mcpgram", Name: name, Help: help})
	f.r.MustRegister(c)
	return c
}

func (f factory) histogram(name, help string, labels ...string) *prometheus.HistogramVec {
	return f.histogramOf(latency, name, help, labels...)
}

func (f factory) histogramOf(buckets []float64, name, help string, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "mcpgram", Name: name, Help: help, Buckets: buckets}, labels)
	f.r.MustRegister(h)
	return h
}

// Gauge registers a gauge read from fn at each scrape, such as the depth of
// the inbox; it does nothing on a nil *Metrics.
func (m *Metrics) Gauge(name, help string, fn func() float64) {
	if m == nil {
		return
	}
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "mcpgram", Name: name, Help: help}, fn))
}

// Collector registers a collector of its own, such as the servers' status
// read from the hub at each scrape.
func (m *Metrics) Collector(c prometheus.Collector) {
	if m == nil {
		return
	}
	m.Registry.MustRegister(c)
}

// Turn counts a turn that ended with outcome.
func (m *Metrics) Turn(outcome string) {
	if m == nil {
		return
	}
	m.turns.WithLabelValues(outcome).Inc()
}

// ModelCall counts a model call, its duration and, when it streamed, the
// time to its first token (0: none).
func (m *Metrics) ModelCall(model, outcome string, d, firstToken time.Duration) {
	if m == nil {
		return
	}
	m.modelCalls.WithLabelValues(model, outcome).Inc()
	m.modelSeconds.WithLabelValues(model).Observe(d.Seconds())
	if firstToken > 0 {
		m.firstToken.WithLabelValues(model).Observe(firstToken.Seconds())
	}
}

// Tokens counts tokens a model read (in) and wrote (out); estimated says
// they were estimated because the provider reported none.
func (m *Metrics) Tokens(model string, in, out int, estimated bool) {
	if m == nil {
		return
	}
	source := "provider"
	if estimated {
		source = "estimate"
	}
	m.tokens.WithLabelValues(model, "in", source).Add(float64(in))
	m.tokens.WithLabelValues(model, "out", source).Add(float64(out))
}

// Format counts a tool call of the model's by result (first_try, repaired,
// fed_back) and kind ("" for first_try).
func (m *Metrics) Format(model, result, kind string) {
	if m == nil {
		return
	}
	m.format.WithLabelValues(model, result, kind).Inc()
}

// ToolCall counts an MCP tool call and its duration; a call that never
// ran (denied, invalid: d is 0) is counted but not timed, so that it does
// not pull the latency quantiles down.
func (m *Metrics) ToolCall(server, tool, status string, d time.Duration) {
	if m == nil {
		return
	}
	m.toolCalls.WithLabelValues(server, tool, status).Inc()
	if d > 0 {
		m.toolSeconds.WithLabelValues(server, tool).Observe(d.Seconds())
	}
}

// ResourceRead counts an MCP resource read.
func (m *Metrics) ResourceRead(server, status string) {
	if m == nil {
		return
	}
	m.resourceReads.WithLabelValues(server, status).Inc()
}

// AppRequest counts a request of an MCP App's page; method is one the
// bot knows, else "other".
func (m *Metrics) AppRequest(method, status string) {
	if m == nil {
		return
	}
	m.appRequests.WithLabelValues(method, status).Inc()
}

// ServerStarted records how long a server took to start and list its tools.
func (m *Metrics) ServerStarted(server string, d time.Duration) {
	if m == nil {
		return
	}
	m.serverStart.WithLabelValues(server).Observe(d.Seconds())
}

// ServerRestart counts a restart of a server after a crash.
func (m *Metrics) ServerRestart(server string) {
	if m == nil {
		return
	}
	m.serverRestarts.WithLabelValues(server).Inc()
}

// Search counts a search for tools by model; found says it found any.
func (m *Metrics) Search(model string, found bool) {
	if m == nil {
		return
	}
	result := "none"
	if found {
		result = "found"
	}
	m.searches.WithLabelValues(model, result).Inc()
}

// SearchFound counts a tool a search returned.
func (m *Metrics) SearchFound(server, tool string) {
	if m == nil {
		return
	}
	m.searchFound.WithLabelValues(server, tool).Inc()
}

// SearchCalled counts a call of a tool that a search of the same turn
// had returned: the model called what it found.
func (m *Metrics) SearchCalled(server, tool string) {
	if m == nil {
		return
	}
	m.searchCalled.WithLabelValues(server, tool).Inc()
}

// Updates counts Telegram updates received.
func (m *Metrics) Updates(n int) {
	if m == nil {
		return
	}
	m.updates.Add(float64(n))
}

// TelegramRequest counts a Bot API call by method and status; retryAfter
// says Telegram asked to wait.
func (m *Metrics) TelegramRequest(method, status string, retryAfter bool) {
	if m == nil {
		return
	}
	m.tgRequests.WithLabelValues(method, status).Inc()
	if retryAfter {
		m.tgWaits.Inc()
	}
}

// TaskStarted counts a tool call of server that became a background task.
func (m *Metrics) TaskStarted(server string) {
	if m == nil {
		return
	}
	m.tasksStarted.WithLabelValues(server).Inc()
}

// TaskFinished counts a background task of server that ended with
// outcome, d after its start.
func (m *Metrics) TaskFinished(server, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.tasksFinished.WithLabelValues(server, outcome).Inc()
	m.taskSeconds.WithLabelValues(server).Observe(max(d, 0).Seconds())
}
