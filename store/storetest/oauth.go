package storetest

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

// A grant is kept per server and user, counted by version; a refresh is
// claimed by one caller at a time, and an update at a stale version is
// refused.
func testOAuthGrant(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if _, err := db.GetOAuthGrant(ctx, "s", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetOAuthGrant of none = %v, want ErrNotFound", err)
	}
	v, err := db.PutOAuthGrant(ctx, "s", "", []byte("operator\x00"))
	if err != nil || v != 1 {
		t.Fatalf("PutOAuthGrant = %d, %v; want 1", v, err)
	}
	if _, err := db.PutOAuthGrant(ctx, "s", "u1", []byte("user")); err != nil {
		t.Fatal(err)
	}
	if v, err = db.PutOAuthGrant(ctx, "s", "", []byte("again")); err != nil || v != 2 {
		t.Fatalf("second PutOAuthGrant = %d, %v; want 2", v, err)
	}
	db = reopen(t, db, open)
	g, err := db.GetOAuthGrant(ctx, "s", "")
	if err != nil || string(g.Sealed) != "again" || g.Version != 2 || g.UpdatedAt.IsZero() {
		t.Fatalf("GetOAuthGrant = %+v, %v; want again at version 2", g, err)
	}
	if g, err := db.GetOAuthGrant(ctx, "s", "u1"); err != nil || string(g.Sealed) != "user" || g.Version != 1 {
		t.Fatalf("user's grant = %+v, %v", g, err)
	}

	until := time.Now().Add(time.Minute)
	if ok, err := db.ClaimOAuthRefresh(ctx, "s", "", 1, until); err != nil || ok {
		t.Errorf("claim at a stale version = %v, %v; want false", ok, err)
	}
	if ok, err := db.ClaimOAuthRefresh(ctx, "s", "", 2, until); err != nil || !ok {
		t.Fatalf("claim = %v, %v; want true", ok, err)
	}
	if ok, err := db.ClaimOAuthRefresh(ctx, "s", "", 2, until); err != nil || ok {
		t.Errorf("second claim = %v, %v; want false", ok, err)
	}
	if v, err := db.UpdateOAuthGrant(ctx, "s", "", 2, []byte("refreshed")); err != nil || v != 3 {
		t.Fatalf("UpdateOAuthGrant = %d, %v; want 3", v, err)
	}
	if _, err := db.UpdateOAuthGrant(ctx, "s", "", 2, []byte("late")); !errors.Is(err, store.ErrChanged) {
		t.Errorf("update at a stale version = %v, want ErrChanged", err)
	}
	// The update ended the claim: version 3 may be claimed.
	if ok, err := db.ClaimOAuthRefresh(ctx, "s", "", 3, time.Now().Add(-time.Second)); err != nil || !ok {
		t.Fatalf("claim after the update = %v, %v; want true", ok, err)
	}
	// A claim whose time has passed is over.
	if ok, err := db.ClaimOAuthRefresh(ctx, "s", "", 3, until); err != nil || !ok {
		t.Errorf("claim after an expired one = %v, %v; want true", ok, err)
	}
	if g, _ := db.GetOAuthGrant(ctx, "s", ""); string(g.Sealed) != "refreshed" || g.Version != 3 {
		t.Errorf("grant = %q at %d, want refreshed at 3", g.Sealed, g.Version)
	}
	if err := db.DeleteOAuthGrant(ctx, "s", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateOAuthGrant(ctx, "s", "", 3, []byte("x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("update of a deleted grant = %v, want ErrNotFound", err)
	}
	if _, err := db.GetOAuthGrant(ctx, "s", "u1"); err != nil {
		t.Errorf("the user's grant went with the operator's: %v", err)
	}
}

// Of many callers claiming one refresh from two handles (two processes),
// exactly one gets it.
func testOAuthConcurrentClaim(t *testing.T, open Open) {
	ctx := t.Context()
	a, b := open(t), open(t)
	v, err := a.PutOAuthGrant(ctx, "s", "", []byte("g"))
	if err != nil {
		t.Fatal(err)
	}
	n := race(8, a, b, func(db Store) bool {
		ok, err := db.ClaimOAuthRefresh(ctx, "s", "", v, time.Now().Add(time.Minute))
		if err != nil {
			t.Error(err)
		}
		return ok
	})
	if n != 1 {
		t.Errorf("%d claims succeeded, want 1", n)
	}
}

// Clients are kept per server, issuer and redirect URI.
func testOAuthClient(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if _, err := db.GetOAuthClient(ctx, "s", "https://as", "http://127.0.0.1/cb"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetOAuthClient of none = %v, want ErrNotFound", err)
	}
	for _, c := range []string{"one", "two"} {
		if err := db.PutOAuthClient(ctx, "s", "https://as", "http://127.0.0.1/cb", []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutOAuthClient(ctx, "s", "https://other", "http://127.0.0.1/cb", []byte("other")); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetOAuthClient(ctx, "s", "https://as", "http://127.0.0.1/cb")
	if err != nil || !bytes.Equal(got, []byte("two")) {
		t.Errorf("GetOAuthClient = %q, %v; want two", got, err)
	}
}

// A flow is taken once, from any handle, and not once expired.
func testOAuthFlow(t *testing.T, open Open) {
	ctx := t.Context()
	a, b := open(t), open(t)
	if _, err := a.TakeOAuthFlow(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("TakeOAuthFlow of none = %v, want ErrNotFound", err)
	}
	f := store.OAuthFlow{State: "st", Server: "s", UserID: "u", Sealed: []byte("f"), ExpiresAt: time.Now().Add(time.Minute)}
	if err := a.PutOAuthFlow(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := a.PutOAuthFlow(ctx, store.OAuthFlow{State: "old", Server: "s", Sealed: []byte("o"), ExpiresAt: time.Now().Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	if g, err := b.GetOAuthFlow(ctx, "st"); err != nil || g.Server != "s" || g.UserID != "u" || string(g.Sealed) != "f" {
		t.Fatalf("GetOAuthFlow = %+v, %v", g, err)
	}
	if _, err := b.GetOAuthFlow(ctx, "old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetOAuthFlow of an expired flow = %v, want ErrNotFound", err)
	}
	n := race(6, a, b, func(db Store) bool {
		g, err := db.TakeOAuthFlow(ctx, "st")
		if err == nil && (g.Server != "s" || g.UserID != "u" || string(g.Sealed) != "f") {
			t.Errorf("TakeOAuthFlow = %+v", g)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Error(err)
		}
		return err == nil
	})
	if n != 1 {
		t.Errorf("the flow was taken %d times, want 1", n)
	}
	if _, err := a.GetOAuthFlow(ctx, "st"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetOAuthFlow of a taken flow = %v, want ErrNotFound", err)
	}
	if _, err := b.TakeOAuthFlow(ctx, "old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TakeOAuthFlow of an expired flow = %v, want ErrNotFound", err)
	}
}

// ListOAuthGrants lists one user's grants (or the operator's), by server
// name, with when each was signed in to and last written: a refresh
// moves UpdatedAt, not SignedInAt, and nobody else's grant is listed.
func testOAuthList(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if got, err := db.ListOAuthGrants(ctx, "u1"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ListOAuthGrants of none = %#v, %v; want an empty list", got, err)
	}
	before := time.Now().Add(-time.Second)
	for _, g := range []struct{ server, user string }{{"zeta", "u1"}, {"alpha", "u1"}, {"alpha", "u2"}, {"alpha", ""}, {"beta", ""}} {
		if _, err := db.PutOAuthGrant(ctx, g.server, g.user, []byte("sealed "+g.server+g.user)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ListOAuthGrants(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Server != "alpha" || got[1].Server != "zeta" {
		t.Fatalf("ListOAuthGrants(u1) = %+v; want alpha and zeta", got)
	}
	for _, g := range got {
		if g.UserID != "u1" || g.SignedInAt.Before(before) || !g.UpdatedAt.Equal(g.SignedInAt) {
			t.Errorf("grant %+v; want u1's, signed in now and not updated since", g)
		}
	}
	if ops, err := db.ListOAuthGrants(ctx, ""); err != nil || len(ops) != 2 || ops[0].Server != "alpha" || ops[1].Server != "beta" {
		t.Errorf("the operator's grants = %+v, %v; want alpha and beta", ops, err)
	}
	if other, err := db.ListOAuthGrants(ctx, "u3"); err != nil || len(other) != 0 {
		t.Errorf("a stranger's grants = %+v, %v; want none", other, err)
	}

	// A refresh moves UpdatedAt only; a new sign-in moves both.
	g, err := db.GetOAuthGrant(ctx, "zeta", "u1")
	if err != nil {
		t.Fatal(err)
	}
	waitMillis(t)
	if _, err := db.UpdateOAuthGrant(ctx, "zeta", "u1", g.Version, []byte("refreshed")); err != nil {
		t.Fatal(err)
	}
	got, _ = db.ListOAuthGrants(ctx, "u1")
	if z := got[1]; !z.UpdatedAt.After(z.SignedInAt) {
		t.Errorf("after a refresh: %+v; want UpdatedAt after SignedInAt", z)
	}
	waitMillis(t)
	if _, err := db.PutOAuthGrant(ctx, "zeta", "u1", []byte("again")); err != nil {
		t.Fatal(err)
	}
	again, _ := db.ListOAuthGrants(ctx, "u1")
	if z := again[1]; !z.SignedInAt.After(got[1].SignedInAt) || !z.UpdatedAt.Equal(z.SignedInAt) {
		t.Errorf("after a new sign-in: %+v; want it signed in anew", z)
	}
	if err := db.DeleteOAuthGrant(ctx, "alpha", "u1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ListOAuthGrants(ctx, "u1"); len(got) != 1 || got[0].Server != "zeta" {
		t.Errorf("after a delete = %+v; want zeta alone", got)
	}
}

// waitMillis lets the clock pass one millisecond, the stores' resolution,
// so that the next write's time differs.
func waitMillis(t *testing.T) {
	t.Helper()
	start := time.Now()
	for time.Since(start) <= time.Millisecond {
		time.Sleep(200 * time.Microsecond)
	}
}

// A grant is taken once, from any handle (process): the taker gets what
// it sealed, the others ErrNotFound; the grant is gone for all, and a
// stale refresh's update finds it so.
func testOAuthTake(t *testing.T, open Open) {
	ctx := t.Context()
	a, b := open(t), open(t)
	if _, err := a.TakeOAuthGrant(ctx, "s", "u1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("TakeOAuthGrant of none = %v, want ErrNotFound", err)
	}
	v, err := a.PutOAuthGrant(ctx, "s", "u1", []byte("mine"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.PutOAuthGrant(ctx, "s", "u2", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	n := race(6, a, b, func(db Store) bool {
		g, err := db.TakeOAuthGrant(ctx, "s", "u1")
		if err == nil && (string(g.Sealed) != "mine" || g.Version != v || g.Server != "s" || g.UserID != "u1") {
			t.Errorf("TakeOAuthGrant = %+v", g)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Error(err)
		}
		return err == nil
	})
	if n != 1 {
		t.Errorf("the grant was taken %d times, want 1", n)
	}
	if _, err := b.GetOAuthGrant(ctx, "s", "u1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetOAuthGrant after the take = %v, want ErrNotFound", err)
	}
	if _, err := b.UpdateOAuthGrant(ctx, "s", "u1", v, []byte("late refresh")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refresh's update after the take = %v, want ErrNotFound", err)
	}
	if g, err := b.GetOAuthGrant(ctx, "s", "u2"); err != nil || string(g.Sealed) != "theirs" {
		t.Errorf("another user's grant = %+v, %v; want it kept", g, err)
	}
}

// race runs f n times at once, alternately on a and b (two processes
// sharing one database), and returns how many of the runs won: returned
// true.
func race(n int, a, b Store, f func(db Store) bool) int {
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		db := a
		if i%2 == 1 {
			db = b
		}
		wg.Go(func() {
			if f(db) {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	return int(won.Load())
}
