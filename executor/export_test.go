package executor

import (
	"github.com/mcpgram/mcpgram/hub"
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

func (e *Executor) Check(cat hub.Catalog, b toolcall.Block) (Call, error) { return e.check(cat, b) }
