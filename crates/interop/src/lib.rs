//! Tests only: each file in `tests/` starts the real mesh and the gateway binary, then runs a
//! script in `py/` or `js/` that drives them with another ecosystem's official client (a2a-sdk,
//! the MCP Python SDK, `@ag-ui/client`, nats-py, nats.js) or with the SDKs in `sdks/`.
