// SSE event streams that survive a dropped connection: what generators do not write.
import type { components } from "./generated/schema.js";
import { RelayError } from "./errors.js";

export type Event = components["schemas"]["Event"];

export interface EventStreamInit {
  /** The stream's URL, query included. */
  url: string;
  headers: Record<string, string>;
  /** Resume after this seq; undefined only for a stream that starts at a time (`since`). */
  after: () => Promise<number | undefined>;
  fetch: typeof fetch;
  idleTimeoutMs: number;
  maxBackoffMs?: number;
}

/**
 * The events of one SSE stream, each once and in seq order, across reconnects.
 *
 * A connection that fails, ends, or carries not a byte (the gateway sends a heartbeat every
 * 30 s while idle) for `idleTimeoutMs` is opened again with `Last-Event-ID` set to the last seq
 * yielded, so the gateway replays exactly what came after it: nothing is skipped. A frame at
 * or below that seq is dropped, so nothing is yielded twice. Errors that are not retryable
 * (401, 403, 400) end the iteration with a RelayError; retryable ones (503 at the stream cap,
 * with Retry-After) and network errors are retried with a capped backoff.
 */
export class EventStream implements AsyncIterable<Event> {
  /** The seq of the last event yielded; the next connection resumes after it. */
  lastSeq: number | undefined;
  /** How many times the stream was opened again. */
  reconnects = 0;
  private closed = false;
  private connection?: AbortController;
  private idle?: ReturnType<typeof setTimeout>;

  constructor(private readonly init: EventStreamInit) {}

  /** Closes the connection; the iteration ends. */
  close(): void {
    this.closed = true;
    clearTimeout(this.idle);
    this.connection?.abort();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Event, void, undefined> {
    const { url, idleTimeoutMs, maxBackoffMs = 5000 } = this.init;
    this.lastSeq ??= await this.init.after();
    let backoff = 100;
    while (!this.closed) {
      const connection = (this.connection = new AbortController());
      // Aborts the connection when no byte came for idleTimeoutMs; each chunk restarts it.
      const alive = () => {
        clearTimeout(this.idle);
        this.idle = setTimeout(() => connection.abort(), idleTimeoutMs);
      };
      alive();
      let wait: number;
      try {
        const headers: Record<string, string> = { ...this.init.headers, accept: "text/event-stream" };
        if (this.lastSeq !== undefined) headers["last-event-id"] = String(this.lastSeq);
        const response = await this.init.fetch(url, { headers, signal: connection.signal });
        if (!response.ok) throw await RelayError.fromResponse(response);
        backoff = 100;
        for await (const [seq, data] of frames(response.body!, alive)) {
          if (this.lastSeq !== undefined && seq <= this.lastSeq) continue;
          this.lastSeq = seq;
          yield JSON.parse(data) as Event;
        }
        wait = backoff; // the server ended the stream (it restarts, say)
      } catch (e) {
        if (this.closed) return;
        if (e instanceof RelayError) {
          if (!e.retryable) throw e;
          wait = e.retryAfter !== undefined ? e.retryAfter * 1000 : backoff;
        } else if (e instanceof SyntaxError) {
          throw e; // a frame that is not JSON: reading it again would not help
        } else {
          wait = backoff; // the connection failed or went quiet
        }
      } finally {
        clearTimeout(this.idle);
        connection.abort();
      }
      if (this.closed) return;
      this.reconnects += 1;
      await new Promise((resolve) => setTimeout(resolve, wait));
      backoff = Math.min(backoff * 2, maxBackoffMs);
    }
  }
}

/**
 * [id, data] of each complete frame; comments (heartbeats) and frames without an id are
 * skipped, and a frame cut off by a dropped connection never completes.
 */
async function* frames(body: ReadableStream<Uint8Array>, alive: () => void): AsyncGenerator<[number, string]> {
  let buffer = "";
  let seq: number | undefined;
  let data: string[] = [];
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    alive();
    buffer += decoder.decode(bytes, { stream: true });
    // A trailing "\r" may be the first half of "\r\n": keep it for the next chunk.
    const end = buffer.endsWith("\r") ? buffer.length - 1 : buffer.length;
    const lines = buffer.slice(0, end).split(/\r\n|\r|\n/);
    buffer = lines.pop()! + buffer.slice(end);
    for (const line of lines) {
      if (line === "") {
        if (seq !== undefined && data.length > 0) yield [seq, data.join("\n")];
        seq = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "id") seq = /^\d+$/.test(value) ? Number(value) : undefined;
      else if (field === "data") data.push(value);
    }
  }
}
