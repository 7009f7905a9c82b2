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
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin mcpgram \
 && mkdir -p /data /config \
 && chown mcpgram:mcpgram /data /config
COPY --from=build /src/bin/ /usr/local/bin/
COPY mcp-settings.json /config/mcp-settings.json
USER mcpgram
# Relative paths in mcp-settings.json (./data/memory.db, ./data/files) and the
# default DATABASE_PATH (./data/mcpgram.db) all land in the /data volume.
WORKDIR /
ENV MCP_SETTINGS=/config/mcp-settings.json
VOLUME ["/data"]
ENTRYPOINT ["/usr/bin/tini", "--", "mcpgram"]
CMD ["run"]
