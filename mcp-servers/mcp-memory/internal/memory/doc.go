// Package memory is the logic of the bundled memory MCP server: a SQLite
// store of per-user memories with full-text search, the detector that keeps
// personal information out unless the user agreed, and the MCP tool that
// puts both in front of a model.
package memory
