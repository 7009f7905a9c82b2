// Package callback is the codec of the data behind mcpgram's inline
// buttons. Telegram hands a button's data back, unchanged but from whoever
// pressed it, so the data is hostile input: it carries ids, never option
// text, and Decode accepts only what String produces. Telegram allows 1 to
// 64 bytes; String never writes more.
//
// The wire forms are:
//
//	q:<pending id>:<option>        a follow-up question's option
//	a:<pending id>:y|n|A           approve, deny, always allow
//	s:<action>:<page>:<server>     /servers: d(isable) e(nable) r(estart) p(age)
//	c:<action>:0:<server>          /tools: a server off (d) or on (e) for this chat
//	m:<profile>                    /model: this model profile for this chat
//	f:<form id>:<step>:<op>[<n>]   a form's button: c(hoose) or t(oggle) option n,
//	                               d(one), D(efault), n(ext), b(ack), s(ubmit),
//	                               x (decline), z (cancel), of the field at step
//	p:<form id>:<step>:<op>[<n>]   the same, on the form of a prompt's arguments
//	                               (c of a typed field: the server's suggestion n)
//	x:<turn id>                    Stop: stop the running turn (1-32 of 0-9 a-f)
//	r:<link key>[:y|n]             Link: open a resource link (12 of 0-9 a-f),
//	                               or approve (y) or deny (n) reading it
//	o:<owner>:<server>             /connections: Disconnect the sign-in of the
//	                               Telegram user owner (0: the operator's)
//	k:<task id>                    TaskStop: cancel a task, a tool call its
//	                               server runs in the background (decimal, from 1)
//	w:<pending id>:y|n             AppVerdict: approve or deny what an MCP App
//	                               asks (see package apps)
//
// Authorisation is not the codec's business: a press is checked when it is
// pressed, by whoever acts on it.
package callback

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
)

// MaxLen is Telegram's limit on callback data, in bytes.
const MaxLen = 64

// A Kind is what a button does.
type Kind byte

// The kinds of button.
const (
	Option  Kind = 'q' // answers a follow-up question
	Verdict Kind = 'a' // answers an approval
	Servers Kind = 's' // acts on the /servers screen
	Chat    Kind = 'c' // turns a server off or on for one chat (/tools)
	Model   Kind = 'm' // chooses a chat's model profile (/model)
	Form    Kind = 'f' // fills in, submits or refuses a form a server asks for
	// PromptForm fills in, submits or cancels the form of a prompt's
	// arguments; its data has the form of Form's.
	PromptForm Kind = 'p'
	Stop       Kind = 'x' // stops a running turn and its calls
	Link       Kind = 'r' // opens a resource link a tool returned
	// Disconnect ends a sign-in to a server (/connections).
	Disconnect Kind = 'o'
	// TaskStop cancels a task a server runs in the background.
	TaskStop Kind = 'k'
	// AppVerdict answers the approval of an MCP App's request.
	AppVerdict Kind = 'w'
)

// A FormOp is what a Form button does.
type FormOp byte

// The form buttons; Choose and Toggle carry an option.
const (
	FormChoose  FormOp = 'c'
	FormToggle  FormOp = 't'
	FormDone    FormOp = 'd'
	FormDefault FormOp = 'D'
	FormNext    FormOp = 'n'
	FormBack    FormOp = 'b'
	FormSubmit  FormOp = 's'
	FormDecline FormOp = 'x'
	FormCancel  FormOp = 'z'
)

// takesOption reports whether op carries an option.
func (op FormOp) takesOption() bool { return op == FormChoose || op == FormToggle }

func (op FormOp) valid() bool {
	switch op {
	case FormChoose, FormToggle, FormDone, FormDefault, FormNext, FormBack, FormSubmit, FormDecline, FormCancel:
		return true
	}
	return false
}

// An Answer is what a Verdict button says.
type Answer byte

// The answers to an approval.
const (
	Approve Answer = 'y'
	Deny    Answer = 'n'
	Always  Answer = 'A' // approve, and never ask again for this tool
)

// An Action is what a Servers button does.
type Action byte

// The /servers actions.
const (
	Disable Action = 'd'
	Enable  Action = 'e'
	Restart Action = 'r'
	SignIn  Action = 'i' // the operator's sign-in to a remote server
	Page    Action = 'p' // show another page
)

// Data is what one button carries. Which fields count depends on Kind.
type Data struct {
	Kind Kind
	// Pending is the agent's id of the question or approval (Option,
	// Verdict), of an MCP App's approval (AppVerdict), or of the form
	// (Form).
	Pending int64
	// Option is the index of the chosen option (Option; Form with
	// FormChoose or FormToggle).
	Option int
	// Op is what a Form button does, and Page the step of the field it
	// belongs to.
	Op FormOp
	// Answer is the verdict (Verdict).
	Answer Answer
	// Action, Page and Server say what to do to which server, from which
	// page of the screen (Servers), or for the chat (Chat: Page is 0). A decoded Server is a key: the name,
	// or a hash of it when the name does not fit; see Names.
	Action Action
	Page   int
	Server string
	// Profile is the key of a model profile (Model): the name, or a hash
	// of it when the name does not fit or holds other than A-Z a-z 0-9
	// . _ -; see Names.
	Profile string
	// Turn is the id of the turn to stop (Stop): 1 to MaxTurnID of
	// 0-9 a-f.
	Turn string
	// Link is the key of a resource link (Link), 12 of 0-9 a-f; Answer is
	// then Approve or Deny on its approval card, or 0 on the link itself.
	Link string
	// Owner is the Telegram user whose sign-in to Server a Disconnect
	// button ends, 0 for the operator's. It says whose the button is; the
	// bot checks at the press that the presser may.
	Owner int64
	// Task is the stored id of the task to cancel (TaskStop), from 1.
	Task int64
}

// LinkKeyLen is the length of a Link button's key.
const LinkKeyLen = 12

// MaxTurnID is the longest turn id a Stop button carries.
const MaxTurnID = 32

// ErrInvalid is returned by Decode for data String would not write.
var ErrInvalid = errors.New("callback: invalid button data")

// hashPrefix marks a server key that is a hash of the name.
const hashPrefix = "#"

// String encodes d, in at most MaxLen bytes: a server name too long to
// fit is replaced by a hash of it.
func (d Data) String() string {
	switch d.Kind {
	case Option:
		return "q:" + strconv.FormatInt(d.Pending, 10) + ":" + strconv.Itoa(d.Option)
	case Verdict, AppVerdict:
		return string(rune(d.Kind)) + ":" + strconv.FormatInt(d.Pending, 10) + ":" + string(rune(d.Answer))
	case Servers, Chat:
		head := string(rune(d.Kind)) + ":" + string(rune(d.Action)) + ":" + strconv.Itoa(d.Page) + ":"
		key := d.Server
		if !isHash(key) && (len(head)+len(key) > MaxLen || strings.HasPrefix(key, hashPrefix)) {
			key = serverHash(key)
		}
		return head + key
	case Model:
		key := d.Profile
		if !isHash(key) && !profileKey(key) {
			key = serverHash(key)
		}
		return "m:" + key
	case Stop:
		if !turnID(d.Turn) {
			return ""
		}
		return "x:" + d.Turn
	case TaskStop:
		if d.Task <= 0 {
			return ""
		}
		return "k:" + strconv.FormatInt(d.Task, 10)
	case Link:
		if len(d.Link) != LinkKeyLen || !turnID(d.Link) {
			return ""
		}
		switch d.Answer {
		case Approve, Deny:
			return "r:" + d.Link + ":" + string(rune(d.Answer))
		case 0:
			return "r:" + d.Link
		}
		return ""
	case Disconnect:
		if d.Owner < 0 || d.Server == "" {
			return ""
		}
		head := "o:" + strconv.FormatInt(d.Owner, 10) + ":"
		key := d.Server
		if !isHash(key) && (len(head)+len(key) > MaxLen || strings.HasPrefix(key, hashPrefix)) {
			key = serverHash(key)
		}
		return head + key
	case Form, PromptForm:
		s := string(rune(d.Kind)) + ":" + strconv.FormatInt(d.Pending, 10) + ":" + strconv.Itoa(d.Page) + ":" + string(rune(d.Op))
		if d.Op.takesOption() {
			s += strconv.Itoa(d.Option)
		}
		return s
	}
	return ""
}

// Names reports whether the key in d.Server (d.Profile for Model) stands
// for name.
func (d Data) Names(name string) bool {
	key := d.Server
	if d.Kind == Model {
		key = d.Profile
	}
	return key == name || (isHash(key) && key == serverHash(name))
}

// profileKey reports whether a profile's name goes in the data as it is:
// 1 to MaxLen-2 of A-Z a-z 0-9 . _ - (so never a hash's #).
func profileKey(name string) bool {
	if name == "" || len(name) > MaxLen-2 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func serverHash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hashPrefix + hex.EncodeToString(sum[:hashBytes])
}

// hashBytes of SHA-256 tell servers apart: a collision needs two
// configured names, chosen by the operator, that share 64 bits.
const hashBytes = 8

// isHash reports whether key has the form serverHash writes.
func isHash(key string) bool {
	if len(key) != len(hashPrefix)+2*hashBytes || !strings.HasPrefix(key, hashPrefix) {
		return false
	}
	for _, c := range key[len(hashPrefix):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Decode parses button data. It accepts exactly what String writes, so
// every decoded Data encodes back to the same bytes.
func Decode(s string) (Data, error) {
	if len(s) > MaxLen || len(s) < 2 || s[1] != ':' {
		return Data{}, ErrInvalid
	}
	d := Data{Kind: Kind(s[0])}
	var ok bool
	switch d.Kind {
	case Option, Verdict, AppVerdict:
		ok = d.decodePending(s[2:])
	case Servers, Chat:
		ok = d.decodeServers(s[2:])
	case Model:
		d.Profile = s[2:]
		ok = isHash(d.Profile) || profileKey(d.Profile)
	case Form, PromptForm:
		ok = d.decodeForm(s[2:])
	case Stop:
		d.Turn = s[2:]
		ok = turnID(d.Turn)
	case TaskStop:
		d.Task, ok = number(s[2:])
		ok = ok && d.Task > 0
	case Disconnect:
		owner, key, found := strings.Cut(s[2:], ":")
		d.Owner, ok = number(owner)
		d.Server = key
		ok = ok && found && key != "" && (!strings.HasPrefix(key, hashPrefix) || isHash(key))
	case Link:
		key, answer, found := strings.Cut(s[2:], ":")
		d.Link = key
		ok = len(key) == LinkKeyLen && turnID(key)
		if found {
			d.Answer = Answer(firstByte(answer))
			ok = ok && len(answer) == 1 && (d.Answer == Approve || d.Answer == Deny)
		}
	}
	if !ok {
		return Data{}, ErrInvalid
	}
	return d, nil
}

// decodePending parses "<pending id>:<option or answer>".
func (d *Data) decodePending(s string) bool {
	id, rest, found := strings.Cut(s, ":")
	var ok bool
	if d.Pending, ok = number(id); !ok || !found {
		return false
	}
	switch d.Kind {
	case Verdict:
		d.Answer = Answer(firstByte(rest))
		return len(rest) == 1 && (d.Answer == Approve || d.Answer == Deny || d.Answer == Always)
	case AppVerdict:
		d.Answer = Answer(firstByte(rest))
		return len(rest) == 1 && (d.Answer == Approve || d.Answer == Deny)
	}
	opt, ok := number(rest)
	d.Option = int(opt)
	return ok && int64(d.Option) == opt
}

// decodeServers parses "<action>:<page>:<server key>".
func (d *Data) decodeServers(s string) bool {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || len(parts[0]) != 1 {
		return false
	}
	d.Action = Action(parts[0][0])
	page, ok := number(parts[1])
	d.Page, d.Server = int(page), parts[2]
	if !ok || int64(d.Page) != page {
		return false
	}
	if strings.HasPrefix(d.Server, hashPrefix) && !isHash(d.Server) {
		return false // String hashes such a name
	}
	switch {
	case d.Kind == Chat:
		return (d.Action == Disable || d.Action == Enable) && d.Page == 0 && d.Server != ""
	case d.Action == Page:
		return d.Server == ""
	case d.Action == Disable, d.Action == Enable, d.Action == Restart, d.Action == SignIn:
		return d.Server != ""
	}
	return false
}

// decodeForm parses "<form id>:<step>:<op>[<option>]".
func (d *Data) decodeForm(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || parts[2] == "" {
		return false
	}
	id, ok1 := number(parts[0])
	step, ok2 := number(parts[1])
	d.Pending, d.Page, d.Op = id, int(step), FormOp(parts[2][0])
	if !ok1 || !ok2 || int64(d.Page) != step || !d.Op.valid() {
		return false
	}
	rest := parts[2][1:]
	if !d.Op.takesOption() {
		return rest == ""
	}
	opt, ok := number(rest)
	d.Option = int(opt)
	return ok && int64(d.Option) == opt
}

// turnID reports whether s may be a Stop button's turn id.
func turnID(s string) bool {
	if s == "" || len(s) > MaxTurnID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

// number parses a non-negative decimal without sign or leading zeros.
func number(s string) (int64, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func firstByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}
