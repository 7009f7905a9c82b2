package executor_test

import (
	"testing"

	"github.com/mcpgram/mcpgram/executor"
	"github.com/mcpgram/mcpgram/toolcall"
)

// BenchmarkCheck checks one tool call against a catalog whose schemas are
// already compiled, as in every turn after the first.
func BenchmarkCheck(b *testing.B) {
	ex := executor.New(nil, executor.Options{})
	cat := testCatalog()
	blk := toolcall.Parse(tool("everything", "get-sum", `{"a": 1, "b": 2}`)).Blocks[0]
	if _, err := ex.Check(cat, blk); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ex.Check(cat, blk); err != nil {
			b.Fatal(err)
		}
	}
}
