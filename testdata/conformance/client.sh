#!/bin/sh
# The MCP client the official conformance suite runs (make conformance):
#
#   npx conformance client --command testdata/conformance/client.sh --scenario NAME
#
# The suite starts a test server and runs this script with the server's URL
# as the last argument, and the scenario's name in MCP_CONFORMANCE_SCENARIO.
# The script is no client of its own: it writes a settings file with one
# Streamable HTTP server at that URL and runs mcpgram's operator commands
# (`mcpgram mcp list`, `mcpgram mcp call`) on it, the hub and MCP client the
# bot runs on. stdin is not a terminal, so a form the server asks for is
# answered as `mcp call` answers without one: with each field's default.
# MCPGRAM names the binary (default: mcpgram on PATH).
set -eu
url=$(eval echo "\${$#}")
case $url in
http://127.0.0.1:*|http://localhost:*) ;;
*) echo "client.sh: expected the test server's URL, got $url" >&2; exit 2 ;;
esac
mcpgram=${MCPGRAM:-mcpgram}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '{"mcpServers": {"conformance": {"type": "streamableHttp", "url": "%s", "timeout": 30}}}\n' "$url" >"$dir/mcp-settings.json"
mcp() {
	"$mcpgram" --mcp-settings "$dir/mcp-settings.json" --database-path "$dir/mcpgram.db" mcp "$@" </dev/null
}
case ${MCP_CONFORMANCE_SCENARIO:-} in
initialize) mcp list ;;
tools_call) mcp call conformance add_numbers '{"a": 2, "b": 3}' ;;
elicitation-sep1034-client-defaults) mcp call conformance test_client_elicitation_defaults ;;
sse-retry) mcp call conformance test_reconnection ;;
*) echo "client.sh: no steps for scenario \"${MCP_CONFORMANCE_SCENARIO:-}\"" >&2; exit 2 ;;
esac
