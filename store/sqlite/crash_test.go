package sqlite_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
	"github.com/mcpgram/mcpgram/store/sqlite"
	"github.com/mcpgram/mcpgram/store/storetest"
)

// crashChildEnv names the database a re-executed test binary writes to
// until it is killed.
const crashChildEnv = "MCPGRAM_STORE_CRASH_CHILD"

// TestCrashChild is the child of TestCrashLosesNoCommittedWrite: it stores
// updates and messages forever, printing each update id once its commit has
// returned.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("only run as a child of TestCrashLosesNoCommittedWrite")
	}
	ctx := t.Context()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	conv, err := db.AppendTurn(ctx, store.TurnWrite{ChatID: "c"})
	if err != nil {
		fmt.Println("conversation:", err)
		os.Exit(2)
	}
	for id := int64(1); ; id++ {
		if err := db.InboxPut(ctx, store.InboxItem{UpdateID: id, ChatID: "c", Payload: []byte("{}")}); err != nil {
			fmt.Println("put:", err)
			os.Exit(2)
		}
		if err := storetest.AppendMessages(ctx, db, conv, store.Message{Role: "user", Content: strconv.FormatInt(id, 10)}); err != nil {
			fmt.Println("append:", err)
			os.Exit(2)
		}
		fmt.Println(id)
	}
}

// A process killed in the middle of writing loses nothing it was told was
// committed, and leaves a database that opens and keeps working.
func TestCrashLosesNoCommittedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	path := t.TempDir() + "/crash.db"
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var last int64
	lines := bufio.NewScanner(out)
	deadline := time.Now().Add(10 * time.Second)
	for lines.Scan() {
		id, err := strconv.ParseInt(lines.Text(), 10, 64)
		if err != nil {
			t.Fatalf("child: %s", lines.Text())
		}
		last = id
		if last >= 200 || time.Now().After(deadline) {
			break
		}
	}
	// SIGKILL: no deferred Close, no checkpoint, mid-transaction.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if last == 0 {
		t.Fatal("the child committed nothing before it was killed")
	}

	db, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	maxID, err := db.InboxMaxUpdateID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if maxID < last {
		t.Errorf("inbox max update id after kill = %d, want >= %d (the last acknowledged)", maxID, last)
	}
	items, err := db.InboxQueued(t.Context(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		if it.UpdateID != int64(i+1) {
			t.Fatalf("inbox has a gap: item %d is update %d", i, it.UpdateID)
		}
	}
	conv, err := db.AppendTurn(t.Context(), store.TurnWrite{ChatID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := db.Messages(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(msgs)) < last {
		t.Errorf("%d messages after kill, want >= %d", len(msgs), last)
	}
	if err := db.InboxPut(t.Context(), store.InboxItem{UpdateID: maxID + 1}); err != nil {
		t.Errorf("InboxPut after kill: %v", err)
	}
	t.Logf("killed after %d acknowledged writes; found %d updates, %d messages", last, len(items), len(msgs))
}
