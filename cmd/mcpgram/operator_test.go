package main_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/llmfake"
	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A session is the real binary's terminal chat, driven as a person does:
// lines typed on stdin, Ctrl-C as SIGINT, and what it prints read back.
type session struct {
	t        *testing.T
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	out, err *testenv.Buffer
	done     chan error
}

func startChat(t *testing.T, b *binary, settings string, env ...string) *session {
	t.Helper()
	cmd := exec.Command(b.path, "--mcp-settings", settings, "chat")
	cmd.Dir = b.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "OPENAI_API_KEY=sk-test", "DATABASE_PATH=" + filepath.Join(b.dir, "state", "db.sqlite")}, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, cmd: cmd, stdin: stdin, out: &testenv.Buffer{}, err: &testenv.Buffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = s.out, s.err
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-s.done })
	return s
}

func (s *session) send(line string) { _, _ = io.WriteString(s.stdin, line+"\n") }

// A step of a scripted conversation: wait until the chat prints wait
// (after what the step before waited for), then type line ("": nothing).
type step struct{ wait, line string }

// converse runs steps in order.
func (s *session) converse(steps []step) {
	s.t.Helper()
	seen := 0
	for _, st := range steps {
		testenv.Eventually(s.t, 30*time.Second, "the terminal to show "+st.wait, func() bool {
			return strings.Contains(s.out.String()[seen:], st.wait)
		})
		seen += strings.Index(s.out.String()[seen:], st.wait) + len(st.wait)
		if st.line != "" {
			s.send(st.line)
		}
	}
}

// wait waits until what the chat printed holds want count times.
func (s *session) wait(want string, count int) {
	s.t.Helper()
	testenv.Waiter{Explain: func() string { return "stdout:\n" + s.out.String() + "\nstderr:\n" + s.err.String() }}.
		Eventually(s.t, 30*time.Second, fmt.Sprintf("%q ×%d", want, count), func() bool { return strings.Count(s.out.String(), want) >= count })
}

func (s *session) interrupt() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		s.t.Fatal(err)
	}
}

// end closes stdin, as Ctrl-D does, and waits for a clean exit.
func (s *session) end() {
	s.t.Helper()
	s.stdin.Close()
	select {
	case err := <-s.done:
		s.done <- err // for the cleanup
		if err != nil {
			s.t.Errorf("chat ended with %v; stderr:\n%s", err, s.err.String())
		}
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		s.t.Fatal("the chat did not end with its input")
	}
}

// answerAtNextStart starts the chat again, which must first show what the
// run before left open, as open (the prompt that asks for the answer
// included); line answers it, and the chat must then print reply.
func answerAtNextStart(t *testing.T, b *binary, settings, url, open, line, reply string) {
	t.Helper()
	s := startChat(t, b, settings, url)
	s.wait("Still open from before:\n"+open, 1)
	s.send(line)
	s.wait(reply, 1)
	s.end()
}

// callThenAnswer is a model that makes call, then answers answer once
// the call's result is in.
func callThenAnswer(call, answer string) llmfake.Handler {
	return func(c llmfake.Call) llmfake.Reply {
		if strings.Contains(c.Request.Last(), "] Result:") {
			return llmfake.Text("<attempt_completion><result>" + answer + "</result></attempt_completion>")
		}
		return llmfake.Text(call)
	}
}

// In the terminal chat the operator is the one who can fix the model's
// settings: a failed model call says what the endpoint answered and where
// the log is, not "try again later".
func TestChatSaysWhatIsWrongWithTheModel(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/v1"
	l.Close()
	unknown := llmfake.New(t, llmfake.Script(llmfake.Reply{Status: 404, Error: "model \"gpt-9\" not found, try pulling it first"}))
	log := filepath.Join(b.dir, "state", "chat.log")
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"refused", []string{"OPENAI_BASE_URL=" + refused}, "! The model endpoint " + refused + " cannot be reached (connection refused): check that it runs and that its base URL is right. More in " + log},
		{"unknown model", []string{"OPENAI_BASE_URL=" + unknown.URL(), "OPENAI_MODEL=gpt-9"}, `! The model endpoint ` + unknown.URL() + ` does not know the model "gpt-9" (HTTP 404 Not Found: model "gpt-9" not found, try pulling it first): check the model's name. More in ` + log},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startChat(t, b, settings, tt.env...)
			s.send("hi")
			s.wait(tt.want, 1)
			if strings.Contains(s.out.String(), "try again") {
				t.Errorf("the chat says to try again:\n%s", s.out.String())
			}
			s.end()
		})
	}
}

// An approval's y/n prompt takes Ctrl-C as no, and the chat goes on; one
// left open when the chat ended is shown again at the next start, and
// answered there.
func TestChatApprovalsAtCtrlCAndAcrossRuns(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"echo": testenv.EchoEntry(t, "echo")})
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		last := c.Request.Last()
		switch {
		case strings.Contains(last, "denied"):
			return llmfake.Text("<attempt_completion><result>Not added.</result></attempt_completion>")
		case strings.Contains(last, "The sum of"):
			return llmfake.Text("<attempt_completion><result>Added: 5.</result></attempt_completion>")
		}
		return llmfake.Text(`<use_mcp_tool><server_name>echo</server_name><tool_name>add</tool_name><arguments>{"a": 2, "b": 3}</arguments></use_mcp_tool>`)
	})
	url := "OPENAI_BASE_URL=" + model.URL()

	s := startChat(t, b, settings, url)
	s.send("add 2 and 3")
	s.wait("approve? [y/n/a] ", 1)
	s.interrupt()
	s.wait("Not added.", 1)
	s.wait("> ", 2)
	s.send("add 2 and 3 again")
	s.wait("approve? [y/n/a] ", 2)
	s.end()

	answerAtNextStart(t, b, settings, url,
		"🔐 Approval needed\nRun add on echo with:\n• a: 2\n• b: 3\nℹ️ Its server says this tool changes nothing; keeps to its own data (the server's claim, not checked).\napprove? [y/n/a] ",
		"y", "Added: 5.")
	if n := len(model.Calls()); n != 4 {
		t.Errorf("the model was called %d times, want 4", n)
	}
}

// A call that needs the user's consent asks y or n, never "always".
func TestChatConsentOffersNoAlways(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"echo": testenv.EchoEntry(t, "keep")})
	model := llmfake.New(t, callThenAnswer(`<use_mcp_tool><server_name>echo</server_name><tool_name>keep</tool_name><arguments>{"mode": "write"}</arguments></use_mcp_tool>`, "Kept."))
	s := startChat(t, b, settings, "OPENAI_BASE_URL="+model.URL())
	s.send("keep this")
	s.wait("agree? [y/n] ", 1)
	if strings.Contains(s.out.String(), "[y/n/a]") {
		t.Errorf("the consent prompt offers always:\n%s", s.out.String())
	}
	s.send("a")
	s.wait("Your consent is asked each time: answer y or n.", 1)
	s.send("y")
	s.wait("Kept.", 1)
	s.end()
}

// A question left open when the chat ended is asked again at the next
// start, its options numbered, and a number answers it.
func TestChatAsksAnOpenQuestionAgain(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{})
	model := llmfake.New(t, func(c llmfake.Call) llmfake.Reply {
		if strings.Contains(c.Request.Last(), "Blue") {
			return llmfake.Text("<attempt_completion><result>Blue it is.</result></attempt_completion>")
		}
		return llmfake.Text("<ask_followup_question><question>Which colour?</question><options>[\"Red\", \"Blue\"]</options></ask_followup_question>")
	})
	url := "OPENAI_BASE_URL=" + model.URL()

	s := startChat(t, b, settings, url)
	s.send("paint it")
	s.wait("Which colour?\n  1. Red\n  2. Blue\n", 1)
	s.end()

	answerAtNextStart(t, b, settings, url, "Which colour?\n  1. Red\n  2. Blue\n> ", "2", "Blue it is.")
	if n := len(model.Calls()); n != 2 {
		t.Errorf("the model was called %d times, want 2", n)
	}
}

// A turn that fails for another reason keeps its sentence, and the
// operator reads the cause beside it and where the log is.
func TestChatSaysWhyATurnFailed(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"echo": testenv.EchoEntry(t, "echo")})
	model := llmfake.New(t, func(llmfake.Call) llmfake.Reply {
		return llmfake.Text(`<use_mcp_tool><server_name>echo</server_name><tool_name>no_such_tool</tool_name><arguments>{}</arguments></use_mcp_tool>`)
	})
	s := startChat(t, b, settings, "OPENAI_BASE_URL="+model.URL())
	s.send("do it")
	s.wait("! The model is struggling to use the tools correctly (3 invalid calls in a row), so I stopped. Try rephrasing your request, or send /reset. (3 invalid replies in a row) More in "+filepath.Join(b.dir, "state", "chat.log"), 1)
	s.end()
}

// The terminal chat asks the memory server's consent with the card
// Telegram shows, in text: the words to remember quoted, not the call's
// JSON; agreed, they are stored.
func TestChatMemoryConsentCard(t *testing.T) {
	t.Parallel()
	b := buildBinary(t)
	settings := testenv.WriteSettings(t, b.dir, map[string]any{"memory": map[string]any{
		"command": testenv.Bundled(t, "mcp-memory"), "autoApprove": []string{"memory"},
		"env": map[string]string{"MEMORY_DB_PATH": filepath.Join(testenv.OpenDir(t), "memory.db")},
	}})
	model := llmfake.New(t, callThenAnswer(`<use_mcp_tool><server_name>memory</server_name><tool_name>memory</tool_name><arguments>{"operation": "store", "content": "I like tea\nwith milk"}</arguments></use_mcp_tool>`, "Stored."))
	s := startChat(t, b, settings, "OPENAI_BASE_URL="+model.URL())
	s.send("remember that I like tea with milk")
	s.wait("🧠 Remember this?\n  I like tea\n  with milk\nAsked by memory on memory, which stores it only if you agree.\n", 1)
	s.wait("agree? [y/n] ", 1)
	if out := s.out.String(); strings.Contains(out, `"content"`) || strings.Contains(out, `{"operation"`) {
		t.Errorf("the consent prompt shows the call's JSON:\n%s", out)
	}
	s.send("y")
	s.wait("Stored.", 1)
	s.end()
}
