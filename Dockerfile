# syntax=docker/dockerfile:1
# mcpgram: the bot and its bundled MCP servers, with Node.js so that npm MCP
# servers run through npx. Build: docker build -t mcpgram .

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# The same command as `make build`, which the tests exercise.
RUN make build VERSION="${VERSION}"

FROM node:22-bookworm-slim
# /data, /config and the npm cache belong to the user the bot runs as, so
# that Docker fills named volumes mounted there with that ownership: the
# bot can write them on a fresh host without anyone running chown.
# bubblewrap sandboxes the MCP servers where the container may make
# namespaces: under Docker's default seccomp profile it may not, and they
# run under Landlock instead (docs/security.md: "What an MCP server can reach").
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata tini bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin mcpgram \
 && mkdir -p /data /config /home/mcpgram/.cache/mcpgram \
 && chown mcpgram:mcpgram /data /config /home/mcpgram/.cache /home/mcpgram/.cache/mcpgram
COPY --from=build /src/bin/ /usr/local/bin/
COPY --chown=mcpgram:mcpgram mcp-settings.json /config/mcp-settings.json
USER mcpgram
# Relative paths in mcp-settings.json (./data/memory/memory.db, ./data/files) are
# relative to its folder, so they land in /config/data, a folder of the
# servers' own; DATABASE_PATH is the bot's, in the /data volume.
WORKDIR /
ENV MCP_SETTINGS=/config/mcp-settings.json \
    DATABASE_PATH=/data/mcpgram.db \
    HTTP_LISTEN=0.0.0.0:9090
VOLUME ["/data"]
# /metrics, /healthz and /readyz, for Prometheus and the health check.
EXPOSE 9090
# Healthy while /readyz is: the database answers, the bot polls Telegram
# (an answer to getUpdates at least every 30 s) and the model is not
# failing. With HTTP_LISTEN emptied, the check reads /data/heartbeat.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["mcpgram", "health"]
ENTRYPOINT ["/usr/bin/tini", "--", "mcpgram"]
CMD ["run"]
