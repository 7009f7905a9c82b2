package store

import "time"

// A TurnRecord is how one turn ended, and its model calls.
type TurnRecord struct {
	TurnID, UserID, ChatID string
	// Outcome is answer, question, approval, error, limit, cancelled or
	// budget, as mcpgram_turns_total counts them.
	Outcome string
	// Kind narrows an error: the model's failure kind, format, busy or
	// internal; "" otherwise.
	Kind string
	// Model is the model the turn called, and Calls its calls in order.
	Model string
	Calls []ModelCall
	// Searches are the turn's searches for tools, in order.
	Searches []Search
	// At is when it ended; zero means now.
	At time.Time
}

// A ModelCall is one call of the model, for /stats.
type ModelCall struct {
	// Outcome is ok, cancelled, or the failure kind after retries.
	Outcome string
	// Duration is the whole call, retries included; stored in
	// milliseconds.
	Duration time.Duration
	// In and Out are the tokens read and written, as counted for usage.
	In, Out int
	// FirstTry, Repaired and FedBack count the tool blocks of the reply
	// that the bot acted on: right at the first try, repaired, or sent
	// back to the model to correct.
	FirstTry, Repaired, FedBack int
}

// A Search is one search for tools a model made (search_tools).
type Search struct {
	// Found are the tools it returned, best first; none when it found
	// nothing.
	Found []ToolRef
	// Called are those of Found that the model called later in the turn.
	Called []ToolRef
}

// Stats is what happened over a window, for /stats.
type Stats struct {
	// From and To bound the window: From <= created_at < To.
	From, To time.Time
	// Turns counts turns by outcome, most first.
	Turns []Count
	// Errors counts turns that ended in an error or at the turn limit, by
	// kind ("limit" for the latter), most first.
	Errors []Count
	// Models has one entry per model, most calls first.
	Models []ModelStats
	// Tools has one entry per server and tool of the audit log, most calls
	// first.
	Tools []ToolStats
	// TopUsers are the users with the most tokens, most first.
	TopUsers []UserTokens
	// Search is what the models' searches for tools found.
	Search SearchStats
	// Tasks is the calls servers ran in the background (MCP Tasks) and
	// those that went on in the background in the bot, started in the
	// window.
	Tasks TaskStats
}

// TaskStats is the background calls started over a window.
type TaskStats struct {
	// Outcomes counts them by how they ended ("completed", "failed",
	// "cancelled", …), "running" for those not ended yet, most first.
	Outcomes []Count
	// P50 and P95 are how long the ended ones ran, from their start to
	// their end (nearest-rank percentiles).
	P50, P95 time.Duration
}

// SearchStats is the searches for tools over a window.
type SearchStats struct {
	// Searches counts them; Empty those that found nothing; Followed
	// those after which the model called a tool they found, in the same
	// turn.
	Searches, Empty, Followed int64
	// Tools are the tools found, most found first, each with how often a
	// search found it and how often the model then called it.
	Tools []FoundTool
}

// A FoundTool is one tool searches found over a window.
type FoundTool struct {
	Server, Tool  string
	Found, Called int64
}

// A Count is a number of things of one name.
type Count struct {
	Name string
	N    int64
}

// Total sums cs.
func Total(cs []Count) int64 {
	var n int64
	for _, c := range cs {
		n += c.N
	}
	return n
}

// ModelStats is one model's calls over a window.
type ModelStats struct {
	Model string
	// Calls counts every call; Failures those that failed, by kind
	// (cancelled calls are neither ok nor failures).
	Calls    int64
	Failures []Count
	// P50 and P95 are the nearest-rank percentiles of the duration of the
	// calls that were not cancelled: of the n durations in order, the p-th
	// percentile is the one at rank ceil(p*n/100), so that at least p %
	// of the values are at most it, and it is one of them.
	P50, P95 time.Duration
	// FirstTry of Blocks tool blocks were right at the first try.
	FirstTry, Blocks int64
	// In and Out are the tokens read and written.
	In, Out int64
}

// ToolStats is one tool's calls over a window, from the audit log.
type ToolStats struct {
	Server, Tool string
	// Calls counts the calls that ran (ok or error); Failed those that
	// failed; Denied those the user denied or let expire.
	Calls, Failed, Denied int64
	// P50 and P95 are the nearest-rank percentiles of the duration of the
	// calls that ran.
	P50, P95 time.Duration
}

// A Bucket is the turns of one stretch of a timeline, by outcome.
type Bucket struct {
	// Start is where the stretch begins; it ends where the next begins.
	Start time.Time
	Turns []Count
}
