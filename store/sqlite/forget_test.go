package sqlite_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// What the store forgets is gone from the database file too, not left in
// a page's free space where a copy of the file would keep it: a sign-in's
// code and state, in a pasted message that InboxDone forgets and a form
// saved without them, and a sign-in's flow taken once (secure_delete).
func TestForgottenLeavesTheFile(t *testing.T) {
	db, path := open(t)
	ctx := t.Context()
	const code, state = "code-Vb39rLe02Qnd", "state-Pw61mXc8Tyga"
	pasted := `{"update_id":7,"message":{"text":"http://127.0.0.1/oauth/callback?code=` + code + `&state=` + state + `"}}`
	if err := db.InboxPut(ctx, store.InboxItem{UpdateID: 7, ChatID: "42", Payload: []byte(pasted)}); err != nil {
		t.Fatal(err)
	}
	id, err := db.CreateForm(ctx, store.Form{ChatID: "42", UserID: "42", Payload: `{"url":"https://auth.example/authorize?state=` + state + `"}`, ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutOAuthFlow(ctx, store.OAuthFlow{State: "digest", Server: "s", Sealed: []byte("sealed-" + code), ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := db.InboxDone(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveForm(ctx, id, 0, `{}`, "accept"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.TakeOAuthFlow(ctx, "digest"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{code, state} {
			if bytes.Contains(raw, []byte(s)) {
				t.Errorf("%s holds %q after it was forgotten", file, s)
			}
		}
	}
}
