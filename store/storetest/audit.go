package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpgram/mcpgram/store"
)

func testToolCalls(t *testing.T, open Open) {
	ctx := t.Context()
	db := open(t)
	if got, err := db.ToolCalls(ctx, 10); err != nil || len(got) != 0 {
		t.Fatalf("ToolCalls on empty log = %v, %v; want none", got, err)
	}
	for i := range 5 {
		c := store.ToolCall{
			UserID: "u1", ChatID: "c1", Server: "fs", Tool: fmt.Sprintf("tool%d", i),
			Arguments: `{"path":"/tmp"}`, Status: "ok",
			Duration: 1500*time.Microsecond + time.Duration(i)*time.Second, ResultBytes: 100 * i,
		}
		if err := db.RecordToolCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	db = reopen(t, db, open)

	tests := []struct {
		limit     int
		wantTools []string
	}{
		{2, []string{"tool4", "tool3"}},
		{0, []string{"tool4", "tool3", "tool2", "tool1", "tool0"}},
		{50, []string{"tool4", "tool3", "tool2", "tool1", "tool0"}},
	}
	for _, tt := range tests {
		got, err := db.ToolCalls(ctx, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		var tools []string
		for _, c := range got {
			tools = append(tools, c.Tool)
		}
		if fmt.Sprint(tools) != fmt.Sprint(tt.wantTools) {
			t.Errorf("ToolCalls(%d) tools = %v, want %v", tt.limit, tools, tt.wantTools)
		}
	}

	got, err := db.ToolCalls(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := got[0]
	want := store.ToolCall{
		ID: c.ID, UserID: "u1", ChatID: "c1", Server: "fs", Tool: "tool4",
		Arguments: `{"path":"/tmp"}`, Status: "ok",
		Duration: 4001 * time.Millisecond, ResultBytes: 400, CreatedAt: c.CreatedAt,
	}
	if c != want {
		t.Errorf("newest call = %+v, want %+v", c, want)
	}
	if c.CreatedAt.Location() != time.UTC || time.Since(c.CreatedAt) > time.Minute {
		t.Errorf("CreatedAt = %v, want about now in UTC", c.CreatedAt)
	}
}
