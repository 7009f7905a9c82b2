#!/bin/sh
# The browser of the authorization scenarios (make conformance): mcpgram
# runs $BROWSER with the authorization URL, as it would a person's
# browser. The conformance suite's authorization server approves at once,
# redirecting to mcpgram's loopback port with the code and state; this
# follows that redirect, which is all a person's browser would do there.
set -eu
exec curl --silent --show-error --fail --location --max-redirs 5 --output /dev/null "$1"
