package executor

import (
	"github.com/mcpgram/mcpgram"
	"github.com/mcpgram/mcpgram/toolcall"
)

// The steps of Prepare, for the tests of each.
var (
	PlanReply     = selectBlocks
	Runnable      = runnable
	CheckText     = checkText
	Feedback      = feedback
	NeedsApproval = needsApproval
)

func (e *Executor) Check(cat mcpgram.Catalog, b toolcall.Block) (Call, error) { return e.check(cat, b) }
