// The client: the generated operations (openapi-fetch) with auth and typed errors, plus event
// streams.
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./generated/schema.js";
import { RelayError } from "./errors.js";
import { EventStream } from "./events.js";

export interface RelayClientOptions {
  /** The gateway's root, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A workspace API key (`rk_…`) or the gateway's shared token, sent as a bearer token. */
  token?: string;
  fetch?: typeof fetch;
}

export interface StreamOptions {
  /** One session's events; or `agent`'s, or `channel`'s; none of them: the workspace's. */
  sessionId?: string;
  agent?: string;
  channel?: string;
  /** Start after this seq (0: the whole log). */
  after?: number;
  /** Or start at this Unix time in ms; with neither, start with the next event committed. */
  since?: number;
  /** Only these event types. */
  types?: string[];
  /** Reconnect when not a byte came for this long (default 75 s; heartbeats come every 30 s). */
  idleTimeoutMs?: number;
}

/**
 * A caller of one relay-mesh gateway. `api` is an openapi-fetch client typed from the API's
 * OpenAPI document (`relay.api.POST("/sessions", { body })`); an error status throws a
 * RelayError, so what a call resolves to is its success (`data`).
 */
export class RelayClient {
  readonly api: Client<paths>;
  private readonly baseUrl: string;
  private readonly headers: Record<string, string>;
  private readonly fetch: typeof fetch;

  constructor(options: RelayClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "") + "/api/v1";
    this.headers = options.token ? { authorization: `Bearer ${options.token}` } : {};
    this.fetch = options.fetch ?? globalThis.fetch;
    this.api = createClient<paths>({ baseUrl: this.baseUrl, headers: this.headers, fetch: this.fetch });
    this.api.use({
      async onResponse({ response }) {
        if (!response.ok) throw await RelayError.fromResponse(response);
        return undefined;
      },
    });
  }

  /**
   * The events of a session, an agent, a channel or the whole workspace, as an async
   * iterable that reconnects with `Last-Event-ID` and never yields a seq twice (see
   * EventStream).
   */
  streamEvents(options: StreamOptions = {}): EventStream {
    const path =
      options.sessionId !== undefined
        ? `/sessions/${encodeURIComponent(options.sessionId)}/events/sse`
        : options.agent !== undefined
          ? `/agents/${encodeURIComponent(options.agent)}/events/sse`
          : options.channel !== undefined
            ? `/channels/${encodeURIComponent(options.channel.replace(/^#/, ""))}/events/sse`
            : "/events/sse";
    const query = new URLSearchParams();
    if (options.types?.length) query.set("types", options.types.join(","));
    // Where a stream by time starts, until the first event gives a seq (Last-Event-ID wins).
    if (options.since !== undefined) query.set("since", String(options.since));
    const after = async () =>
      options.after ?? (options.since !== undefined ? undefined : await this.head());
    return new EventStream({
      url: `${this.baseUrl}${path}${query.size ? `?${query}` : ""}`,
      headers: this.headers,
      after,
      fetch: this.fetch,
      idleTimeoutMs: options.idleTimeoutMs ?? 75_000,
    });
  }

  /** The seq of the newest event the caller can see (0 when there is none). */
  async head(): Promise<number> {
    const { data } = await this.api.GET("/events", { params: { query: { newestFirst: true, limit: 1 } } });
    return data?.events[0]?.seq ?? 0;
  }
}
