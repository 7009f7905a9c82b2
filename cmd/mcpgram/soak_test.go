package main_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
	"github.com/mcpgram/mcpgram/testkit/tgfake"
)

// soakBlock is how many chats the soak sends at once, and the span its
// first and last figures are taken over.
const soakBlock = 5000

// BenchmarkManyChats serves b.N distinct chats, one tool-calling turn
// each, unpaced, in blocks of soakBlock sent at once, through one
// instance on SQLite and one on PostgreSQL (both by long polling). After
// the first block and at the end it reads the instance's RSS, its heap in
// use after a GC and its goroutines; it reports them and the rate of the
// last block over the first's. The binary is built with -tags pprof;
// with -test.artifacts (go test -artifacts) the heap profiles and
// goroutine dumps of both moments are kept. See docs/benchmarks.md.
//
//	go test -run '^$' -bench ManyChats -benchtime 100000x -timeout 60m ./cmd/mcpgram
func BenchmarkManyChats(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run("engine="+engine, func(b *testing.B) {
			model := llmfake.New(b, soakModel)
			s := startSoak(b, engine, model)
			b.ResetTimer()
			var first, last soakBlockRun
			var early soakSample
			for from := 0; from < b.N; from += soakBlock {
				n := min(soakBlock, b.N-from)
				last = s.serve(b, scaleFirst+int64(from), n)
				if from == 0 {
					first = last
					early = s.sample(b, "first")
				}
			}
			b.StopTimer()
			end := s.sample(b, "end")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
			b.ReportMetric(first.took.Seconds()/last.took.Seconds(), "last/first-rate")
			b.ReportMetric(first.cpuPerTurn(), "ms-cpu/turn-first")
			b.ReportMetric(last.cpuPerTurn(), "ms-cpu/turn-last")
			b.ReportMetric(early.rss/1e6, "MB-rss-first")
			b.ReportMetric(end.rss/1e6, "MB-rss-end")
			b.ReportMetric(early.heap/1e6, "MB-heap-first")
			b.ReportMetric(end.heap/1e6, "MB-heap-end")
			b.ReportMetric(early.goroutines, "goroutines-first")
			b.ReportMetric(end.goroutines, "goroutines-end")
			b.ReportMetric(early.goroutines-early.conns, "goroutines-but-conns-first")
			b.ReportMetric(end.goroutines-end.conns, "goroutines-but-conns-end")
		})
	}
}

// soakModel answers "please answer TAG" with a call of the echo tool,
// and its result with "answer TAG".
func soakModel(c llmfake.Call) llmfake.Reply {
	msgs := c.Request.Messages
	last := msgs[len(msgs)-1].Content
	if strings.Contains(last, "please answer") {
		return llmfake.Text(`<use_mcp_tool><server_name>jobs</server_name><tool_name>echo</tool_name><arguments>{"message": "` + scaleTag.FindString(last) + `"}</arguments></use_mcp_tool>`)
	}
	return llmfake.Text(`<attempt_completion><result>answer ` + scaleTag.FindString(last) + `</result></attempt_completion>`)
}

// A soak is one instance under soak, and where to ask it.
type soak struct {
	tg    *tgfake.Server
	cmd   *exec.Cmd
	pprof string // the address of its profiles
}

func startSoak(b *testing.B, engine string, model *llmfake.Server) *soak {
	b.Helper()
	dir := b.TempDir()
	build := exec.Command("go", "build", "-tags", "pprof", "-o", dir+string(filepath.Separator), "./cmd/mcpgram", "./cmd/mcpgram-confine")
	build.Dir = testenv.Root(b)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	s := &soak{tg: tgfake.New(b), pprof: freeAddr(b)}
	settings := testenv.WriteSettings(b, dir, map[string]any{
		"jobs": map[string]any{"command": testenv.TestServer(b, "echo"), "autoApprove": []string{"echo"}, "sandbox": "off"},
	})
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "MCPGRAM_PPROF_LISTEN=" + s.pprof,
		"TELEGRAM_BOT_TOKEN=" + tgfake.Token, "TELEGRAM_API_URL=" + s.tg.URL(),
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.URL(),
		"RATE_LIMIT_PER_MINUTE=1000", "TELEGRAM_SENDS_PER_SECOND=0", "LOG_LEVEL=warn",
	}
	if engine == "postgres" {
		env = append(env, "DATABASE_URL="+testenv.Postgres(b))
	} else {
		env = append(env, "DATABASE_PATH="+filepath.Join(dir, "mcpgram.db"))
	}
	s.cmd = exec.Command(filepath.Join(dir, "mcpgram"), "--mcp-settings", settings, "run")
	s.cmd.Dir, s.cmd.Env = dir, env
	logs, err := os.Create(filepath.Join(dir, "mcpgram.log"))
	if err != nil {
		b.Fatal(err)
	}
	s.cmd.Stderr = logs
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		_, _ = s.cmd.Process.Wait()
		logs.Close()
	})
	waitReady(b, "http://"+s.pprof+"/debug/pprof/")
	s.serve(b, 1, 1) // warm up: the server started, the connections open
	return s
}

// A soakBlockRun is how long a block of chats took to answer, in time
// and in the instance's CPU time: the machine may be shared, and the CPU
// a turn costs does not depend on what else runs.
type soakBlockRun struct {
	chats int
	took  time.Duration
	cpu   time.Duration
}

func (r soakBlockRun) cpuPerTurn() float64 {
	return float64(r.cpu) / float64(time.Millisecond) / float64(r.chats)
}

// serve sends "please answer" in n new chats from chat first on, at
// once, and returns how long until every one was answered.
func (s *soak) serve(b *testing.B, first int64, n int) soakBlockRun {
	b.Helper()
	start, cpu := time.Now(), s.cpu(b)
	for c := first; c < first+int64(n); c++ {
		s.tg.Text(c, c, fmt.Sprintf("please answer c%d-m1", c))
	}
	// Chats are answered about in order: wait for the oldest unanswered
	// one, so that each check costs what was answered since the last.
	next := first
	s.tg.WaitFor(b, 10*time.Minute, "every chat answered", func() bool {
		for next < first+int64(n) && len(answers(s.tg, next)) > 0 {
			next++
		}
		return next == first+int64(n)
	})
	return soakBlockRun{chats: n, took: time.Since(start), cpu: s.cpu(b) - cpu}
}

// cpu is the CPU time the instance used so far (user and system).
func (s *soak) cpu(b *testing.B) time.Duration {
	b.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command's name, which is in parentheses:
	// utime and stime are the 12th and 13th, in clock ticks of 10 ms.
	_, rest, _ := strings.Cut(string(stat), ") ")
	f := strings.Fields(rest)
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// A soakSample is what the instance holds at one moment. conns are the
// goroutines of its HTTP connections (two each), which follow the most
// calls in flight to Telegram and the model in the last 90 seconds (the
// idle timeout), up to the pools' caps, whatever the chats served.
type soakSample struct {
	rss, heap, goroutines, conns float64
}

// connStacks are the frames of the two goroutines of an HTTP connection.
var connStacks = regexp.MustCompile(`(?m)^(\d+) @.*\n(?:#.*\n)*?#\s+0x[0-9a-f]+\s+net/http\.\(\*persistConn\)\.(?:readLoop|writeLoop)\b`)

var heapInuse = regexp.MustCompile(`(?m)^# HeapInuse = (\d+)$`)

// sample reads the instance's heap in use after a GC, its RSS and its
// goroutines, and keeps its heap profile and goroutine dump as
// artifacts named after when.
func (s *soak) sample(b *testing.B, when string) soakSample {
	b.Helper()
	var out soakSample
	heap := s.profile(b, "heap?gc=1&debug=1")
	if m := heapInuse.FindSubmatch(heap); m != nil {
		out.heap, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	stacks := s.profile(b, "goroutine?debug=1")
	if _, err := fmt.Sscanf(string(stacks), "goroutine profile: total %g", &out.goroutines); err != nil {
		b.Fatalf("goroutine dump: %v", err)
	}
	for _, m := range connStacks.FindAllSubmatch(stacks, -1) {
		n, _ := strconv.ParseFloat(string(m[1]), 64)
		out.conns += n
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if kb, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(kb, "kB")), 64)
			out.rss = f * 1024
		}
	}
	if dir := b.ArtifactDir(); dir != "" {
		// The directory of the run with b.N == 1 (the benchmark's first)
		// may be gone by now.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for name, body := range map[string][]byte{"heap-" + when + ".pb.gz": s.profile(b, "heap"), "goroutines-" + when + ".txt": stacks} {
			if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return out
}

// profile GETs /debug/pprof/path from the instance.
func (s *soak) profile(b *testing.B, path string) []byte {
	b.Helper()
	resp, err := http.Get("http://" + s.pprof + "/debug/pprof/" + path)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("profile %s: %d %v", path, resp.StatusCode, err)
	}
	return body
}
