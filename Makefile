# relay-mesh. `make test` is what CI runs (.ci/run).
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: modules soak test test-guide build services agent-clis test-latest-clis console-deps interop-deps pg-proxy sandbox sdks run up bench chaos chaos-cluster chaos-failover fmt lint clean-test-dbs openapi fuzz fuzz-random compose-check compose-smoke compose-smoke-agents deploy-check

## Start NATS and Postgres if needed, install the pinned agent CLIs, the console's browser
## (Debian's chromium, playwright-core), HAProxy and bubblewrap if missing, then build and run
## every test.
test: services agent-clis console-deps interop-deps pg-proxy sandbox
	$(CARGO) build --workspace --all-targets
	$(CARGO) test --workspace --no-fail-fast
	./scripts/test-guide.sh

## The README's "Run your own agents" as written: `make up` with the pinned real CLIs against the
## scripted model server, a task, its permission approved, its cost (needs 8080 and 4322 free).
test-guide: services agent-clis
	$(CARGO) build --workspace --bins
	./scripts/test-guide.sh

build:
	$(CARGO) build --workspace

services:
	./scripts/ensure-services.sh

## The real agent CLIs the tests drive (Claude Code, Codex, Gemini CLI), at pinned versions, into
## ~/.cache/relay-mesh/agent-clis (RELAY_AGENT_CLIS); nothing is downloaded when they are there.
agent-clis:
	./scripts/install-agent-clis.sh >/dev/null

## The real-CLI tests against whatever npm serves today (installed afresh as <name>-latest; Node
## 22 for Claude Code's from npm when needed). Not part of `make test` or CI: a release that
## changes a menu or a protocol fails here before a user meets it.
test-latest-clis: services
	./scripts/install-agent-clis.sh --latest >/dev/null
	$(CARGO) build --workspace --bins
	RELAY_CLAUDE_VERSION=latest RELAY_CODEX_VERSION=latest RELAY_GEMINI_VERSION=latest \
		$(CARGO) test -p agent-harness --test real_clis --no-fail-fast

## Debian's chromium (apt) and playwright-core (npm, ~/.cache/relay-mesh/console-e2e) for the
## console's browser test; nothing is installed when they are there.
console-deps:
	./scripts/install-console-deps.sh >/dev/null

## Debian's haproxy, the address that follows the primary in the Postgres failover tests; nothing
## is installed when it is there.
pg-proxy:
	./scripts/install-pg-proxy.sh

## Debian's bubblewrap, the optional per-agent sandbox the containment tests run agents in;
## nothing is installed when it is there.
sandbox:
	./scripts/install-sandbox.sh

## The npm packages of the interop tests and the TypeScript SDKs (`npm ci` from their lock files
## into ~/.cache/relay-mesh/npm, linked as node_modules), and protoc (PyPI's grpcio-tools, into
## ~/.cache/relay-mesh/py) for the proto test; nothing is installed when they are there.
interop-deps:
	./scripts/install-interop-deps.sh

## Run every service as local processes against the local NATS and Postgres (database `relay`),
## the same topology and configuration as docker compose, until Ctrl-C.
run: services
	$(CARGO) build --workspace --bins
	./scripts/run-local.sh

## The local cluster: docker compose (gateway :8080, Jaeger :16686) where a Docker engine runs,
## else the same services as local processes (`make run`).
up:
	@if docker compose version >/dev/null 2>&1 && docker info >/dev/null 2>&1; then \
	  docker compose up --build; else echo "no Docker engine: running the services as local processes"; $(MAKE) run; fi

## Validate docker-compose.yml, the Dockerfile and deploy/compose/* without a Docker engine.
compose-check:
	./scripts/compose-check.sh

## docker compose up for real (Docker, else podman + podman-compose with local stand-ins for
## images no registry serves): build, all healthy, the quick start, kill -9 of a service
## container with nothing lost, down -v. Not in CI: the image's release build alone takes most
## of CI's time budget on two cores.
compose-smoke:
	./scripts/compose-smoke.sh

## The agents override (deploy/compose/agents.yml) under compose, its real CLIs pointed at the
## scripted model server: each CLI a command approved, one denied, costed; homes kept over a
## restart. Not in CI, for the same reason.
compose-smoke-agents:
	./scripts/compose-smoke.sh --agents

## Offline checks of deploy/ (NATS configs, Kubernetes manifests; needs kubectl).
deploy-check:
	./deploy/check.sh

## Benchmarks; figures printed and written to bench/results/*.json.
bench: services console-deps
	$(CARGO) build --release -p session-registry -p event-ingest -p delivery-runner -p cost-aggregator -p gateway -p agent-harness
	$(CARGO) bench -p session-registry --bench registry
	$(CARGO) bench -p session-registry --bench messaging
	$(CARGO) bench -p agent-harness --bench placement
	$(CARGO) bench -p event-ingest --bench events
	$(CARGO) bench -p delivery-runner --bench delivery
	$(CARGO) bench -p cost-aggregator --bench costs
	$(CARGO) bench -p gateway --bench gateway
	$(CARGO) bench -p gateway --bench console
	$(CARGO) bench -p gateway --bench send_path

## The mesh under fire: under steady load, kill -9 each service and the gateway, kill NATS,
## crash Postgres; counts lost and duplicated work → bench/results/chaos.json. It starts its own
## nats-server and its own Postgres server (initdb), so the machine's are never restarted.
chaos:
	$(CARGO) build --workspace --bins
	$(CARGO) test -p relay-client --test chaos -- --ignored --nocapture --exact under_kill9_and_nats_and_postgres_restarts_nothing_acknowledged_is_lost_or_surfaced_twice

## The same load on a 3-node NATS cluster (two replicas of each service), nodes killed and
## restarted in turn → bench/results/chaos-cluster.json.
chaos-cluster:
	$(CARGO) build --workspace --bins
	$(CARGO) test -p relay-client --test chaos -- --ignored --nocapture --exact under_a_nats_cluster_node_killed_and_restarted_nothing_acknowledged_is_lost_or_surfaced_twice

## The same load through a Postgres failover (HAProxy in front of a primary and its streaming
## standby; the primary killed, the standby promoted), asynchronous then synchronous replication
## → bench/results/chaos-failover.json.
chaos-failover: pg-proxy
	$(CARGO) build --workspace --bins
	$(CARGO) test -p relay-client --test chaos -- --ignored --nocapture --exact under_a_postgres_failover_with_synchronous_commit_nothing_acknowledged_is_lost

## Bounded growth (outside CI): the chaos load for an hour with short retention windows; each
## table's size, dead tuples, service RSS and send p99 over time → bench/results/soak.json.
## RELAY_SOAK_SECONDS, RELAY_SOAK_WINDOW_SECONDS, RELAY_SOAK_SAMPLE_SECONDS shorten it.
soak:
	$(CARGO) build --workspace --bins
	$(CARGO) test -p relay-client --test chaos -- --ignored --nocapture --exact soak_at_steady_load_table_sizes_memory_and_latency_over_time

## Regenerate docs/api/openapi.json from the gateway's types (a test fails when it is stale).
openapi:
	$(CARGO) run -q -p gateway -- --openapi > docs/api/openapi.json

## Regenerate the Python and TypeScript client SDKs' generated code (sdks/*/…/generated) from
## docs/api/openapi.json with the pinned generators, and set their version to the API's (a test
## fails when they are stale).
sdks:
	./sdks/generate.sh

## Validate the OpenAPI document and fuzz the running API from it with schemathesis (PyPI).
fuzz: services
	$(CARGO) build -p session-registry -p event-ingest -p delivery-runner -p permission-manager -p cost-aggregator -p coordination -p automation -p gateway -p agent-harness -p relayctl
	./scripts/fuzz-api.sh

## The same with a fresh seed and more examples, for longer runs outside CI.
fuzz-random: services
	$(CARGO) build -p session-registry -p event-ingest -p delivery-runner -p permission-manager -p cost-aggregator -p coordination -p automation -p gateway -p agent-harness -p relayctl
	FUZZ_SEED=$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ') FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-200} ./scripts/fuzz-api.sh

fmt:
	$(CARGO) fmt --all

## Every crate's graph of top-level modules (what each uses), checked for cycles.
modules:
	$(CARGO) test -p relay-contracts --test modules -- --nocapture

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## Drop databases left behind by killed test runs.
clean-test-dbs:
	psql -h 127.0.0.1 -U postgres -tAc "SELECT datname FROM pg_database WHERE datname LIKE 'relay_t_%'" \
	  | xargs -r -I{} psql -h 127.0.0.1 -U postgres -qc 'DROP DATABASE IF EXISTS "{}" WITH (FORCE)'
