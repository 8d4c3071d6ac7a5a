// What an agent session implements (seed 001 `AgentSession`) and the plumbing that binds one to
// the bus: the TypeScript twin of the Rust harness SDK (`crates/harness-sdk`, crate
// `relay-harness`).
//
// `Binding.attach` attaches the session to a relay session with its declared capabilities, then
// serves its subjects: `agent.<id>.deliver` (deliveries, one at a time, in order, each delivery
// id surfaced once), `agent.<id>.input`, `agent.<id>.turn`, `agent.<id>.invoke`,
// `agent.<id>.cancel` and `agent.<id>.release`, plus the decisions of its permission requests
// and questions (`agent.<id>.permission`, `agent.<id>.question`). Payloads are the mesh's JSON,
// camelCase as on the wire.

import { randomUUID } from "node:crypto";
import type { Msg, Subscription } from "@nats-io/transport-node";
import { ERROR_CODE_HEADER, ERROR_HEADER, RelayError, STATUS, type Bus } from "./bus.js";
import { EventSink } from "./events.js";

const CALL_TIMEOUT = 10_000;
/** Delivery ids remembered for deduplication. */
const SEEN = 100_000;

export type DeliveryMode = "immediate" | "next-message" | "next-tool-call" | "on-idle" | "manual";
export type ReceiptStatus = "accepted" | "delivered" | "deferred" | "failed";

/** A message of the session (seed 002 `Message`, with the relay extensions). */
export interface Message {
  messageId: string;
  sessionId: string;
  turnId: string | null;
  role: string;
  blocks: unknown[];
  contentText: string;
  timestamp: number;
  deliveryMode?: DeliveryMode;
  /** Set when relay messaging (`message.send`) brought it: who sent it, in which conversation. */
  relay?: {
    messageId: string;
    reason: string;
    from: { kind: string; id: string; handle?: string };
    conversation: string;
    channel?: string;
    threadId?: string;
    hop: number;
    priority?: string;
    deadline?: string;
  };
  [field: string]: unknown;
}

/** Why a message exists and how to treat it (seed 001); `id` is the delivery id. */
export interface MessageContext {
  id: string;
  mode: DeliveryMode;
  reason: string;
  priority?: string;
  deadline?: string;
  idempotencyKey?: string;
  metadata?: unknown;
}

/** The harness's answer to a delivery (seed 001 MessageReceipt). */
export interface Receipt {
  status: ReceiptStatus;
  deliveryId?: string;
  /** Deferred: when to try again, Unix ms. */
  availableAt?: number | string;
  reason?: string;
  retryable?: boolean;
  metadata?: unknown;
}

export interface TurnControl {
  interrupt?: boolean;
  reason?: string;
}
export interface TurnState {
  busy: boolean;
  interrupted: boolean;
}
export interface ActionCall {
  invocationId: string;
  action: string;
  input: unknown;
  caller: string;
  timeoutMs: number;
}
export interface ActionAnswer {
  output?: unknown;
  error?: string;
}
export interface CancelHeld {
  deliveryId: string;
  reason?: string;
}

/** Seed 000 `AgentSessionCapabilities`. */
export interface Capabilities {
  messaging: { receive: true; send?: boolean; attachments?: ("text" | "image")[] };
  delivery: { modes: DeliveryMode[]; queue?: boolean };
  events: { emits: string[] };
  actions?: { invoke?: boolean; expose?: boolean };
  lifecycle: { release: boolean; pause?: boolean; resume?: boolean; fork?: boolean; snapshot?: boolean };
}

/** What an SDK agent emits by itself; declare more when the agent emits more. */
export const DEFAULT_EMITS = ["status.changed", "message.received", "session.started", "session.released", "log"];

/** Capabilities with the defaults of an SDK agent: immediate and on-idle, sends, releases. */
export function capabilities(
  modes: DeliveryMode[] = ["immediate", "on-idle"],
  more: { send?: boolean; attachments?: ("text" | "image")[]; queue?: boolean; emits?: string[]; release?: boolean; actions?: Capabilities["actions"] } = {},
): Capabilities {
  const caps: Capabilities = {
    messaging: { receive: true, send: more.send ?? true },
    delivery: { modes },
    events: { emits: more.emits ?? DEFAULT_EMITS },
    lifecycle: { release: more.release ?? true },
  };
  if (more.attachments) caps.messaging.attachments = more.attachments;
  if (more.queue !== undefined) caps.delivery.queue = more.queue;
  if (more.actions) caps.actions = more.actions;
  return caps;
}

/** The `agent` selection of `session.agent.attach`: `{kind: "adapter", adapterName: name}`. */
export function adapter(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { kind: "adapter", adapterName: name, ...extra };
}

/** A receipt (`accepted`, `delivered`, `deferred`, `failed`) with optional fields. */
export function receipt(status: ReceiptStatus, fields: Omit<Receipt, "status"> = {}): Receipt {
  return { status, ...withoutUndefined(fields) };
}

/**
 * One agent session, as a harness implements it (seed 001). `receiveMessage` and `release` are
 * required; the rest have the defaults of the Rust trait.
 */
export interface AgentSession {
  /**
   * Surfaces the message at the boundary `ctx.mode` asks for (or queues it, when the session
   * declared `delivery.queue`) and says what happened.
   */
  receiveMessage(message: Message, ctx: MessageContext): Promise<Receipt>;
  /** Raw terminal input (`agent.input`); throw to refuse it. */
  input?(data: string): Promise<void>;
  /** Whether the agent is busy with a turn; with `control.interrupt`, interrupts it. */
  turn?(control: TurnControl): Promise<TurnState>;
  /** An action of this agent invoked by another participant. */
  invokeAction?(call: ActionCall): Promise<ActionAnswer>;
  /** Drops a delivery it accepted and still holds for its boundary; whether it did. */
  cancel?(held: CancelHeld): Promise<boolean>;
  /** Ends the session (seed 001 `release`). */
  release(reason?: string): Promise<void>;
}

/** Where and how to attach. */
export interface AttachOptions {
  /** Created when it does not exist yet. */
  sessionId: string;
  capabilities?: Capabilities;
  /** The `agent` selection of `session.agent.attach`; default `adapter("typescript")`. */
  agent?: Record<string, unknown>;
  adapterSessionId?: string;
  /** Bind to this already attached agent instead of attaching a new one (a restarted harness). */
  agentId?: string;
  /** The handle to attach with (`name`, shown as `@name`); a free default from the adapter's name. */
  handle?: string;
  /** The AG-UI discovery document to declare (seed 004). */
  agentCapabilities?: Record<string, unknown>;
  spawnedBy?: string;
}

export interface SendOptions {
  threadId?: string;
  attachments?: unknown[];
  deliveryMode?: DeliveryMode;
  priority?: "low" | "normal" | "high" | "urgent";
  deadline?: string;
  idempotencyKey?: string;
}

/** `message.send`'s reply: each recipient and its delivery. */
export interface SendResponse {
  messageId: string;
  conversation: string;
  threadId?: string;
  recipients: { handle: string; agentId: string; reason: string; status: string; deliveryId?: string; error?: string }[];
  duplicate: boolean;
}

/** Why an agent that sends needs its own identity, and how it gets one. */
export function noAgentIdentity(): string {
  return (
    "this connection has no agent identity (the admin's, a service's or no credentials), so the agent's " +
    "relay messages could not come from it: the mesh would refuse them. Connect with credentials minted " +
    "for the agent: `relayctl auth harness --dir <auth dir> --agent <agentId> [--workspace W] > agent.creds`, " +
    "then RELAY_NATS__CREDS_FILE=agent.creds (it attaches as <agentId>); or declare " +
    "capabilities({ send: false }) for an agent that only receives"
  );
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;
}

/** A session bound to the bus. `close()` stops serving. */
export class Binding {
  private releasedFlag!: () => void;
  private readonly releasedPromise = new Promise<void>((resolve) => (this.releasedFlag = resolve));
  private readonly pending = new Map<string, (value: string) => void>();
  private readonly subs: Subscription[] = [];

  private constructor(
    readonly bus: Bus,
    readonly agentId: string,
    readonly sessionId: string,
    readonly handle: string | undefined,
    readonly events: EventSink,
  ) {}

  /**
   * Refuses (`forbidden`) an agent that declares `messaging.send` on a connection without an
   * agent identity: the mesh knows an agent by its harness subjects only, so its messages would
   * be refused, and an agent that cannot be answered is no agent.
   */
  static async attach(bus: Bus, opts: AttachOptions, session: AgentSession): Promise<Binding> {
    const capabilities_ = opts.capabilities ?? capabilities();
    if (capabilities_.messaging.send && !bus.harness) throw new RelayError("forbidden", noAgentIdentity());
    let agentId = opts.agentId;
    let handle = opts.handle;
    if (!agentId) [agentId, handle] = await attachNew(bus, { ...opts, capabilities: capabilities_ });
    // Its calls come from its agent from here on.
    bus.caller = `agent:${agentId}`;
    const b = new Binding(bus, agentId, opts.sessionId, handle, new EventSink(bus, opts.sessionId, agentId));
    const serve: Record<string, (sub: Subscription) => Promise<void>> = {
      deliver: (sub) => b.serveDeliveries(sub, session),
      input: (sub) => b.serveInputs(sub, session),
      invoke: (sub) => b.serveInvokes(sub, session),
      turn: (sub) => b.serveTurns(sub, session),
      cancel: (sub) => b.serveCancels(sub, session),
      release: (sub) => b.serveRelease(sub, session, capabilities_.lifecycle.release),
      permission: (sub) => b.serveDecisions(sub, "requestId", "decision"),
      question: (sub) => b.serveDecisions(sub, "questionId", "answer"),
    };
    try {
      for (const [verb, run] of Object.entries(serve)) {
        const sub = bus.nc.subscribe(`agent.${agentId}.${verb}`);
        b.subs.push(sub);
        run(sub).catch((e) => console.error(`serving agent.${agentId}.${verb} failed: ${e}`));
      }
      await bus.nc.flush();
    } catch (e) {
      b.close();
      throw new RelayError("unavailable", `cannot serve the agent's subjects: ${e}`);
    }
    b.events.emit(opts.agentId ? "session.resumed" : "session.started", { sessionId: opts.sessionId });
    return b;
  }

  /** Resolves once the session was released over the bus (`agent.<id>.release`). */
  released(): Promise<void> {
    return this.releasedPromise;
  }

  /** The agent ended without being released: the registry stops listing it as attached. */
  async ended(reason: string): Promise<void> {
    try {
      await this.bus.call("session.agent.release", { sessionId: this.sessionId, agentId: this.agentId, reason }, CALL_TIMEOUT);
    } catch (e) {
      console.warn(`registry did not record the agent's end: ${e}`);
    }
  }

  /**
   * Reports the outcome of a delivery the session accepted earlier (`delivery.report`),
   * retrying while the runner cannot be reached.
   */
  async report(deliveryId: string, status: ReceiptStatus, reason?: string): Promise<void> {
    let wait = 100;
    for (;;) {
      try {
        await this.bus.call("delivery.report", receipt(status, { deliveryId, reason }), CALL_TIMEOUT);
        return;
      } catch (e) {
        if (!(e instanceof RelayError) || !e.retryable) throw e;
        console.warn(`delivery report for ${deliveryId} not taken yet (${e.message}), retrying`);
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(wait * 2, 5_000);
      }
    }
  }

  /**
   * `message.send` as this agent: to `"@handle"`, `"#channel"`, a list of handles, or `null`
   * with `threadId`. The reply names each recipient and its delivery.
   */
  sendMessage(to: string | string[] | null, text: string, opts: SendOptions = {}): Promise<SendResponse> {
    return this.bus.call("message.send", withoutUndefined({ to, text, ...opts }), CALL_TIMEOUT);
  }

  /**
   * Asks the permission manager whether the agent may use `tool`: `approved` or `denied`, at
   * once by policy or once a person decided. Never approves by default: a decision that cannot
   * be read is a denial. The agent shows as `blocked` meanwhile.
   */
  async askPermission(
    tool: string,
    opts: { command?: string; filePath?: string; description?: string } = {},
  ): Promise<"approved" | "denied"> {
    const requestId = randomUUID();
    const req = withoutUndefined({
      requestId,
      agentId: this.agentId,
      sessionId: this.sessionId,
      tool,
      command: opts.command,
      filePath: opts.filePath,
      description: opts.description ?? "",
    });
    const decided = await this.ask("blocked", "permission.request", requestId, req, "decision");
    return decided === "approved" ? "approved" : "denied";
  }

  /** Asks a person a question (options may be empty); the answer, now or once given. */
  async askQuestion(question: string, options: string[] = []): Promise<string> {
    const questionId = randomUUID();
    const req = { questionId, agentId: this.agentId, sessionId: this.sessionId, question, options };
    return (await this.ask("waiting", "question.ask", questionId, req, "answer")) ?? "";
  }

  /** Stops serving (the connection stays open). */
  close(): void {
    for (const sub of this.subs) sub.unsubscribe();
    this.events.close();
  }

  private async ask(status: string, subject: string, id: string, req: Record<string, unknown>, key: string): Promise<string> {
    // Listen for the later decision before asking, so it cannot outrun the `pending` reply.
    const later = new Promise<string>((resolve) => this.pending.set(id, resolve));
    const previous = this.events.currentStatus;
    this.events.status(status);
    try {
      const decided = (await this.bus.call(subject, req, CALL_TIMEOUT))?.[key];
      // A person decides later: `pending` for a permission, no answer for a question.
      if (decided !== undefined && decided !== null && decided !== "pending") return decided;
      return await later;
    } catch (e) {
      // Refused (invalid_request, forbidden, ...): no decision will come for it, so the caller
      // hears why instead of waiting forever.
      if (!(e instanceof RelayError) || (e.code !== "unavailable" && e.code !== "timeout")) throw e;
      // No manager reachable: the request stays visible in the log and can still be decided
      // on agent.<id>.permission / agent.<id>.question.
      console.warn(`${subject} not answered (${e.message}); waiting for a decision on agent.<id>`);
      const { agentId: _a, sessionId: _s, ...shown } = req;
      this.events.emit(subject === "permission.request" ? "permission.requested" : "question.requested", shown);
      return await later;
    } finally {
      this.pending.delete(id);
      if (previous !== undefined) this.events.status(previous);
    }
  }

  private reply(msg: Msg, body: unknown): void {
    if (msg.reply) msg.respond(JSON.stringify(body));
  }

  /** Bad requests get the wire error shape with the micro error headers, like every service. */
  private replyError(msg: Msg, err: RelayError): void {
    if (!msg.reply) return;
    const headers = this.bus.headers();
    headers.set(ERROR_HEADER, err.wireMessage.replace(/\s+/g, " "));
    headers.set(ERROR_CODE_HEADER, String(STATUS[err.code] ?? 500));
    msg.respond(JSON.stringify(err.wire()), { headers });
  }

  /**
   * A request whose handling threw: answered with the wire error (`internal` unless the session
   * threw a RelayError), never throwing, so the loop goes on to the next request.
   */
  private replyFailure(msg: Msg, what: string, e: unknown): void {
    console.error(`${what} failed: ${e instanceof Error ? (e.stack ?? e) : e}`);
    const err = e instanceof RelayError ? e : new RelayError("internal", `${what} failed: ${e}`);
    try {
      this.replyError(msg, err);
    } catch (e2) {
      console.error(`cannot answer the failed ${what}: ${e2}`);
    }
  }

  /**
   * Deliveries one at a time, in arrival order. A delivery id seen before is answered with the
   * receipt it got then, without surfacing the message again.
   */
  private async serveDeliveries(sub: Subscription, session: AgentSession): Promise<void> {
    const seen = new Map<string, Receipt>(); // insertion order: the oldest is dropped first
    for await (const msg of sub) {
      let ctx: MessageContext, message: Message;
      try {
        ({ context: ctx, message } = msg.json<{ context: MessageContext; message: Message }>());
        if (typeof ctx.id !== "string" || typeof message !== "object") throw new Error("context.id and message required");
      } catch (e) {
        this.replyError(msg, new RelayError("invalid_request", `deliver: ${e}`));
        continue;
      }
      const id = ctx.id;
      const before = seen.get(id);
      if (before) {
        this.reply(msg, before);
        continue;
      }
      let r: Receipt;
      try {
        r = { ...(await session.receiveMessage(message, ctx)) };
      } catch (e) {
        console.error(`receiveMessage failed for delivery ${id}: ${e}`);
        r = receipt("failed", { reason: `the agent session failed: ${e}`, retryable: true });
      }
      r.deliveryId = id;
      if (r.status === "delivered" || r.status === "accepted") {
        this.events.emit("message.received", { messageId: message.messageId, deliveryId: id });
      }
      // Only a surfaced message is final for this id. A deferral or failure is asked again, and
      // so is an accepted one: the session recognises an id it still holds.
      if (r.status === "delivered") {
        seen.set(id, r);
        if (seen.size > SEEN) seen.delete(seen.keys().next().value!);
      }
      this.reply(msg, r);
    }
  }

  private async serveInputs(sub: Subscription, session: AgentSession): Promise<void> {
    for await (const msg of sub) {
      let data: string;
      try {
        data = msg.json<{ data: string }>().data;
        if (typeof data !== "string") throw new Error("data must be a string");
      } catch (e) {
        this.replyError(msg, new RelayError("invalid_request", `input: ${e}`));
        continue;
      }
      try {
        if (!session.input) throw new Error("this agent session takes no raw input");
        await session.input(data);
        this.reply(msg, { accepted: true });
      } catch (e) {
        const message = e instanceof RelayError ? e.wireMessage : e instanceof Error ? e.message : String(e);
        this.replyError(msg, new RelayError("capability_unsupported", message));
      }
    }
  }

  private async serveTurns(sub: Subscription, session: AgentSession): Promise<void> {
    for await (const msg of sub) {
      let control: TurnControl;
      try {
        control = msg.json<TurnControl>();
      } catch (e) {
        this.replyError(msg, new RelayError("invalid_request", `turn: ${e}`));
        continue;
      }
      // Each request on its own: one that throws (or cannot be encoded) gets an error reply and
      // the next is still served.
      try {
        this.reply(msg, session.turn ? await session.turn(control) : { busy: false, interrupted: false });
      } catch (e) {
        this.replyFailure(msg, "turn", e);
      }
    }
  }

  private async serveCancels(sub: Subscription, session: AgentSession): Promise<void> {
    for await (const msg of sub) {
      let held: CancelHeld;
      try {
        held = msg.json<CancelHeld>();
        if (typeof held.deliveryId !== "string") throw new Error("deliveryId required");
      } catch (e) {
        this.replyError(msg, new RelayError("invalid_request", `cancel: ${e}`));
        continue;
      }
      try {
        this.reply(msg, { removed: session.cancel ? Boolean(await session.cancel(held)) : false });
      } catch (e) {
        this.replyFailure(msg, "cancel", e);
      }
    }
  }

  /** Each invocation on its own: a slow action does not hold up the next. */
  private async serveInvokes(sub: Subscription, session: AgentSession): Promise<void> {
    for await (const msg of sub) {
      let call: ActionCall;
      try {
        call = msg.json<ActionCall>();
      } catch (e) {
        this.replyError(msg, new RelayError("invalid_request", `invoke: ${e}`));
        continue;
      }
      const answer = session.invokeAction
        ? session.invokeAction(call)
        : Promise.resolve({ error: `this agent serves no action ${JSON.stringify(call.action)}` });
      answer.then(
        (a) => this.reply(msg, withoutUndefined(a)),
        (e) => this.reply(msg, { error: String(e) }),
      );
    }
  }

  private async serveRelease(sub: Subscription, session: AgentSession, registryRelease: boolean): Promise<void> {
    for await (const msg of sub) {
      let reason: string | undefined;
      try {
        reason = msg.data.length ? msg.json<{ reason?: string }>()?.reason : undefined;
      } catch {
        reason = undefined;
      }
      const previous = this.events.currentStatus;
      this.events.status("releasing");
      try {
        await session.release(reason);
      } catch (e) {
        // Not released: back to where it was, still serving, so a release can be asked again.
        if (previous !== undefined) this.events.status(previous);
        this.replyFailure(msg, "release", e);
        continue;
      }
      this.events.emit("session.released", { sessionId: this.sessionId, reason: reason ?? null });
      this.events.status("released");
      if (registryRelease) {
        try {
          await this.bus.call("session.agent.release", { sessionId: this.sessionId, agentId: this.agentId }, CALL_TIMEOUT);
        } catch (e) {
          console.warn(`registry did not record the release: ${e}`);
        }
      }
      await this.events.flush();
      try {
        this.reply(msg, { released: true });
      } catch (e) {
        // The session is released all the same: released() must still resolve.
        console.error(`cannot answer the release: ${e}`);
      }
      this.releasedFlag();
      return;
    }
  }

  /**
   * `agent.<id>.permission` {requestId, decision} and `agent.<id>.question` {questionId,
   * answer}: a person's decision for a request this agent is waiting on.
   */
  private async serveDecisions(sub: Subscription, idKey: string, valueKey: string): Promise<void> {
    for await (const msg of sub) {
      let id: string, value: string;
      try {
        const body = msg.json<Record<string, string>>();
        [id, value] = [body[idKey], body[valueKey]];
        if (typeof id !== "string" || typeof value !== "string") throw new Error(`${idKey} and ${valueKey} required`);
      } catch (e) {
        this.replyError(msg, new RelayError("invalid_request", `${valueKey}: ${e}`));
        continue;
      }
      const waiting = this.pending.get(id);
      if (!waiting) {
        this.replyError(msg, new RelayError("not_found", "no prompt of this agent waits for that id"));
        continue;
      }
      this.pending.delete(id);
      waiting(value);
      this.reply(msg, { success: true });
    }
  }
}

/** Creates the relay session if needed and attaches a new agent to it; its id and handle. */
async function attachNew(bus: Bus, opts: AttachOptions & { capabilities: Capabilities }): Promise<[string, string | undefined]> {
  try {
    await bus.call("session.create", { sessionId: opts.sessionId }, CALL_TIMEOUT);
  } catch (e) {
    // conflict: it exists, attach to it
    if (!(e instanceof RelayError) || e.code !== "conflict") throw e;
  }
  const req = withoutUndefined({
    sessionId: opts.sessionId,
    agent: opts.agent ?? adapter("typescript"),
    capabilities: opts.capabilities,
    agentCapabilities: opts.agentCapabilities,
    adapterSessionId: opts.adapterSessionId,
    handle: opts.handle,
    spawnedBy: opts.spawnedBy,
  });
  const attached = await bus.call<{ agentId: string; handle?: string }>("session.agent.attach", req, CALL_TIMEOUT);
  return [attached.agentId, attached.handle];
}
