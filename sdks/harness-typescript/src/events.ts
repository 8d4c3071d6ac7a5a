// The session's events, in order, to the event log (`event.append`).
//
// Events get their id when emitted, so a batch retried after a lost reply is stored once. One
// loop sends them in emission order, batching whatever is queued; while the log cannot be
// reached it retries with backoff and loses nothing.

import { randomUUID } from "node:crypto";
import { RelayError, type Bus } from "./bus.js";

const BATCH = 500;

export interface NewEvent {
  eventId: string;
  type: string;
  ts: number;
  sessionId: string;
  agentId: string;
  payload: unknown;
}

type Item = { event: NewEvent } | { flushed: () => void };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class EventSink {
  currentStatus?: string;
  private queue: Item[] = [];
  private wake?: () => void;
  private closed = false;

  constructor(
    private readonly bus: Bus,
    readonly sessionId: string,
    readonly agentId: string,
  ) {
    void this.send();
  }

  /**
   * Queues one event of this agent session. A payload JSON cannot encode (a BigInt, a cycle, a
   * function) throws here, before it is queued.
   */
  emit(type: string, payload: unknown = {}): void {
    // Checked now: queued, it would fail the batch far from the caller who can fix it.
    if (JSON.stringify(payload) === undefined) throw new TypeError(`the payload of ${type} is not JSON`);
    this.push({
      event: {
        eventId: randomUUID(),
        type,
        ts: Date.now(),
        sessionId: this.sessionId,
        agentId: this.agentId,
        // No workspace: the harness identity says which (without one, `default`).
        payload,
      },
    });
  }

  /** Reports a status change (`status.changed` with the previous status); repeats are dropped. */
  status(status: string): void {
    if (this.currentStatus === status) return;
    const previousStatus = this.currentStatus ?? null;
    this.currentStatus = status;
    this.emit("status.changed", { status, previousStatus });
  }

  /** Resolves once every event emitted so far is stored in the log. */
  flush(): Promise<void> {
    return new Promise((flushed) => this.push({ flushed }));
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  private push(item: Item): void {
    this.queue.push(item);
    this.wake?.();
  }

  private async send(): Promise<void> {
    while (!this.closed) {
      if (this.queue.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      const batch: NewEvent[] = [];
      const waiting: (() => void)[] = [];
      while (this.queue.length > 0 && batch.length < BATCH) {
        const item = this.queue.shift()!;
        if ("event" in item) batch.push(item.event);
        else waiting.push(item.flushed);
      }
      if (batch.length > 0) await this.append(batch);
      for (const flushed of waiting) flushed();
    }
  }

  /**
   * Appends a batch, retrying while the log cannot be reached. A batch the log refuses is sent
   * again one event at a time, so only the invalid event is dropped (and logged).
   */
  private async append(events: NewEvent[]): Promise<void> {
    try {
      await this.appendRetrying(events);
    } catch (e) {
      if (events.length === 1) {
        console.error(`event log refused an agent event ${events[0].type}: ${e}`);
        return;
      }
      for (const event of events) {
        try {
          await this.appendRetrying([event]);
        } catch (e) {
          console.error(`event log refused an agent event ${event.type}: ${e}`);
        }
      }
    }
  }

  private async appendRetrying(events: NewEvent[]): Promise<void> {
    let wait = 100;
    for (;;) {
      try {
        await this.bus.call("event.append", { events }, 5_000);
        return;
      } catch (e) {
        // Refused: retrying the same request cannot help.
        if (!(e instanceof RelayError) || !e.retryable) throw e;
        console.warn(`event log not reachable (${e.message}); events kept and retried in ${wait} ms`);
        await sleep(wait);
        wait = Math.min(wait * 2, 5_000);
      }
    }
  }
}
