package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/testkit/testenv"
)

// A richer app opens as well: @modelcontextprotocol/server-budget-allocator,
// a page of 0.4 MB with its own chart library, built from the call's
// structured result (a budget's categories and 24 months of history)
// rather than its text. The app shows each category with its slider and
// draws its chart.
func TestBudgetAppInBrowser(t *testing.T) {
	browserUp := startBrowser(t, chromium(t))
	_, pageURL := npmAppBot(t, "server-budget-allocator", "get-budget-data", "Get Budget Data", "how is our budget split?", false)
	b := browserUp(t)
	b.openSigned(t, pageURL, "&tgWebAppPlatform=ios")
	frame := b.appFrame(t)

	sliders := `document.getElementById("sliders-container") ? document.getElementById("sliders-container").innerText : ""`
	testenv.Eventually(t, 30*time.Second, "the app to show the budget's categories", func() bool {
		text := b.eval(t, frame, sliders)
		return strings.Contains(text, "Marketing") && strings.Contains(text, "Engineering") && strings.Contains(text, "Sales")
	})
	if n := b.eval(t, frame, `String(document.querySelectorAll("#sliders-container input[type=range]").length)`); n != "5" {
		t.Errorf("the app shows %s sliders, want one for each of the 5 categories", n)
	}
	drawn := `(() => { const c = document.getElementById("budget-chart"); if (!c || !c.width) return "no chart";
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
		for (let i = 3; i < d.length; i += 4) { if (d[i] !== 0) return "drawn" } return "blank" })()`
	testenv.Eventually(t, 30*time.Second, "the app to draw its chart", func() bool { return b.eval(t, frame, drawn) == "drawn" })
	screenshot(t, b)
}
