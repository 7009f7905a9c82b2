package main_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	main "github.com/mcpgram/mcpgram/cmd/mcpgram"
	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// freeAddr returns a local address with a port nobody listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrape reads /metrics into metric families.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// value is the value of the sample of family name with the given labels,
// and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// clientMetadata fetches and decodes a Client ID Metadata Document.
func clientMetadata(t *testing.T, u string) map[string]any {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", u, resp.Status, err)
	}
	return doc
}

// check answers /healthz or /readyz: the status code and each check; 0
// while nothing listens yet.
func check(t *testing.T, url string) (int, map[string]string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var rep struct{ Checks map[string]string }
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("%s: %v in %q", url, err, body)
	}
	return resp.StatusCode, rep.Checks
}

// With HTTP_LISTEN set, `mcpgram run` serves /metrics with what it did,
// /healthz while its database answers, and /readyz while Telegram answers
// and the model is not failing.
func TestRunServesMetricsAndHealth(t *testing.T) {
	readme, err := os.ReadFile("../../docs/operations.md") // before settings moves to a temporary folder
	if err != nil {
		t.Fatal(err)
	}
	path := settings(t, nil)
	tg := tgfake.New(t)
	replies := []string{
		`<use_mcp_tool><server_name>calculator</server_name><tool_name>calculate</tool_name><arguments>{"expression": "25 * 48"}</arguments></use_mcp_tool>`,
		`<attempt_completion><result>It is 1200.</result></attempt_completion>`,
	}
	llm := llmfake.New(t, llmfake.Script(
		llmfake.Reply{Status: http.StatusBadRequest, Error: "the model is gone"},
		llmfake.Text(replies[0]),
		llmfake.Text(replies[1]),
	))
	e := runEnv(t, tg, llm.URL())
	e["HTTP_LISTEN"] = freeAddr(t)
	e["PUBLIC_URL"] = "https://bot.example.com"
	base := "http://" + e["HTTP_LISTEN"]
	_, stop := startRun(t, e, path)
	defer stop()

	// With PUBLIC_URL, mcpgram's Client ID Metadata Document is served
	// where its client id says.
	tg.WaitFor(t, 30*time.Second, "the endpoint", func() bool { code, _ := check(t, base+"/healthz"); return code != 0 })
	if doc := clientMetadata(t, base+"/oauth/client-metadata.json"); doc["client_id"] != "https://bot.example.com/oauth/client-metadata.json" {
		t.Errorf("client metadata document = %v, want its own URL as client_id", doc)
	}

	// The model fails: the bot is not ready, though it lives.
	tg.Text(42, 42, "hello?")
	tg.WaitFor(t, 30*time.Second, "not ready", func() bool {
		code, checks := check(t, base+"/readyz")
		return code == http.StatusServiceUnavailable && strings.HasPrefix(checks["model"], "model: failing")
	})
	if code, checks := check(t, base+"/healthz"); code != http.StatusOK || checks["database"] != "ok" {
		t.Errorf("/healthz with a failing model = %d %v, want 200", code, checks)
	}
	// `mcpgram health` asks /readyz when HTTP_LISTEN is set.
	if _, _, err := run(t, e, "", "--mcp-settings", path, "health"); err == nil || !strings.Contains(err.Error(), "model: failing") {
		t.Errorf("health with a failing model: %v, want unhealthy naming the model", err)
	}

	// It answers again: ready.
	tg.Text(42, 42, "what is 25 * 48?")
	tg.WaitText(t, 42, "It is 1200.")
	if code, checks := check(t, base+"/readyz"); code != http.StatusOK || checks["telegram"] != "ok" || checks["model"] != "ok" || checks["database"] != "ok" {
		t.Errorf("/readyz after a good turn = %d %v, want 200 with every check ok", code, checks)
	}
	if out, _, err := run(t, e, "", "--mcp-settings", path, "health"); err != nil || !strings.HasPrefix(out, "healthy") {
		t.Errorf("health of a ready bot: %q, %v", out, err)
	}

	fams := scrape(t, base)
	for _, want := range []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"mcpgram_telegram_updates_total", nil, 1},
		{"mcpgram_telegram_requests_total", map[string]string{"method": "sendMessage", "status": "ok"}, 1},
		{"mcpgram_server_status", map[string]string{"server": "calculator", "status": "running"}, 1},
		{"mcpgram_server_tools", map[string]string{"server": "calculator"}, 1},
		{"mcpgram_server_start_seconds", map[string]string{"server": "calculator"}, 1},
		{"mcpgram_chats_running", nil, 0},
		{"mcpgram_inbox_pending", nil, 0},
		{"go_goroutines", nil, 1},
		{"process_resident_memory_bytes", nil, 1},
	} {
		v, ok := value(fams, want.name, want.labels)
		if !ok || v < want.min {
			t.Errorf("%s%v = %v (present: %v), want at least %v", want.name, want.labels, v, ok, want.min)
		}
	}
	// What the two turns did, exactly: one failed at the model, one ran
	// the calculator. llmfake counts a quarter of the bytes as tokens.
	in := 0
	for _, c := range llm.Calls()[1:] {
		for _, m := range c.Request.Messages {
			in += len(m.Content) / 4
		}
	}
	out := len(replies[0])/4 + len(replies[1])/4
	model := map[string]string{"model": "gpt-4o-mini"}
	with := func(labels map[string]string, kv ...string) map[string]string {
		m := maps.Clone(labels)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	calc := map[string]string{"server": "calculator", "tool": "calculate"}
	for _, want := range []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{"mcpgram_turns_total", map[string]string{"outcome": "answer"}, 1},
		{"mcpgram_turns_total", map[string]string{"outcome": "error"}, 1},
		{"mcpgram_model_calls_total", with(model, "outcome", "ok"), 2},
		{"mcpgram_model_calls_total", with(model, "outcome", "bad_request"), 1},
		{"mcpgram_model_call_seconds", model, 3},
		{"mcpgram_tokens_total", with(model, "direction", "in", "source", "provider"), float64(in)},
		{"mcpgram_tokens_total", with(model, "direction", "out", "source", "provider"), float64(out)},
		{"mcpgram_tool_calls_total", with(calc, "status", "ok"), 1},
		{"mcpgram_tool_call_seconds", calc, 1},
		// The call and the completion, both right at the first try.
		{"mcpgram_tool_format_total", with(model, "result", "first_try", "kind", ""), 2},
	} {
		if v, ok := value(fams, want.name, want.labels); !ok || v != want.value {
			t.Errorf("%s%v = %v (present: %v), want %v", want.name, want.labels, v, ok, want.value)
		}
	}
	for _, series := range []string{"mcpgram_turns_total", "mcpgram_model_calls_total", "mcpgram_tool_calls_total", "mcpgram_tool_format_total"} {
		if n := len(fams[series].GetMetric()); n != map[string]int{"mcpgram_turns_total": 2, "mcpgram_model_calls_total": 2, "mcpgram_tool_calls_total": 1, "mcpgram_tool_format_total": 1}[series] {
			t.Errorf("%s has %d series: more than the turns made", series, n)
		}
	}
	for name := range fams {
		if strings.HasPrefix(name, "mcpgram_") && !strings.Contains(string(readme), "`"+name+"`") {
			t.Errorf("docs/operations.md does not document %s", name)
		}
		if f := fams[name]; strings.HasPrefix(name, "mcpgram_") {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "user" || l.GetName() == "chat" || strings.Contains(l.GetValue(), "42") {
						t.Errorf("%s has a label %s=%q: no user or chat ids as labels", name, l.GetName(), l.GetValue())
					}
				}
			}
		}
	}
}

// In webhook mode `mcpgram run` takes updates at /telegram on HTTP_LISTEN,
// never polls, and keeps the secret out of the log.
func TestRunWebhookMode(t *testing.T) {
	path := settings(t, nil)
	tg := tgfake.New(t)
	llm := llmfake.New(t, llmfake.Script(llmfake.Text(`<attempt_completion><result>Hello from a webhook.</result></attempt_completion>`)))
	e := runEnv(t, tg, llm.URL())
	const secret = "webhook-Secret_123"
	e["TELEGRAM_MODE"], e["TELEGRAM_WEBHOOK_SECRET"], e["HTTP_LISTEN"] = "webhook", secret, freeAddr(t)
	// The operator registered the webhook (TELEGRAM_WEBHOOK_URL empty).
	resp, err := http.PostForm(tg.URL()+"/bot"+tgfake.Token+"/setWebhook", map[string][]string{
		"url": {"http://" + e["HTTP_LISTEN"] + "/telegram"}, "secret_token": {secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	logs, stop := startRun(t, e, path)

	tg.Text(42, 42, "hi")
	tg.WaitText(t, 42, "Hello from a webhook.")
	tg.WaitFor(t, 30*time.Second, "a getWebhookInfo heartbeat", func() bool { return len(tg.Calls("getWebhookInfo")) > 0 })
	stop()
	if n := len(tg.Calls("getUpdates")); n != 0 {
		t.Errorf("getUpdates called %d times in webhook mode", n)
	}
	if strings.Contains(logs.String(), secret) {
		t.Error("the log shows the webhook secret")
	}
}

// A voice note goes through TRANSCRIPTION_MODEL on the model's endpoint,
// with the model's key, and its transcript is answered.
func TestRunVoiceNote(t *testing.T) {
	path := settings(t, nil)
	tg := tgfake.New(t)
	llm := llmfake.New(t, llmfake.Script(llmfake.Text(`<attempt_completion><result>Lights on.</result></attempt_completion>`)))
	llm.SetTranscriber(func(tr llmfake.Transcription) (string, int) {
		return "please turn on the lights", 0
	})
	e := runEnv(t, tg, llm.URL())
	e["TRANSCRIPTION_MODEL"] = "whisper-1"
	_, stop := startRun(t, e, path)
	defer stop()
	tg.SendFile(tgfake.Upload{ChatID: 42, UserID: 42, Kind: "voice", MIMEType: "audio/ogg", Data: []byte("OggS")})
	tg.WaitText(t, 42, "Lights on.")
	if calls := llm.Calls(); len(calls) != 1 || calls[0].Request.Last() != "please turn on the lights" {
		t.Errorf("the model was asked %+v, want the transcript", calls)
	}
	if tr := llm.Transcriptions(); len(tr) != 1 || tr[0].Model != "whisper-1" || tr[0].Authorization != "Bearer sk-test" || string(tr[0].Audio) != "OggS" {
		t.Errorf("transcriptions: %+v", tr)
	}
}

// With Telegram unreachable from the start, the bot lives (/healthz) but
// is not ready (/readyz names Telegram), and `mcpgram health` says so.
func TestReadyzWhenTelegramIsUnreachable(t *testing.T) {
	path := settings(t, nil)
	tg := tgfake.New(t)
	e := runEnv(t, tg, "http://"+freeAddr(t))
	e["TELEGRAM_API_URL"] = "http://" + freeAddr(t) // nothing listens there
	e["HTTP_LISTEN"] = freeAddr(t)
	base := "http://" + e["HTTP_LISTEN"]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logs := &testenv.Buffer{}
	go func() {
		done <- main.Main(ctx, []string{"--mcp-settings", path, "run"}, strings.NewReader(""), logs, logs, e.lookup, nil)
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			// Stopped while still trying to reach Telegram: it says so.
			if err == nil || !strings.Contains(err.Error(), "connect to Telegram") {
				t.Errorf("run returned %v, want the failure to reach Telegram", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("run did not stop after its context ended")
		}
	}()

	tg.WaitFor(t, 30*time.Second, "the endpoint", func() bool { code, _ := check(t, base+"/healthz"); return code != 0 })
	if code, checks := check(t, base+"/healthz"); code != http.StatusOK || checks["database"] != "ok" {
		t.Errorf("/healthz = %d %v, want 200: the process and its database are fine", code, checks)
	}
	if code, checks := check(t, base+"/readyz"); code != http.StatusServiceUnavailable || checks["telegram"] != "telegram: no success yet" {
		t.Errorf("/readyz = %d %v, want 503 naming Telegram", code, checks)
	}
	if _, _, err := run(t, e, "", "--mcp-settings", path, "health"); err == nil || !strings.Contains(err.Error(), "telegram") {
		t.Errorf("health with Telegram unreachable: %v, want unhealthy naming Telegram", err)
	}
	testenv.Eventually(t, 30*time.Second, "a retry logged", func() bool { return strings.Contains(logs.String(), "cannot reach Telegram") })
}
