package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// A form lives from its creation to one resolution, saved version by
// version; it neither supersedes the chat's open question nor is
// superseded by a new one, and several are open at once.
func testFormLifecycle(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	expires := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := db.CreatePending(ctx, store.Pending{ChatID: "c1", UserID: "u1", Kind: store.KindQuestion, Payload: "q"}); err != nil {
		t.Fatal(err)
	}
	id1, err := db.CreateForm(ctx, store.Form{ChatID: "c1", UserID: "u1", Payload: `{"step":0}`, ExpiresAt: expires})
	if err != nil {
		t.Fatal(err)
	}
	id2, err := db.CreateForm(ctx, store.Form{ChatID: "c1", UserID: "u2", Payload: `{}`, ExpiresAt: expires})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateForm(ctx, store.Form{ChatID: "c2", UserID: "u1", Payload: `{}`, ExpiresAt: expires}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreatePending(ctx, store.Pending{ChatID: "c1", UserID: "u1", Kind: store.KindApproval, Payload: "a"}); err != nil {
		t.Fatal(err)
	}
	forms, err := db.OpenForms(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if ids := formIDs(forms); !slices.Equal(ids, []int64{id1, id2}) {
		t.Fatalf("OpenForms = %v, want %v, oldest first (a new question or approval closes no form)", ids, []int64{id1, id2})
	}
	if p, err := db.OpenPending(ctx, "c1"); err != nil || p.Kind != store.KindApproval {
		t.Errorf("OpenPending = %+v, %v; want the approval (a form supersedes nothing)", p, err)
	}
	f := forms[0]
	if f.UserID != "u1" || f.Payload != `{"step":0}` || f.Version != 0 || !f.ExpiresAt.Equal(expires) || !f.IsOpen() || f.CreatedAt.IsZero() {
		t.Errorf("form = %+v", f)
	}

	if err := db.SaveForm(ctx, id1, 0, `{"step":1}`, ""); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveForm(ctx, id1, 0, `{"step":9}`, ""); !errors.Is(err, store.ErrChanged) {
		t.Errorf("a save of an old version = %v, want ErrChanged", err)
	}
	db = reopen(t, db, open)
	if err := db.SaveForm(ctx, id1, 1, `{"step":2}`, "accept"); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveForm(ctx, id1, 2, `{"step":3}`, "cancel"); !errors.Is(err, store.ErrResolved) {
		t.Errorf("a save of a resolved form = %v, want ErrResolved", err)
	}
	got, err := db.GetForm(ctx, id1)
	if err != nil {
		t.Fatal(err)
	}
	if got.IsOpen() || got.Resolution != "accept" || got.Payload != `{"step":2}` || got.Version != 2 || got.ResolvedAt.Location() != time.UTC {
		t.Errorf("resolved form = %+v, want accept with the last payload, version 2", got)
	}
	if forms, err := db.OpenForms(ctx, "c1"); err != nil || !slices.Equal(formIDs(forms), []int64{id2}) {
		t.Errorf("OpenForms = %v, %v; want only %d", formIDs(forms), err, id2)
	}
	if _, err := db.GetForm(ctx, 12345); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetForm(unknown) = %v, want ErrNotFound", err)
	}
	if err := db.SaveForm(ctx, 12345, 0, "x", ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SaveForm(unknown) = %v, want ErrNotFound", err)
	}
	if forms, err := db.OpenForms(ctx, "nobody"); err != nil || len(forms) != 0 {
		t.Errorf("OpenForms of a chat with none = %v, %v", forms, err)
	}
}

func formIDs(fs []store.Form) []int64 {
	var ids []int64
	for _, f := range fs {
		ids = append(ids, f.ID)
	}
	return ids
}

// Saves of one version from several handles, as presses reaching two
// instances at once: exactly one wins, the others learn to read again.
func testConcurrentSaveForm(t *testing.T, open Open) {
	ctx := t.Context()
	hs := handles(t, open, 2)
	id, err := hs[0].CreateForm(ctx, store.Form{ChatID: "c", UserID: "u", Payload: "v0", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	const savers = 16
	errs := make([]error, savers)
	var wg sync.WaitGroup
	for i := range savers {
		resolution := ""
		if i%2 == 0 {
			resolution = "accept"
		}
		wg.Go(func() { errs[i] = hs[i%2].SaveForm(ctx, id, 0, fmt.Sprint("v1-", i), resolution) })
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrChanged) && !errors.Is(err, store.ErrResolved):
			t.Errorf("save %d: %v, want ErrChanged or ErrResolved", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d saves of one version won, want 1", won)
	}
	f, err := hs[1].GetForm(ctx, id)
	if err != nil || f.Version != 1 {
		t.Errorf("form = %+v, %v; want version 1", f, err)
	}
}
