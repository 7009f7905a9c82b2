package toolsearch_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgram/mcpgram/testkit/realtools"
	"github.com/mcpgram/mcpgram/toolsearch"
)

// A request is something people ask for, as they would write it, with
// the tool they would expect (server/tool), or the tools, where two
// servers of the catalog do the same thing equally well (two browsers,
// the local git and GitHub).
type request struct {
	text string
	want []string
}

// requests were written before the ranking was tuned, and not changed to
// suit it; the ranking's choices (fields and their weights, synonyms,
// asking words) were measured on them. Plain BM25 over the fields the
// issue named found 80 % of them in the first five.
var requests = []request{
	{"open an issue in the mcpgram repo saying the bot crashes on startup", []string{"github/create_issue"}},
	{"what pull requests are open on our repository?", []string{"github/list_pull_requests"}},
	{"merge PR 42", []string{"github/merge_pull_request"}},
	{"show me the diff of pull request 17", []string{"github/get_pull_request_diff"}},
	{"approve the pull request", []string{"github/create_pull_request_review"}},
	{"create a new branch called feature-x", []string{"github/create_branch", "git/git_create_branch"}},
	{"find repositories about telegram bots written in go", []string{"github/search_repositories"}},
	{"search the code for where the config is loaded", []string{"github/search_code"}},
	{"what's the latest release of kubernetes?", []string{"github/get_latest_release"}},
	{"rerun the failed CI build", []string{"github/rerun_workflow_run"}},
	{"why did the build fail? get me the logs", []string{"github/get_job_logs"}},
	{"do we have any leaked secrets in the repo?", []string{"github/list_secret_scanning_alerts"}},
	{"are any of our dependencies vulnerable?", []string{"github/list_dependabot_alerts"}},
	{"star the mcp-go repository", []string{"github/star_repository"}},
	{"share this snippet as a gist", []string{"github/create_gist"}},
	{"comment on issue 12 that it's fixed", []string{"github/add_issue_comment"}},
	{"mark all my github notifications as read", []string{"github/mark_all_notifications_read"}},
	{"close issue 99", []string{"github/update_issue"}},
	{"read the README of the project", []string{"github/get_file_contents", "filesystem/read_text_file"}},
	{"read the file notes.txt", []string{"filesystem/read_text_file"}},
	{"save this text to a file called todo.md", []string{"filesystem/write_file"}},
	{"rename report.pdf to report-2024.pdf", []string{"filesystem/move_file"}},
	{"what files are in my documents folder?", []string{"filesystem/list_directory", "filesystem/list_directory_with_sizes"}},
	{"make a folder called photos", []string{"filesystem/create_directory"}},
	{"find all the markdown files", []string{"filesystem/search_files"}},
	{"how big is the file backup.zip and when was it changed?", []string{"filesystem/get_file_info"}},
	{"replace the word foo with bar in config.yaml", []string{"filesystem/edit_file"}},
	{"show me the image screenshot.png", []string{"filesystem/read_media_file"}},
	{"go to example.com in the browser", []string{"playwright/browser_navigate", "puppeteer/puppeteer_navigate"}},
	{"take a screenshot of the page", []string{"playwright/browser_take_screenshot", "puppeteer/puppeteer_screenshot"}},
	{"click the login button", []string{"playwright/browser_click", "puppeteer/puppeteer_click"}},
	{"type my email into the search box", []string{"playwright/browser_type", "puppeteer/puppeteer_fill"}},
	{"go back to the previous page", []string{"playwright/browser_navigate_back"}},
	{"what errors are in the browser console?", []string{"playwright/browser_console_messages"}},
	{"press the Enter key", []string{"playwright/browser_press_key"}},
	{"close the browser tab", []string{"playwright/browser_tabs", "playwright/browser_close"}},
	{"run some javascript on the page to get its title", []string{"playwright/browser_evaluate", "puppeteer/puppeteer_evaluate"}},
	{"upload the file resume.pdf to the form", []string{"playwright/browser_file_upload"}},
	{"send a message to the #general channel on Slack", []string{"slack/slack_post_message"}},
	{"what has been said in the team channel lately?", []string{"slack/slack_get_channel_history"}},
	{"react with a thumbs up to that slack message", []string{"slack/slack_add_reaction"}},
	{"reply in the slack thread", []string{"slack/slack_reply_to_thread"}},
	{"who is in our slack workspace?", []string{"slack/slack_get_users"}},
	{"create a new page in Notion for meeting notes", []string{"notion/API-post-page"}},
	{"find my notion page about the roadmap", []string{"notion/API-post-search"}},
	{"query the tasks database in notion", []string{"notion/API-post-database-query"}},
	{"create a Linear ticket for the login bug", []string{"linear/create_issue"}},
	{"what's in the current sprint?", []string{"linear/list_cycles"}},
	{"list the projects in Linear", []string{"linear/list_projects"}},
	{"what changed in my working copy?", []string{"git/git_status", "git/git_diff_unstaged"}},
	{"commit the staged changes with the message 'fix typo'", []string{"git/git_commit"}},
	{"stage README.md", []string{"git/git_add"}},
	{"show the last 5 commits", []string{"git/git_log", "github/list_commits"}},
	{"switch to the develop branch", []string{"git/git_checkout"}},
	{"remember that Alice works at Acme", []string{"memory/create_entities", "memory/create_relations", "memory/add_observations"}},
	{"what do you know about Alice?", []string{"memory/search_nodes", "memory/open_nodes"}},
	{"forget everything about Bob", []string{"memory/delete_entities"}},
	{"get the content of https://go.dev/blog", []string{"fetch/fetch"}},
	{"search the web for the best pizza recipe", []string{"brave-search/brave_web_search"}},
	{"find coffee shops near me", []string{"brave-search/brave_local_search", "google-maps/maps_search_places"}},
	{"what time is it in Tokyo?", []string{"time/get_current_time"}},
	{"convert 3pm New York time to Berlin time", []string{"time/convert_time"}},
	{"how many rows are in the users table?", []string{"sqlite/read_query", "postgres/query"}},
	{"what tables are in the database?", []string{"sqlite/list_tables"}},
	{"show me the columns of the orders table", []string{"sqlite/describe_table"}},
	{"insert a new customer record into the table", []string{"sqlite/write_query"}},
	{"how do I drive from Lisbon to Porto?", []string{"google-maps/maps_directions"}},
	{"what are the coordinates of the Eiffel Tower?", []string{"google-maps/maps_geocode"}},
	{"how long does it take from Paris to Lyon by train?", []string{"google-maps/maps_distance_matrix", "google-maps/maps_directions"}},
	{"what's the address at 40.7, -74.0?", []string{"google-maps/maps_reverse_geocode"}},
	{"how high above sea level is Denver?", []string{"google-maps/maps_elevation"}},
	{"what errors happened in production today?", []string{"sentry/find_issues", "sentry/search_events", "sentry/search_issues"}},
	{"resolve the sentry issue PROJ-123", []string{"sentry/update_issue"}},
	{"what's the root cause of this crash?", []string{"sentry/analyze_issue_with_seer", "sentry/get_issue_details"}},
	{"refund the last payment of customer X", []string{"stripe/create_refund"}},
	{"how much money is in our stripe account?", []string{"stripe/retrieve_balance"}},
	{"cancel John's subscription", []string{"stripe/cancel_subscription"}},
	{"send an invoice to ACME for the consulting work", []string{"stripe/create_invoice"}},
	{"make a 20% off coupon", []string{"stripe/create_coupon"}},
	{"create a payment link for the t-shirt", []string{"stripe/create_payment_link"}},
	{"move PROJ-42 to done", []string{"atlassian/jira_transition_issue"}},
	{"log 2 hours on PROJ-7", []string{"atlassian/jira_add_worklog"}},
	{"find the confluence page about onboarding", []string{"atlassian/confluence_search", "atlassian/confluence_get_page"}},
	{"write a new wiki page in confluence with the release notes", []string{"atlassian/confluence_create_page"}},
	{"find all open bugs in jira project PROJ", []string{"atlassian/jira_search", "atlassian/jira_get_project_issues"}},
}

// heldOut were written once the ranking was settled, and run once to
// measure it on requests it was not tuned on.
var heldOut = []request{
	{"list the open issues of the linear team Mobile", []string{"linear/list_issues"}},
	{"who am I logged in as on github", []string{"github/get_me"}},
	{"fork the react repository to my account", []string{"github/fork_repository"}},
	{"delete the file old.log from the repo", []string{"github/delete_file"}},
	{"show me the whole folder structure of the project", []string{"filesystem/directory_tree"}},
	{"read these three files at once: a.txt, b.txt, c.txt", []string{"filesystem/read_multiple_files"}},
	{"hover over the menu", []string{"playwright/browser_hover", "puppeteer/puppeteer_hover"}},
	{"choose Portugal in the country dropdown", []string{"playwright/browser_select_option", "puppeteer/puppeteer_select"}},
	{"wait until the text Done appears on the page", []string{"playwright/browser_wait_for"}},
	{"make the browser window 1280 by 720", []string{"playwright/browser_resize"}},
	{"what network requests did the page make?", []string{"playwright/browser_network_requests"}},
	{"show me the replies to that slack thread", []string{"slack/slack_get_thread_replies"}},
	{"list all slack channels", []string{"slack/slack_list_channels"}},
	{"add a paragraph to the notion page", []string{"notion/API-patch-block-children"}},
	{"who are the users in our notion workspace", []string{"notion/API-get-users"}},
	{"assign the linear issue ENG-12 to Maria", []string{"linear/update_issue"}},
	{"what labels can linear issues have?", []string{"linear/list_issue_labels"}},
	{"unstage everything", []string{"git/git_reset"}},
	{"show me what's in commit abc123", []string{"git/git_show", "github/get_commit"}},
	{"list the local branches", []string{"git/git_branch", "github/list_branches"}},
	{"link Alice to the Acme entity as an employee", []string{"memory/create_relations"}},
	{"show me the entire knowledge graph", []string{"memory/read_graph"}},
	{"create a table for books with title and author", []string{"sqlite/create_table"}},
	{"what's the distance between Rome and Florence", []string{"google-maps/maps_distance_matrix", "google-maps/maps_directions"}},
	{"find the opening hours of this restaurant", []string{"google-maps/maps_place_details", "brave-search/brave_local_search"}},
	{"which Sentry projects do we have?", []string{"sentry/find_projects"}},
	{"list our stripe customers", []string{"stripe/list_customers"}},
	{"add a new product called Premium Plan to stripe", []string{"stripe/create_product"}},
	{"what transitions can PROJ-9 make", []string{"atlassian/jira_get_transitions"}},
	{"add PROJ-5 to the epic PROJ-1", []string{"atlassian/jira_link_to_epic"}},
	{"delete jira ticket PROJ-77", []string{"atlassian/jira_delete_issue"}},
	{"trigger the deploy workflow", []string{"github/run_workflow"}},
	{"request a review from copilot on PR 8", []string{"github/request_copilot_review"}},
	{"what code scanning problems does the repo have", []string{"github/list_code_scanning_alerts"}},
}

// recallFloor is what TestRetrieval requires of recall at 5: the goal,
// 90 %, under the figure measured (see docs/benchmarks.md).
const recallFloor = 0.90

// TestRetrieval searches the catalog of real tools for each request and
// requires the expected tool among the first five hits for at least
// recallFloor of them, in each set; -v logs each miss and the figures.
func TestRetrieval(t *testing.T) {
	cat := realtools.Catalog(realtools.Servers())
	ix := toolsearch.New(cat)
	if ix.Len() < 200 || len(cat.Servers) < 10 || len(requests) < 60 {
		t.Fatalf("%d tools of %d servers, %d requests: the test wants at least 200 tools of 10 servers and 60 requests", ix.Len(), len(cat.Servers), len(requests))
	}
	t.Run("tuned", func(t *testing.T) { retrieval(t, ix, requests) })
	t.Run("held-out", func(t *testing.T) { retrieval(t, ix, heldOut) })
}

func retrieval(t *testing.T, ix *toolsearch.Index, requests []request) {
	at1, at5 := 0, 0
	for _, r := range requests {
		hits := ix.Search(toolsearch.Query{Text: r.text, Limit: 5})
		var got []string
		for _, h := range hits {
			got = append(got, h.Server+"/"+h.Tool.Name)
		}
		rank := slices.IndexFunc(got, func(g string) bool { return slices.Contains(r.want, g) })
		switch {
		case rank == 0:
			at1++
			at5++
		case rank > 0:
			at5++
		default:
			t.Logf("miss: %q wants %s, got %s", r.text, strings.Join(r.want, " or "), strings.Join(got, ", "))
		}
	}
	recall := float64(at5) / float64(len(requests))
	t.Logf("%d requests over %d tools: recall@1 %s, recall@5 %s", len(requests), ix.Len(),
		percent(at1, len(requests)), percent(at5, len(requests)))
	if recall < recallFloor {
		t.Errorf("recall@5 = %.3f, want at least %.2f", recall, recallFloor)
	}
}

func percent(n, of int) string {
	return fmt.Sprintf("%d of %d (%.1f%%)", n, of, 100*float64(n)/float64(of))
}
