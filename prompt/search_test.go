package prompt_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/prompt"
	"github.com/mcpgram/mcpgram/testkit/realtools"
	"github.com/mcpgram/mcpgram/toolcall"
)

// searchCatalog is catalog() with servers of the real catalog: time and
// git, which say what they are for, and a server that does not.
func searchCatalog() mcpgram.Catalog {
	cat := catalog()
	real := realtools.Catalog(realtools.Servers())
	for _, name := range []string{"time", "git"} {
		s, _ := real.Server(name)
		cat.Servers = append(cat.Servers, s)
	}
	mute, _ := real.Server("slack")
	mute.Name, mute.Description = "chat", ""
	cat.Servers = append(cat.Servers, mute)
	return cat
}

var pins = &prompt.Search{Core: []mcpgram.ToolRef{{Server: "git", Tool: "git_status"}, {Server: "everything", Tool: "echo"}, {Server: "gone", Tool: "x"}}}

func TestSearchGolden(t *testing.T) {
	golden(t, "search_servers", prompt.BuildWith(searchCatalog(), prompt.Options{Search: pins}))
	golden(t, "search_no_servers", prompt.BuildWith(mcpgram.Catalog{}, prompt.Options{Search: pins}))

	var b strings.Builder
	b.WriteString(prompt.BuildNativeWith(searchCatalog(), prompt.Options{Search: pins}))
	b.WriteString("\n==== tools\n")
	for _, f := range prompt.FunctionsWith(searchCatalog(), prompt.Options{Search: pins}).Functions {
		b.WriteString(f.Name + ": " + f.Description + "\n    " + string(f.Parameters) + "\n")
	}
	golden(t, "native_search_servers", b.String())
}

// TestSearchVariants: every variant teaches the fifth core tool, shows
// its example, and points to it where it says how to pick a tool; the
// servers' part is the same bytes in each.
func TestSearchVariants(t *testing.T) {
	var servers string
	for _, v := range mcpgram.PromptVariants() {
		p := prompt.BuildWith(searchCatalog(), prompt.Options{Variant: v, Search: pins})
		if strings.Contains(p, "four") || !strings.Contains(p, "five") {
			t.Errorf("%s: the format still counts four core tools", v)
		}
		if n := strings.Count(p, "search_tools"); n < 6 {
			t.Errorf("%s: search_tools named %d times, want it taught, shown and in the guidelines", v, n)
		}
		guidelines := p[strings.LastIndex(p, "# Guidelines"):]
		if !strings.Contains(guidelines, "search") {
			t.Errorf("%s: guidelines do not point to the search:\n%s", v, guidelines)
		}
		r := toolcall.Parse(p)
		if len(r.Blocks) != 10 || r.Blocks[9].Name != toolcall.SearchTools {
			t.Errorf("%s: %d blocks, want the 5 usages, 5 examples and the pinned tools' none", v, len(r.Blocks))
		}
		s := p[strings.Index(p, "# MCP servers"):strings.LastIndex(p, "# Guidelines")]
		if servers == "" {
			servers = s
		} else if s != servers {
			t.Errorf("%s: the servers' part differs from the generic one's", v)
		}
	}
}

// TestSearchListsCoreOnly: the servers are all there with a line each,
// only the pinned tools in full.
func TestSearchListsCoreOnly(t *testing.T) {
	p := prompt.BuildWith(searchCatalog(), prompt.Options{Search: pins})
	holds(t, "prompt", p,
		"with 24 tools in all",
		"## git (12 tools)\nGit repositories on this machine: status, diffs, commits, branches and history.\n\n### Tools\n- git_status: Show the working tree status of a repository.\n    Arguments:\n    - repo_path (string, required): Path of the Git repository\n",
		"## chat (8 tools)\nIts tools are about: slack, channel, replies, thread, user.\n",
		"## empty (0 tools)\n",
		"- echo: Echoes back the input string\n",
		"demo://resource/dynamic/text/{resourceId}",
	)
	holdsNone(t, "prompt, which pins none of them,", p, "git_commit", "get-sum", "get_current_time", "slack_post_message")
	// Stable: order and version change nothing.
	cat := searchCatalog()
	cat.Version = 99
	slices.Reverse(cat.Servers)
	if prompt.BuildWith(cat, prompt.Options{Search: pins}) != p {
		t.Error("search prompt changed with the catalog's order or version")
	}
}

func TestChatTools(t *testing.T) {
	got := prompt.ChatTools(searchCatalog(), []mcpgram.ToolRef{{Server: "time", Tool: "convert_time"}, {Server: "off", Tool: "x"}})
	for _, want := range []string{"TOOLS THIS CHAT USED RECENTLY", "## time\n- convert_time: Convert a time from one time zone to another.\n    Arguments:\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("ChatTools lacks %q:\n%s", want, got)
		}
	}
	if got := prompt.ChatTools(searchCatalog(), []mcpgram.ToolRef{{Server: "off", Tool: "x"}}); got != "" {
		t.Errorf("no tool running: %q", got)
	}
}

func TestFound(t *testing.T) {
	cat := searchCatalog()
	server := func(name string) mcpgram.ServerInfo {
		i := slices.IndexFunc(cat.Servers, func(s mcpgram.ServerInfo) bool { return s.Name == name })
		return cat.Servers[i]
	}
	git, tm := server("git"), server("time")
	log, _ := git.Tool("git_log")
	status, _ := git.Tool("git_status")
	conv, _ := tm.Tool("convert_time")
	got := prompt.FoundTools([]prompt.Found{{Server: "git", Tool: log}, {Server: "time", Tool: conv}, {Server: "git", Tool: status}})
	want := "Found 3 tools. Call one with use_mcp_tool, with the server and tool names shown.\n\n## git\n- git_log (server git): Show the commit history of the repository.\n    Arguments:\n"
	if !strings.HasPrefix(got, want) || strings.Index(got, "git_status") > strings.Index(got, "## time") || strings.Contains(got, "also offered") {
		t.Errorf("FoundTools:\n%s", got)
	}
	conv.Description = "Convert a time.\nSecond line " + strings.Repeat("é", 300)
	log.Description = strings.Repeat("é", 300)
	cat.Servers[slices.IndexFunc(cat.Servers, func(s mcpgram.ServerInfo) bool { return s.Name == "time" })].Tools = []mcpgram.Tool{conv}
	cat.Servers[slices.IndexFunc(cat.Servers, func(s mcpgram.ServerInfo) bool { return s.Name == "git" })].Tools = []mcpgram.Tool{log}
	ts := prompt.FunctionsWith(cat, prompt.Options{Search: pins})
	got = prompt.FoundFunctions(ts, []prompt.Found{{Server: "time", Tool: conv}, {Server: "git", Tool: log}})
	if !strings.HasPrefix(got, "Found 2 tools, now among your functions:\n- time__convert_time (server time): Convert a time.\n- git__git_log (server git): éé") || !strings.HasSuffix(got, "é…") || !json.Valid([]byte(`"`+strings.ReplaceAll(got, "\n", `\n`)+`"`)) {
		t.Errorf("FoundFunctions:\n%s", got)
	}
}

// TestFoundLookalikes: a found tool names its server, and each tool of
// another server that looks like it, by the name the model calls it by;
// the result's first line says what the mark means.
func TestFoundLookalikes(t *testing.T) {
	issue := func(description string) mcpgram.Tool {
		return mcpgram.Tool{Name: "create_issue", Description: description, InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	cat := mcpgram.Catalog{Servers: []mcpgram.ServerInfo{
		{Name: "github", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{issue("Create a new issue in a GitHub repository.")}},
		{Name: "copycat", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{{Name: "make_issue", Description: "Create a new issue in a GitHub repository.", InputSchema: json.RawMessage(`{}`)}}},
		{Name: "linear", Status: mcpgram.StatusRunning, Tools: []mcpgram.Tool{issue("Create a new Linear issue.")}},
	}}
	found := []prompt.Found{{Server: "github", Tool: cat.Servers[0].Tools[0], Lookalikes: []mcpgram.ToolRef{{Server: "copycat", Tool: "make_issue"}, {Server: "linear", Tool: "create_issue"}}}}
	tests := []struct{ name, got, want string }{
		{"xml", prompt.FoundTools(found), "- create_issue (server github; also offered by server copycat as make_issue, and by server linear): Create a new issue in a GitHub repository."},
		{"native", prompt.FoundFunctions(prompt.Functions(cat), found), "- github__create_issue (server github; also offered by server copycat as copycat__make_issue, and by server linear as linear__create_issue): Create a new issue in a GitHub repository."},
		// A lookalike without a function here (its server gone since) is
		// named by its server alone.
		{"native, one gone", prompt.FoundFunctions(prompt.Functions(mcpgram.Catalog{Servers: []mcpgram.ServerInfo{cat.Servers[0], cat.Servers[2]}}), found), "- github__create_issue (server github; also offered by server copycat, and by server linear as linear__create_issue): "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(tt.got, tt.want) || !strings.Contains(tt.got, `A tool marked "also offered by" has a namesake or a copy of its wording on another server`) {
				t.Errorf("got\n%s\nwant it to hold %q and say what the mark means", tt.got, tt.want)
			}
		})
	}
}

// TestFunctionsWithSearch: only the pinned tools and the core actions
// are offered; every tool keeps its name, which With offers.
func TestFunctionsWithSearch(t *testing.T) {
	cat := searchCatalog()
	all := prompt.Functions(cat)
	ts := prompt.FunctionsWith(cat, prompt.Options{Search: pins})
	var offered []string
	for _, f := range ts.Functions {
		offered = append(offered, f.Name)
	}
	want := []string{"everything__echo", "git__git_status", "access_mcp_resource", "ask_followup_question", "attempt_completion", "search_tools"}
	if !slices.Equal(offered, want) {
		t.Errorf("offered %q, want %q", offered, want)
	}
	for name, target := range all.Targets {
		if got, ok := ts.Target(name); !ok || got != target {
			t.Errorf("Target(%q) = %+v, want %+v as in Functions", name, got, target)
		}
	}
	more := ts.With([]mcpgram.ToolRef{{Server: "time", Tool: "convert_time"}, {Server: "git", Tool: "git_status"}, {Server: "nope", Tool: "x"}, {Server: "time", Tool: "convert_time"}})
	if n := len(more.Functions); n != len(want)+1 || more.Functions[n-1].Name != "time__convert_time" {
		t.Errorf("With offers %d, last %q; want one more, time__convert_time", n, more.Functions[n-1].Name)
	}
	if len(ts.Functions) != len(want) {
		t.Error("With changed the toolset it was called on")
	}
	if !more.Offers("time__convert_time") || ts.Offers("time__convert_time") || ts.Name("time", "convert_time") != "time__convert_time" {
		t.Error("Offers or Name wrong")
	}
}
