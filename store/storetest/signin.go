package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// What a sign-in leaves in a store once it is over is no code and no
// state: the pasted address the browser ended on, a message in the
// inbox, is forgotten once the message is done, and the connect form
// whose card held the sign-in address (and so its state) keeps it no
// more once it is saved without it. Each is found while it is kept, so
// that the search is seen to work.
func testNothingKeptOfASignIn(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	const code, state = "code-Zx81kq0PlmWa", "state-Yq72Vw0sRkte"
	pasted := `{"update_id":41,"message":{"message_id":7,"chat":{"id":42},"text":"http://127.0.0.1/oauth/callback?code=` + code + `&state=` + state + `"}}`
	if err := db.InboxPut(ctx, store.InboxItem{UpdateID: 41, ChatID: "42", Payload: []byte(pasted)}); err != nil {
		t.Fatal(err)
	}
	card := `{"server":"mine","mode":"connect","url":"https://auth.example/authorize?client_id=c&state=` + state + `"}`
	id, err := db.CreateForm(ctx, store.Form{ChatID: "42", UserID: "42", Payload: card, ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	holding := func(text string) []string {
		t.Helper()
		tables, err := db.Holding(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		return tables
	}
	if got := holding(code); !slices.Equal(got, []string{"inbox"}) {
		t.Errorf("tables holding the code while the message waits = %v, want [inbox]", got)
	}
	if got := holding(state); !slices.Equal(got, []string{"forms", "inbox"}) {
		t.Errorf("tables holding the state while the card is open = %v, want [forms inbox]", got)
	}

	if err := db.InboxDone(ctx, 41); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveForm(ctx, id, 0, `{"server":"mine","mode":"connect"}`, "accept"); err != nil {
		t.Fatal(err)
	}
	db = reopen(t, db, open)
	for _, s := range []string{code, state} {
		if got := holding(s); len(got) != 0 {
			t.Errorf("tables holding %q after the sign-in = %v, want none", s, got)
		}
	}
	if n, err := db.InboxMaxUpdateID(ctx); err != nil || n != 41 {
		t.Errorf("InboxMaxUpdateID = %d, %v; want 41 (the done item stays, without its payload)", n, err)
	}
}
