# syntax=docker/dockerfile:1
# One image with every relay-mesh binary; docker-compose.yml picks the service with `command:`.
#   docker build -t relay-mesh:local .
# Stages: planner (cargo-chef recipe from the manifests) -> builder (dependencies cooked in their
# own layer, rebuilt only when Cargo.toml/Cargo.lock change; then one `cargo build`) -> runtime.
ARG RUST_VERSION=1.95
ARG CARGO_CHEF_VERSION=0.1.78

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
# agent-spawner finds agent-harness beside itself; its demo config runs fake-agent from PATH.
COPY --from=builder \
    /app/target/release/session-registry \
    /app/target/release/event-ingest \
    /app/target/release/delivery-runner \
    /app/target/release/permission-manager \
    /app/target/release/cost-aggregator \
    /app/target/release/automation \
    /app/target/release/gateway \
    /app/target/release/agent-spawner \
    /app/target/release/agent-harness \
    /app/target/release/fake-agent \
    /app/target/release/relayctl \
    /usr/local/bin/
USER relay
WORKDIR /home/relay
ENV RELAY_TELEMETRY__LOG_FORMAT=json
# gateway: 8080 (set RELAY_GATEWAY__LISTEN=0.0.0.0:8080); others: RELAY_TELEMETRY__HEALTH_LISTEN.
EXPOSE 8080 9090
# No default service: name one, e.g. `docker run relay-mesh:local gateway`.
CMD ["sh", "-c", "echo 'relay-mesh: give the binary to run: session-registry event-ingest delivery-runner permission-manager cost-aggregator automation gateway agent-spawner agent-harness fake-agent relayctl' >&2; exit 64"]
