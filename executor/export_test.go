package executor

import "github.com/mcpgram/mcpgram/hub"

// The steps of Prepare, for the tests of each.
var (
	PlanReply     = selectBlocks
	Runnable      = runnable
	CheckText     = checkText
	Feedback      = feedback
	NeedsApproval = needsApproval
)

func (e *Executor) Check(cat hub.Catalog, b Block) (Call, error) { return e.check(cat, b) }

// RepairJSON is the tolerant JSON pass, for its table and fuzz tests.
var RepairJSON = repairJSON
