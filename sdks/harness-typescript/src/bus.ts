// The connection to the mesh and calls over it, as `relay_bus::connect_nats` and
// `relay_bus::client` make them in Rust.
//
// A harness with its own NATS identity (a `.creds` whose user JWT names an agent and carries the
// tag `workspace:<ws>`, as the spawner or `relayctl auth harness` mints it) calls on the harness
// form of each subject, `harness.<workspace>.<agentId>.<subject>`: its identity may publish
// nowhere else, and the prefix is what tells the services which agent calls. Any other identity
// (a service's `.creds`, an nkey seed, a token, none) calls on the plain subjects.

import { readFileSync } from "node:fs";
import {
  connect as natsConnect,
  credsAuthenticator,
  errors,
  headers as natsHeaders,
  nkeyAuthenticator,
  tokenAuthenticator,
  type Authenticator,
  type MsgHdrs,
  type NatsConnection,
  type NodeConnectionOptions,
} from "@nats-io/transport-node";

export const CALLER_HEADER = "Relay-Caller";
export const WORKSPACE_HEADER = "Relay-Workspace";
export const ERROR_HEADER = "Nats-Service-Error";
export const ERROR_CODE_HEADER = "Nats-Service-Error-Code";
export const DEFAULT_WORKSPACE = "default";

/** The wire error codes by the status a micro service puts in its error header. */
export const STATUS: Record<string, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  capability_unsupported: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  timeout: 504,
};

/** The mesh's wire error `{"error": {code, message, retryable, details}}`. */
export class RelayError extends Error {
  readonly retryable: boolean;
  /** The message as on the wire (without the code). */
  readonly wireMessage: string;

  constructor(
    readonly code: string,
    message: string,
    retryable?: boolean,
    readonly details?: unknown,
  ) {
    super(`${code}: ${message}`);
    this.name = "RelayError";
    this.retryable = retryable ?? (code === "unavailable" || code === "timeout");
    this.wireMessage = message;
  }

  wire(): unknown {
    const error: Record<string, unknown> = { code: this.code, message: this.wireMessage, retryable: this.retryable };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

/** (name, workspace tag if any) of the user JWT in a `.creds` text (not verified: the server does that). */
export function credsIdentity(creds: string): [string, string | undefined] {
  const lines = creds.split(/\r?\n/);
  const at = lines.findIndex((l) => l.includes("BEGIN NATS USER JWT"));
  if (at < 0 || at + 1 >= lines.length) throw new Error("no user JWT in the credentials");
  const body = lines[at + 1].trim().split(".")[1];
  const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  const tags: string[] = claims?.nats?.tags ?? [];
  const workspace = tags.find((t) => t.startsWith("workspace:"))?.slice("workspace:".length);
  return [claims.name ?? "", workspace];
}

/** A NATS connection that calls as one caller: an agent's harness, or a plain client. */
export class Bus {
  /** [workspace, agentId] when the identity is an agent's harness identity. */
  harness?: [string, string];
  caller = "agent";
  workspace = DEFAULT_WORKSPACE;

  constructor(readonly nc: NatsConnection) {}

  /** The subject a call to `subject` goes out on from this connection. */
  subject(subject: string): string {
    if (!this.harness) return subject;
    const [workspace, agent] = this.harness;
    return `harness.${workspace}.${agent}.${subject}`;
  }

  headers(): MsgHdrs {
    const h = natsHeaders();
    h.set(CALLER_HEADER, this.caller);
    h.set(WORKSPACE_HEADER, this.workspace);
    return h;
  }

  /**
   * Sends `body` as JSON and decodes the reply; a wire error reply throws RelayError, and so do
   * transport failures: no responder → `unavailable`, no reply → `timeout`.
   */
  async call<T = any>(subject: string, body: unknown, timeoutMs = 10_000): Promise<T> {
    let msg;
    try {
      msg = await this.nc.request(this.subject(subject), JSON.stringify(body), {
        timeout: timeoutMs,
        headers: this.headers(),
      });
    } catch (e) {
      const cause = e instanceof errors.RequestError ? e.cause : e;
      if (e instanceof errors.RequestError && e.isNoResponders()) {
        throw new RelayError("unavailable", `no service answers ${subject}`);
      }
      if (cause instanceof errors.TimeoutError || e instanceof errors.TimeoutError) {
        throw new RelayError("timeout", `${subject} did not answer within ${timeoutMs} ms`);
      }
      throw new RelayError("unavailable", `request to ${subject} failed: ${e}`);
    }
    const status = msg.headers?.get(ERROR_CODE_HEADER);
    if (!status) return msg.data.length ? (msg.json() as T) : (undefined as T);
    let err: any;
    try {
      err = msg.json<any>().error;
    } catch {
      err = undefined;
    }
    if (err?.code) throw new RelayError(err.code, err.message, err.retryable, err.details);
    // A micro service that is not ours: the error is in its headers.
    const code = Object.keys(STATUS).find((c) => STATUS[c] === Number(status)) ?? "internal";
    throw new RelayError(code, msg.headers?.get(ERROR_HEADER) ?? "");
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}

export interface ConnectOptions {
  url?: string;
  /** Path of a `.creds` file. */
  credsFile?: string;
  /** The text of a `.creds` file. */
  creds?: string;
  /** An nkey user seed (`SU…`), or a file holding one. */
  nkeySeed?: string;
  nkeySeedFile?: string;
  token?: string;
  /** PEM file of the CA that signed the server's certificate; TLS is required when set. */
  tlsCaFile?: string;
  name?: string;
}

/**
 * Connects with the identity given, else the one the environment names as for every relay
 * service: `RELAY_NATS__URL` (default nats://127.0.0.1:4222), `RELAY_NATS__CREDS` (the text of a
 * `.creds`, how the spawner hands a harness its identity), `RELAY_NATS__CREDS_FILE`,
 * `RELAY_NATS__TLS_CA_FILE`.
 */
export async function connect(opts: ConnectOptions = {}): Promise<Bus> {
  const env = process.env;
  const url = opts.url || env.RELAY_NATS__URL || "nats://127.0.0.1:4222";
  const tlsCaFile = opts.tlsCaFile || env.RELAY_NATS__TLS_CA_FILE || undefined;
  let { creds, credsFile } = opts;
  if (!(creds || credsFile || opts.nkeySeed || opts.nkeySeedFile || opts.token)) {
    creds = env.RELAY_NATS__CREDS || undefined;
    credsFile = env.RELAY_NATS__CREDS_FILE || undefined;
  }
  if (!creds && credsFile) creds = readFileSync(credsFile, "utf8");

  const options: NodeConnectionOptions = {
    servers: url,
    name: opts.name ?? "relay-mesh-harness-typescript",
    maxReconnectAttempts: -1,
  };
  let identity: { harness?: [string, string]; caller?: string; workspace?: string } = {};
  let authenticator: Authenticator | undefined;
  if (creds && creds.trim()) {
    authenticator = credsAuthenticator(new TextEncoder().encode(creds));
    const [who, workspace] = credsIdentity(creds);
    if (workspace) {
      // An agent's harness identity: it may read replies only under its own inbox prefix.
      identity = { harness: [workspace, who], caller: `agent:${who}`, workspace };
      options.inboxPrefix = `_INBOX.agent.${who}`;
    } else {
      identity = { caller: `service:${who}` };
      options.inboxPrefix = `_INBOX.${who}`;
    }
  } else if (opts.nkeySeed || opts.nkeySeedFile) {
    const seed = opts.nkeySeed ?? readFileSync(opts.nkeySeedFile!, "utf8");
    authenticator = nkeyAuthenticator(new TextEncoder().encode(seed.trim()));
  } else if (opts.token) {
    authenticator = tokenAuthenticator(opts.token);
  }
  if (authenticator) options.authenticator = authenticator;
  if (tlsCaFile) options.tls = { caFile: tlsCaFile };

  const bus = new Bus(await natsConnect(options));
  Object.assign(bus, identity);
  return bus;
}
