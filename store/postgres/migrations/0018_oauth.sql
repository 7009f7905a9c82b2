-- Sign-ins to protected MCP servers (MCP authorization, OAuth 2.1). What
-- the rows hold is sealed by the program (AES-256-GCM under the operator's
-- OAUTH_KEY): tokens and client secrets are never here in the clear.
--
-- A grant is one sign-in: user_id '' is the operator's, which every chat
-- shares. version counts its writes; refresh_until is a claim to refresh
-- it, held by one process until then, so that a refresh token is spent
-- once.
CREATE TABLE oauth_grants (
    server        text    NOT NULL,
    user_id       text    NOT NULL,
    sealed        bytea   NOT NULL,
    version       bigint  NOT NULL,
    refresh_until bigint,
    updated_at    bigint  NOT NULL,
    PRIMARY KEY (server, user_id)
);

-- Clients registered with an authorization server (dynamic client
-- registration), kept to be used again.
CREATE TABLE oauth_clients (
    server       text    NOT NULL,
    issuer       text    NOT NULL,
    redirect_uri text    NOT NULL,
    sealed       bytea   NOT NULL,
    created_at   bigint  NOT NULL,
    PRIMARY KEY (server, issuer, redirect_uri)
);

-- Sign-ins under way, named by a digest of their state parameter: taken
-- once, when the browser comes back, and not after they expire.
CREATE TABLE oauth_flows (
    state      text    PRIMARY KEY,
    server     text    NOT NULL,
    user_id    text    NOT NULL,
    sealed     bytea   NOT NULL,
    expires_at bigint  NOT NULL
);
