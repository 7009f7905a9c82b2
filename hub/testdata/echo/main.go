// Command echo is the MCP server the hub, executor, agent and prompt tests
// run against, so that they need nothing but Go: it echoes, adds, reports
// who called it and what environment it got, sleeps, holds calls until
// enough are in flight at once, crashes on demand, returns an image, an
// error and every kind of content, serves resources, dials a TCP address,
// can spawn a
// grandchild process, and can be a server that outlives its closed stdin
// and cleans up, slowly, on SIGTERM (ECHO_TERM_FILE), or ignores that too
// (with ECHO_IGNORE_TERM). With ECHO_START_GATE naming a FIFO it starts
// only once a test opens and closes that FIFO for writing: a server that
// takes as long to start as the test wants, without a sleep.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A 1x1 PNG.
const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

func main() {
	sleeper := flag.Bool("sleeper", false, "be a grandchild that sleeps until killed")
	flag.Parse()
	if *sleeper {
		if os.Getenv("ECHO_IGNORE_TERM") != "" {
			signal.Ignore(syscall.SIGTERM)
		}
		os.Stdout.Close() // ready: what it ignores is set
		time.Sleep(time.Hour)
		return
	}
	if f := os.Getenv("ECHO_GRANDCHILD_PIDFILE"); f != "" {
		spawnGrandchild(f)
	}
	if os.Getenv("ECHO_IGNORE_TERM") != "" {
		signal.Ignore(syscall.SIGTERM)
	}
	termFile := os.Getenv("ECHO_TERM_FILE")
	if termFile != "" && os.Getenv("ECHO_IGNORE_TERM") == "" {
		go cleanUpOnTerm(termFile)
	}
	if gate := os.Getenv("ECHO_START_GATE"); gate != "" {
		waitAtGate(gate)
	}
	fmt.Fprintln(os.Stderr, "echo: starting")

	s := server.NewMCPServer("echo", "1.0.0", server.WithToolCapabilities(true), server.WithResourceCapabilities(false, true))
	// ECHO_EXTRA_TOOLS adds tools, a JSON list of {"name", "description"}:
	// names and descriptions a hostile server might offer.
	var extra []struct{ Name, Description string }
	_ = json.Unmarshal([]byte(os.Getenv("ECHO_EXTRA_TOOLS")), &extra)
	for _, t := range extra {
		s.AddTool(mcp.NewTool(t.Name, mcp.WithDescription(t.Description)),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(t.Name), nil
			})
	}
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes its message."),
		mcp.WithString("message", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("message", "")), nil
		})
	whoami := func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// mcpgram's own keys: the protocol's (on 2026-07-28) are not the
		// caller.
		got := map[string]any{}
		if req.Params.Meta != nil {
			for k, v := range req.Params.Meta.AdditionalFields {
				if strings.HasPrefix(k, "mcpgram/") {
					got[k] = v
				}
			}
		}
		b, _ := json.Marshal(got)
		return mcp.NewToolResultText(string(b)), nil
	}
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Reports the caller from _meta.")), whoami)
	// asked_task tells whether the call asked for a task, which this
	// server, offering none, must never be asked for.
	s.AddTool(mcp.NewTool("asked_task", mcp.WithDescription("Reports whether the call asked for a task.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprintf("task asked: %v", req.Params.Task != nil)), nil
		})
	// keep declares, as mcp-memory does, that writing needs the user's own
	// consent; like whoami it reports the _meta it got.
	keep := mcp.NewTool("keep", mcp.WithDescription("Keeps or reads a note; reports the caller from _meta."),
		mcp.WithString("mode", mcp.Enum("write", "read")))
	keep.Meta = &mcp.Meta{AdditionalFields: map[string]any{
		"mcpgram/consent_when": map[string]any{"mode": []any{"write"}},
		"mcpgram/per_user":     true, // its notes are the caller's
	}}
	s.AddTool(keep, whoami)
	s.AddTool(mcp.NewTool("env", mcp.WithDescription("Lists its environment.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strings.Join(os.Environ(), "\n")), nil
		})
	s.AddTool(mcp.NewTool("pid", mcp.WithDescription("Reports its process id.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(mcp.NewTool("dial", mcp.WithDescription("Connects to a TCP address and says whether it could."),
		mcp.WithString("address", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			conn, err := net.DialTimeout("tcp", req.GetString("address", ""), 5*time.Second)
			if err != nil {
				return mcp.NewToolResultText(err.Error()), nil
			}
			conn.Close()
			return mcp.NewToolResultText("connected"), nil
		})
	s.AddTool(mcp.NewTool("cwd", mcp.WithDescription("Reports its working folder.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			wd, _ := os.Getwd()
			return mcp.NewToolResultText(wd), nil
		})
	s.AddTool(mcp.NewTool("sleep", mcp.WithDescription("Sleeps for ms milliseconds."),
		mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// Tests wait for this line to know the call is in flight.
			fmt.Fprintln(os.Stderr, "echo: sleep started")
			// A test that kills the host reads from here how many sleeps
			// started, and which process to clean up.
			if f := os.Getenv("ECHO_CALL_LOG"); f != "" {
				if log, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintf(log, "sleep %d\n", os.Getpid())
					log.Close()
				}
			}
			select {
			case <-time.After(time.Duration(req.GetInt("ms", 0)) * time.Millisecond):
				return mcp.NewToolResultText("slept"), nil
			case <-ctx.Done():
				fmt.Fprintln(os.Stderr, "echo: sleep cancelled")
				return nil, ctx.Err()
			}
		})
	var meet meeting
	s.AddTool(mcp.NewTool("meet", mcp.WithDescription("Returns once n calls of meet are in flight at once."),
		mcp.WithNumber("n", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-meet.arrive(req.GetInt("n", 1)):
				return mcp.NewToolResultText("met"), nil
			case <-ctx.Done():
				fmt.Fprintln(os.Stderr, "echo: meet cancelled")
				return nil, ctx.Err()
			}
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exits at once with code 3.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "fatal: crash requested")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("close_stdout", mcp.WithDescription("Breaks its pipe and lives on.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "echo: closing stdout")
			os.Stdout.Close()
			select {}
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Reports a tool error.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("it went wrong"), nil
		})
	s.AddTool(mcp.NewTool("mixed", mcp.WithDescription("Returns every kind of content.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("here"),
				mcp.NewImageContent(pixel, "image/png"),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "echo://note", MIMEType: "text/plain", Text: "a note"}),
				mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "echo://blob", MIMEType: "application/octet-stream", Blob: base64.StdEncoding.EncodeToString([]byte{1, 2, 3})}),
				mcp.NewResourceLink("echo://link", "link", "a link", "text/plain"),
			}}, nil
		})
	s.AddTool(mcp.NewTool("add_tool", mcp.WithDescription("Adds a tool named by name, described by description."),
		mcp.WithString("name", mcp.Required()), mcp.WithString("description")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := req.GetString("name", "extra")
			s.AddTool(mcp.NewTool(name, mcp.WithDescription(req.GetString("description", "Added at run time."))),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText(name), nil
				})
			return mcp.NewToolResultText("added " + name), nil
		})
	s.AddTool(mcp.NewTool("add_resource", mcp.WithDescription("Adds the resource echo://added, whose text is the reader's user id.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddResource(mcp.NewResource("echo://added", "added", mcp.WithMIMEType("text/plain")),
				func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
					user := ""
					if req.Params.Meta != nil {
						user, _ = req.Params.Meta.AdditionalFields["mcpgram/user_id"].(string)
					}
					return []mcp.ResourceContents{mcp.TextResourceContents{URI: "echo://added", MIMEType: "text/plain", Text: "read by " + user}}, nil
				})
			return mcp.NewToolResultText("added"), nil
		})
	addTools(s)
	addResources(s)
	// More workers than mcp-go's default 5, so that a test can have 20
	// calls in flight at once.
	if err := server.ServeStdio(s, server.WithWorkerPoolSize(32)); err != nil {
		log.Fatal(err)
	}
	if termFile != "" {
		select {} // deaf to its closed stdin: only SIGTERM ends it
	}
}

// cleanUpOnTerm ends the server on SIGTERM as a careful one does: it takes
// a moment to put its work away, then writes to file that it did.
func cleanUpOnTerm(file string) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	time.Sleep(300 * time.Millisecond)
	if err := os.WriteFile(file, []byte("cleaned up"), 0o644); err != nil {
		log.Fatal(err)
	}
	os.Exit(0)
}

// waitAtGate blocks until a writer has opened the FIFO at path and closed
// it: opening it to read waits for a writer, and reading it to the end for
// the writer's close.
func waitAtGate(path string) {
	fmt.Fprintln(os.Stderr, "echo: waiting at the gate")
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, f); err != nil {
		log.Fatal(err)
	}
	f.Close()
}

func spawnGrandchild(pidfile string) {
	cmd := exec.Command(os.Args[0], "-sleeper")
	cmd.Env = os.Environ()
	ready, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	// The pid goes out once the grandchild is ready, so that a test that
	// stops the server finds it ignoring what it should.
	if _, err := io.Copy(io.Discard, ready); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(pidfile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		log.Fatal(err)
	}
}

// A meeting releases calls in groups of n: each group once its n-th call
// has arrived. A call that never sees n-1 others in flight with it waits
// until its request is cancelled.
type meeting struct {
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func (m *meeting) arrive(n int) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.all == nil {
		m.all = make(chan struct{})
	}
	all := m.all
	m.arrived++
	if m.arrived >= n {
		close(m.all)
		m.all, m.arrived = nil, 0
	}
	return all
}

// addTools adds the tools a model is asked to call in the agent and
// executor tests: a typed schema to check arguments against, an image, and
// an error the server itself decides on.
func addTools(s *server.MCPServer) {
	// add says of itself, as MCP's tool annotations, that it only reads
	// and keeps to itself; the other tools say what mcp-go says by default.
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Adds two numbers."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false), mcp.WithIdempotentHintAnnotation(true),
		mcp.WithNumber("a", mcp.Required(), mcp.Description("First number")),
		mcp.WithNumber("b", mcp.Required(), mcp.Description("Second number"))),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a, errA := req.RequireFloat("a")
			b, errB := req.RequireFloat("b")
			if errA != nil || errB != nil {
				return mcp.NewToolResultError("a and b must be numbers"), nil
			}
			return mcp.NewToolResultText(fmt.Sprintf("The sum of %g and %g is %g.", a, b, a+b)), nil
		})
	s.AddTool(mcp.NewTool("report", mcp.WithDescription("Returns a CSV file as an embedded blob resource.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("Your report:"),
				mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "echo://reports/q3.csv", MIMEType: "text/csv", Blob: base64.StdEncoding.EncodeToString([]byte("a,b\n1,2\n"))}),
			}}, nil
		})
	s.AddTool(mcp.NewTool("image", mcp.WithDescription("Returns a tiny image.")),
		func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.NewTextContent("A tiny image:"),
				mcp.NewImageContent(pixel, "image/png"),
			}}, nil
		})
}

// addResources adds a static document and a template of generated texts.
func addResources(s *server.MCPServer) {
	s.AddResource(mcp.NewResource("echo://static/readme.md", "readme.md",
		mcp.WithResourceDescription("What this server is."), mcp.WithMIMEType("text/markdown")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/markdown", Text: "# echo\nA server for tests."}}, nil
		})
	s.AddResourceTemplate(mcp.NewResourceTemplate("echo://dynamic/{id}", "Dynamic text",
		mcp.WithTemplateDescription("A text made up for its id."), mcp.WithTemplateMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := strings.TrimPrefix(req.Params.URI, "echo://dynamic/")
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "Dynamic text " + id}}, nil
		})
}
