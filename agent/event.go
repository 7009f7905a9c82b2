package agent

import (
	"time"

	"github.com/mcpgram/mcpgram"
)

// An EventKind says what an Event reports.
type EventKind int

// The kinds of event a turn emits, in the order a front end usually sees them.
const (
	// EventText carries, in Text, the visible text of the model reply being
	// streamed so far (the whole of it, not a delta; tool XML and thinking
	// removed). A new model call starts again from empty.
	EventText EventKind = iota + 1
	// EventToolStart: Server and Tool are about to be called (or URI read).
	EventToolStart
	// EventToolEnd: the call finished after Duration; OK is false on any
	// error, and Text then holds a one-line reason. Images holds image
	// parts of the result, for sending as photos, and Files its blobs and
	// audio, for sending as documents; Links its resource links, for the
	// user to open.
	EventToolEnd
	// EventQuestion: the model asked a follow-up question; the turn ends.
	// Text is the visible text the model wrote before asking, if any.
	EventQuestion
	// EventApproval: a tool needs the user's approval; the turn ends.
	// Text is the visible text the model wrote before the call, if any.
	EventApproval
	// EventAnswer: the final answer, Markdown in Text; the turn ends.
	EventAnswer
	// EventError: the turn failed or stopped; Text is a short plain sentence
	// for the user (details are logged). The turn ends.
	EventError
	// EventNotice: a short plain sentence for the user about how this
	// turn is answered (the chat's model was removed from the
	// configuration; its model cannot see the photo sent). The turn goes
	// on.
	EventNotice
	// EventForm: a tool call (Server, Tool or URI) asks the user what Form
	// says; the call, and the turn, wait for the answer, given through
	// Agent.FormInput. May come from several calls at once.
	EventForm
	// EventFormClosed: a form closed without the user's last input: it
	// expired, or its call ended first (Form.Outcome says which). The
	// turn goes on.
	EventFormClosed
	// EventToolProgress: running calls reported progress; Progress holds
	// each one's latest report (by its Call number), at most one event
	// per Config.ProgressInterval however fast servers report. A call
	// that reports nothing has none.
	EventToolProgress
)

// An Event is something a running turn reports to the front end.
type Event struct {
	Kind EventKind
	// Call numbers the turn's tool calls from 1, in EventToolStart,
	// EventToolEnd and Progress: calls run in parallel end in any order.
	Call     int
	Text     string
	Server   string
	Tool     string
	URI      string
	Duration time.Duration
	OK       bool
	Images   []mcpgram.Content
	Files    []mcpgram.Content // blobs and audio a tool returned, for the user to open
	Links    []mcpgram.Content // resource links a tool returned (URI, Name, MIMEType)
	Question *Question
	Approval *Approval
	Form     *Form
	// Err, on an EventError, is the failure behind Text, for a front end
	// whose user is the operator (the terminal chat): an *llm.Error says
	// what the endpoint answered (see llm.Error.Diagnosis). Its text may
	// name URLs and servers, so it is not for every user; nil when the
	// turn was stopped.
	Err      error
	Progress []CallProgress
}

// A Question is a follow-up question waiting for the user's answer.
type Question struct {
	// PendingID identifies the stored question; button presses carry it.
	PendingID int64
	Text      string
	Options   []string
}

// An Approval is a tool call or a resource read waiting for the user's
// approval.
type Approval struct {
	PendingID int64
	Server    string
	// Tool is the tool to call; "" for a resource read, whose URI is set.
	Tool string
	URI  string
	// Arguments is the call's JSON arguments as the model wrote them.
	Arguments string
	ExpiresAt time.Time
	// Consent is set when the call needs the user's own consent: it is
	// approved once, never always.
	Consent bool
}
