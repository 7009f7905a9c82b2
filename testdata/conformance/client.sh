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
#
# The authorization scenarios (auth/*) sign in first with `mcpgram mcp
# login` and then call the test tool; browser.sh stands in for the
# browser ($BROWSER), following the authorization server's redirect back
# to mcpgram. The pre-registered client of auth/pre-registration comes in
# MCP_CONFORMANCE_CONTEXT and goes into the entry's "oauth" object through
# ${env:...}; the Client ID Metadata Document URL is the one the suite
# expects (auth/basic-cimd). The client credentials scenarios
# (auth/client-credentials-*) sign nobody in: the entry says "grant":
# "client_credentials" with the client's secret, or with its private key
# in a file beside the settings (private_key_jwt), and `mcp call` gets
# its token itself. So does enterprise-managed authorization
# (auth/cross-app-access-complete-flow): the entry says "grant":
# "enterprise_managed" with the client's secret and the identity
# provider's issuer and client, and the operator's ID token lies in a
# file beside the settings.
set -eu
url=$(eval echo "\${$#}")
case $url in
http://127.0.0.1:*|http://localhost:*) ;;
*) echo "client.sh: expected the test server's URL, got $url" >&2; exit 2 ;;
esac
mcpgram=${MCPGRAM:-mcpgram}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
oauth=
context=${MCP_CONFORMANCE_CONTEXT:-}
field() { # the string field $1 of the context (node is the suite's own)
	node -e 'process.stdout.write(String(JSON.parse(process.argv[1])[process.argv[2]] ?? ""))' "$context" "$1"
}
case ${MCP_CONFORMANCE_SCENARIO:-} in
auth/client-credentials-jwt)
	# The operator keeps the registered client's private key in a file
	# beside the settings; the entry names it.
	CONFORMANCE_CLIENT_ID=$(field client_id)
	export CONFORMANCE_CLIENT_ID
	(umask 077 && field private_key_pem >"$dir/client-key.pem")
	oauth=', "oauth": {"grant": "client_credentials", "clientId": "${env:CONFORMANCE_CLIENT_ID}", "privateKeyFile": "client-key.pem"}'
	;;
auth/cross-app-access-*)
	CONFORMANCE_CLIENT_ID=$(field client_id) CONFORMANCE_CLIENT_SECRET=$(field client_secret)
	export CONFORMANCE_CLIENT_ID CONFORMANCE_CLIENT_SECRET
	(umask 077 && field idp_id_token >"$dir/id-token.jwt")
	idp=$(printf '{"issuer": "%s", "clientId": "%s", "idTokenFile": "id-token.jwt"}' "$(field idp_issuer)" "$(field idp_client_id)")
	oauth=', "oauth": {"grant": "enterprise_managed", "clientId": "${env:CONFORMANCE_CLIENT_ID}", "clientSecret": "${env:CONFORMANCE_CLIENT_SECRET}", "idp": '"$idp"'}'
	;;
auth/client-credentials-*)
	CONFORMANCE_CLIENT_ID=$(field client_id) CONFORMANCE_CLIENT_SECRET=$(field client_secret)
	export CONFORMANCE_CLIENT_ID CONFORMANCE_CLIENT_SECRET
	oauth=', "oauth": {"grant": "client_credentials", "clientId": "${env:CONFORMANCE_CLIENT_ID}", "clientSecret": "${env:CONFORMANCE_CLIENT_SECRET}"}'
	;;
*)
	case $context in
	*'"client_id"'*)
		CONFORMANCE_CLIENT_ID=$(field client_id) CONFORMANCE_CLIENT_SECRET=$(field client_secret)
		export CONFORMANCE_CLIENT_ID CONFORMANCE_CLIENT_SECRET
		oauth=', "oauth": {"clientId": "${env:CONFORMANCE_CLIENT_ID}", "clientSecret": "${env:CONFORMANCE_CLIENT_SECRET}"}'
		;;
	esac
	;;
esac
printf '{"mcpServers": {"conformance": {"type": "streamableHttp", "url": "%s", "timeout": 30%s}}}\n' "$url" "$oauth" >"$dir/mcp-settings.json"
here=$(cd "$(dirname "$0")" && pwd)
export BROWSER="$here/browser.sh"
export OAUTH_KEY=conformance-suite-key-0123456789abcdef
export OAUTH_CLIENT_METADATA_URL=https://conformance-test.local/client-metadata.json
mcp() {
	"$mcpgram" --mcp-settings "$dir/mcp-settings.json" --database-path "$dir/mcpgram.db" mcp "$@" </dev/null
}
case ${MCP_CONFORMANCE_SCENARIO:-} in
initialize) mcp list ;;
tools_call) mcp call conformance add_numbers '{"a": 2, "b": 3}' ;;
elicitation-sep1034-client-defaults) mcp call conformance test_client_elicitation_defaults ;;
sse-retry) mcp call conformance test_reconnection ;;
# Client credentials and enterprise-managed authorization: nobody signs
# in; the call gets its token itself.
auth/client-credentials-* | auth/cross-app-access-*) mcp call conformance test-tool ;;
auth/*) mcp login conformance && mcp call conformance test-tool ;;
*) echo "client.sh: no steps for scenario \"${MCP_CONFORMANCE_SCENARIO:-}\"" >&2; exit 2 ;;
esac
