// TypeScript client for the relay-mesh HTTP API. `./generated/` is generated from
// docs/api/openapi.json by openapi-typescript (`make sdks`); the rest is what a generator does
// not write: auth, RelayError from the error envelope, event streams that resume.
export { RelayClient, type RelayClientOptions, type StreamOptions } from "./client.js";
export { RelayError, type ErrorCode } from "./errors.js";
export { EventStream, type Event } from "./events.js";
export type { components, operations, paths } from "./generated/schema.js";
export { API_VERSION } from "./generated/version.js";
