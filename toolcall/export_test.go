package toolcall

// RepairJSON is the tolerant JSON pass, for its table and fuzz tests.
var RepairJSON = repairJSON
