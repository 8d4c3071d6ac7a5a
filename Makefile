# relay-mesh. `make test` is what CI runs (.ci/run).
CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: test build services run up bench fmt lint clean-test-dbs openapi fuzz

## Start NATS and Postgres if needed, then build and run every test.
test: services
	$(CARGO) build --workspace --all-targets
	$(CARGO) test --workspace --no-fail-fast

build:
	$(CARGO) build --workspace

services:
	./scripts/ensure-services.sh

## Run every service against the local NATS and Postgres (database `relay`), until Ctrl-C.
run: services
	$(CARGO) build -p session-registry -p event-ingest -p delivery-runner -p permission-manager -p cost-aggregator -p agent-harness -p gateway
	./scripts/run-local.sh

## Until docker compose is wired up (issue 7): the same as `run`.
up: run

## Benchmarks; figures printed and written to bench/results/*.json.
bench: services
	$(CARGO) build --release -p session-registry -p event-ingest -p delivery-runner -p cost-aggregator -p gateway
	$(CARGO) bench -p session-registry --bench registry
	$(CARGO) bench -p event-ingest --bench events
	$(CARGO) bench -p delivery-runner --bench delivery
	$(CARGO) bench -p cost-aggregator --bench costs
	$(CARGO) bench -p gateway --bench gateway

## Regenerate docs/api/openapi.json from the gateway's types (a test fails when it is stale).
openapi:
	$(CARGO) run -q -p gateway -- --openapi > docs/api/openapi.json

## Validate the OpenAPI document and fuzz the running API from it with schemathesis (PyPI).
fuzz: services
	$(CARGO) build -p session-registry -p event-ingest -p delivery-runner -p permission-manager -p cost-aggregator -p gateway
	./scripts/fuzz-api.sh

fmt:
	$(CARGO) fmt --all

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## Drop databases left behind by killed test runs.
clean-test-dbs:
	psql -h 127.0.0.1 -U postgres -tAc "SELECT datname FROM pg_database WHERE datname LIKE 'relay_t_%'" \
	  | xargs -r -I{} psql -h 127.0.0.1 -U postgres -qc 'DROP DATABASE IF EXISTS "{}" WITH (FORCE)'
