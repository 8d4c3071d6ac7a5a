"""What an agent session implements (seed 001 `AgentSession`) and the plumbing that binds one to
the bus: the Python twin of the Rust harness SDK (`crates/harness-sdk`, crate `relay-harness`).

`Binding.attach` attaches the session to a relay session with its declared capabilities, then
serves its subjects: `agent.<id>.deliver` (deliveries, one at a time, in order, each delivery id
surfaced once), `agent.<id>.input`, `agent.<id>.turn`, `agent.<id>.invoke`, `agent.<id>.cancel`
and `agent.<id>.release`, plus the decisions of its permission requests and questions
(`agent.<id>.permission`, `agent.<id>.question`). Messages and payloads are the mesh's JSON as
plain dicts, camelCase as on the wire.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .bus import STATUS, Bus, RelayError
from .events import EventSink

CALL_TIMEOUT = 10.0
# Delivery ids remembered for deduplication.
SEEN = 100_000
log = logging.getLogger("relay_mesh_harness")

# What an SDK agent emits by itself; declare more when the agent emits more.
DEFAULT_EMITS = ("status.changed", "message.received", "session.started", "session.released", "log")


def adapter(name: str, **extra: Any) -> dict:
    """The `agent` selection of `session.agent.attach`: `{"kind": "adapter", "adapterName": name}`."""
    return {"kind": "adapter", "adapterName": name, **extra}


def capabilities(
    modes: Sequence[str] = ("immediate", "on-idle"),
    *,
    send: bool = True,
    attachments: Optional[Sequence[str]] = None,
    queue: Optional[bool] = None,
    emits: Sequence[str] = DEFAULT_EMITS,
    release: bool = True,
    actions: Optional[dict] = None,
) -> dict:
    """Seed 000 `AgentSessionCapabilities`: delivery modes, whether it sends relay messages,
    attachment kinds, events it emits, and whether it implements `release`."""
    caps: dict = {
        "messaging": {"receive": True, "send": send},
        "delivery": {"modes": list(modes)},
        "events": {"emits": list(emits)},
        "lifecycle": {"release": release},
    }
    if attachments is not None:
        caps["messaging"]["attachments"] = list(attachments)
    if queue is not None:
        caps["delivery"]["queue"] = queue
    if actions is not None:
        caps["actions"] = actions
    return caps


def receipt(status: str, delivery_id: Optional[str] = None, **fields: Any) -> dict:
    """A receipt (`accepted`, `delivered`, `deferred`, `failed`), with `reason`, `retryable`,
    `availableAt` or `metadata` as keyword arguments."""
    r = {"status": status, **{k: v for k, v in fields.items() if v is not None}}
    if delivery_id is not None:
        r["deliveryId"] = delivery_id
    return r


class AgentSession:
    """One agent session, as a harness implements it (seed 001). Override `receive_message`;
    the rest have the defaults of the Rust trait."""

    async def receive_message(self, message: dict, ctx: dict) -> dict:
        """Surfaces the message at the boundary `ctx["mode"]` asks for (or queues it, when the
        session declared `delivery.queue`) and says what happened: a `receipt(...)`."""
        raise NotImplementedError

    async def input(self, data: str) -> None:
        """Raw terminal input (`agent.input`); raise to refuse it."""
        raise RelayError("capability_unsupported", "this agent session takes no raw input")

    async def turn(self, control: dict) -> dict:
        """Whether the agent is busy with a turn; with `control["interrupt"]`, interrupts it. A
        session that cannot tell says not busy."""
        return {"busy": False, "interrupted": False}

    async def invoke_action(self, call: dict) -> dict:
        """An action of this agent invoked by another participant: `{"output": ...}` or
        `{"error": "..."}`."""
        return {"error": f"this agent serves no action {call.get('action')!r}"}

    async def cancel(self, held: dict) -> bool:
        """Drops a delivery it accepted and still holds for its boundary; whether it did."""
        return False

    async def release(self, reason: Optional[str]) -> None:
        """Ends the session (seed 001 `release`)."""


@dataclass
class AttachOptions:
    """Where and how to attach."""

    # Created when it does not exist yet.
    session_id: str
    capabilities: dict = field(default_factory=capabilities)
    agent: dict = field(default_factory=lambda: adapter("python"))
    adapter_session_id: Optional[str] = None
    # Bind to this already attached agent instead of attaching a new one (a restarted harness).
    agent_id: Optional[str] = None
    # The handle to attach with (`name`, shown as `@name`); a free default from the adapter's name.
    handle: Optional[str] = None
    # The AG-UI discovery document to declare (seed 004).
    agent_capabilities: Optional[dict] = None
    spawned_by: Optional[str] = None


def no_agent_identity() -> str:
    """Why an agent that sends needs its own identity, and how it gets one."""
    return (
        "this connection has no agent identity (the admin's, a service's or no credentials), so the agent's "
        "relay messages could not come from it: the mesh would refuse them. Connect with credentials minted "
        "for the agent: `relayctl auth harness --dir <auth dir> --agent <agentId> [--workspace W] > agent.creds`, "
        "then RELAY_NATS__CREDS_FILE=agent.creds (it attaches as <agentId>); or declare "
        "capabilities(send=False) for an agent that only receives"
    )


def _without_none(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


class Binding:
    """A session bound to the bus. `close()` stops serving."""

    def __init__(self, bus: Bus, agent_id: str, session_id: str, handle: Optional[str], events: EventSink):
        self.bus = bus
        self.agent_id = agent_id
        self.session_id = session_id
        self.handle = handle
        self.events = events
        self._released = asyncio.Event()
        self._pending: dict[str, asyncio.Future] = {}
        self._subs: list = []
        self._tasks: list[asyncio.Task] = []

    @classmethod
    async def attach(cls, bus: Bus, opts: AttachOptions, session: AgentSession) -> "Binding":
        """Refuses (`forbidden`) an agent that declares `messaging.send` on a connection without an
        agent identity: the mesh knows an agent by its harness subjects only, so its messages would
        be refused, and an agent that cannot be answered is no agent."""
        if opts.capabilities.get("messaging", {}).get("send") and not bus.harness:
            raise RelayError("forbidden", no_agent_identity())
        handle = opts.handle
        if opts.agent_id:
            agent_id = opts.agent_id
        else:
            agent_id, handle = await _attach_new(bus, opts)
        # Its calls come from its agent from here on.
        bus.caller = f"agent:{agent_id}"
        b = cls(bus, agent_id, opts.session_id, handle, EventSink(bus, opts.session_id, agent_id))
        serve = {
            "deliver": lambda sub: b._serve_deliveries(sub, session),
            "input": lambda sub: b._serve_inputs(sub, session),
            "invoke": lambda sub: b._serve_invokes(sub, session),
            "turn": lambda sub: b._serve_turns(sub, session),
            "cancel": lambda sub: b._serve_cancels(sub, session),
            "release": lambda sub: b._serve_release(sub, session, opts.capabilities["lifecycle"]["release"]),
            "permission": lambda sub: b._serve_decisions(sub, "requestId", "decision"),
            "question": lambda sub: b._serve_decisions(sub, "questionId", "answer"),
        }
        try:
            for verb, run in serve.items():
                sub = await bus.nc.subscribe(f"agent.{agent_id}.{verb}")
                b._subs.append(sub)
                b._tasks.append(asyncio.ensure_future(run(sub)))
            await bus.nc.flush()
        except Exception as e:
            await b.close()
            raise RelayError("unavailable", f"cannot serve the agent's subjects: {e}") from e
        b.events.emit("session.resumed" if opts.agent_id else "session.started", {"sessionId": opts.session_id})
        log.info("agent session attached: agent %s, session %s", agent_id, opts.session_id)
        return b

    async def released(self) -> None:
        """Returns once the session was released over the bus (`agent.<id>.release`)."""
        await self._released.wait()

    async def ended(self, reason: str) -> None:
        """The agent ended without being released: the registry stops listing it as attached."""
        req = {"sessionId": self.session_id, "agentId": self.agent_id, "reason": reason}
        try:
            await self.bus.call("session.agent.release", req, CALL_TIMEOUT)
        except RelayError as e:
            log.warning("registry did not record the agent's end: %s", e)

    async def report(self, delivery_id: str, status: str, reason: Optional[str] = None) -> None:
        """Reports the outcome of a delivery the session accepted earlier (`delivery.report`),
        retrying while the runner cannot be reached."""
        req = receipt(status, delivery_id, reason=reason)
        wait = 0.1
        while True:
            try:
                await self.bus.call("delivery.report", req, CALL_TIMEOUT)
                return
            except RelayError as e:
                if not e.retryable:
                    raise
                log.warning("delivery report for %s not taken yet (%s), retrying", delivery_id, e)
                await asyncio.sleep(wait)
                wait = min(wait * 2, 5.0)

    async def send_message(
        self,
        to: Any,
        text: str,
        *,
        thread_id: Optional[str] = None,
        attachments: Optional[list] = None,
        delivery_mode: Optional[str] = None,
        priority: Optional[str] = None,
        deadline: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> dict:
        """`message.send` as this agent: to `"@handle"`, `"#channel"`, a list of handles, or
        `None` with `thread_id`. The reply names each recipient and its delivery."""
        req = {
            "to": to,
            "threadId": thread_id,
            "text": text,
            "attachments": attachments,
            "deliveryMode": delivery_mode,
            "priority": priority,
            "deadline": deadline,
            "idempotencyKey": idempotency_key,
        }
        return await self.bus.call("message.send", _without_none(req), CALL_TIMEOUT)

    async def ask_permission(
        self, tool: str, command: Optional[str] = None, file_path: Optional[str] = None, description: str = ""
    ) -> str:
        """Asks the permission manager whether the agent may use `tool`: `approved` or `denied`,
        at once by policy or once a person decided. Never approves by default: a decision
        that cannot be read is a denial. The agent shows as `blocked` meanwhile."""
        request_id = str(uuid.uuid4())
        req = {
            "requestId": request_id,
            "agentId": self.agent_id,
            "sessionId": self.session_id,
            "tool": tool,
            "command": command,
            "filePath": file_path,
            "description": description,
        }
        decided = await self._ask("blocked", "permission.request", request_id, _without_none(req), "decision")
        return "approved" if decided == "approved" else "denied"

    async def ask_question(self, question: str, options: Sequence[str] = ()) -> str:
        """Asks a person a question (options may be empty); the answer, now or once given."""
        question_id = str(uuid.uuid4())
        req = {
            "questionId": question_id,
            "agentId": self.agent_id,
            "sessionId": self.session_id,
            "question": question,
            "options": list(options),
        }
        return await self._ask("waiting", "question.ask", question_id, req, "answer") or ""

    async def close(self) -> None:
        """Stops serving (the connection stays open)."""
        for task in self._tasks:
            task.cancel()
        for sub in self._subs:
            try:
                await sub.unsubscribe()
            except Exception:
                pass
        self.events.close()

    async def _ask(self, status: str, subject: str, id: str, req: dict, key: str) -> Optional[str]:
        # Listen for the later decision before asking, so it cannot outrun the `pending` reply.
        later = asyncio.get_running_loop().create_future()
        self._pending[id] = later
        previous = self.events.current_status
        self.events.status(status)
        try:
            decided = (await self.bus.call(subject, req, CALL_TIMEOUT)).get(key)
            # A person decides later: `pending` for a permission, no answer for a question.
            if decided is not None and decided != "pending":
                return decided
            return await later
        except RelayError as e:
            # Refused (invalid_request, forbidden, ...): no decision will come for it, so the
            # caller hears why instead of waiting forever.
            if e.code not in ("unavailable", "timeout"):
                raise
            # No manager reachable: the request stays visible in the log and can still be
            # decided on agent.<id>.permission / agent.<id>.question.
            log.warning("%s not answered (%s); waiting for a decision on agent.<id>", subject, e)
            what = "permission.requested" if subject == "permission.request" else "question.requested"
            self.events.emit(what, {k: v for k, v in req.items() if k not in ("agentId", "sessionId")})
            return await later
        finally:
            self._pending.pop(id, None)
            if previous is not None:
                self.events.status(previous)

    async def _reply(self, msg: Any, body: Any) -> None:
        if msg.reply:
            await self.bus.nc.publish(msg.reply, json.dumps(body).encode())

    async def _reply_error(self, msg: Any, err: RelayError) -> None:
        """Bad requests get the wire error shape with the micro error headers, like every service."""
        if msg.reply:
            headers = {
                "Nats-Service-Error": " ".join(err.message.split()),
                "Nats-Service-Error-Code": str(STATUS.get(err.code, 500)),
            }
            await self.bus.nc.publish(msg.reply, json.dumps(err.wire()).encode(), headers=headers)

    async def _reply_failure(self, msg: Any, what: str, e: Exception) -> None:
        """A request whose handling raised: answered with the wire error (`internal` unless the
        session raised a RelayError), never raising, so the loop goes on to the next request."""
        log.error("%s failed", what, exc_info=e)
        err = e if isinstance(e, RelayError) else RelayError("internal", f"{what} failed: {e!r}")
        try:
            await self._reply_error(msg, err)
        except Exception as e2:
            log.error("cannot answer the failed %s: %r", what, e2)

    async def _serve_deliveries(self, sub: Any, session: AgentSession) -> None:
        """Deliveries one at a time, in arrival order. A delivery id seen before is answered
        with the receipt it got then, without surfacing the message again."""
        seen: OrderedDict[str, dict] = OrderedDict()
        async for msg in sub.messages:
            try:
                req = json.loads(msg.data)
                ctx, message = req["context"], req["message"]
                id = ctx["id"]
            except (ValueError, KeyError, TypeError) as e:
                await self._reply_error(msg, RelayError("invalid_request", f"deliver: {e!r}"))
                continue
            if id in seen:
                log.info("delivery %s seen before; acknowledged, not surfaced again", id)
                await self._reply(msg, seen[id])
                continue
            try:
                r = dict(await session.receive_message(message, ctx))
            except Exception as e:
                log.exception("receive_message failed for delivery %s", id)
                r = receipt("failed", reason=f"the agent session failed: {e}", retryable=True)
            r["deliveryId"] = id
            if r["status"] in ("delivered", "accepted"):
                self.events.emit("message.received", {"messageId": message.get("messageId"), "deliveryId": id})
            # Only a surfaced message is final for this id. A deferral or failure is asked
            # again, and so is an accepted one: the session recognises an id it still holds.
            if r["status"] == "delivered":
                seen[id] = r
                if len(seen) > SEEN:
                    seen.popitem(last=False)
            await self._reply(msg, r)

    async def _serve_inputs(self, sub: Any, session: AgentSession) -> None:
        async for msg in sub.messages:
            try:
                data = json.loads(msg.data)["data"]
            except (ValueError, KeyError, TypeError) as e:
                await self._reply_error(msg, RelayError("invalid_request", f"input: {e!r}"))
                continue
            try:
                await session.input(data)
                await self._reply(msg, {"accepted": True})
            except Exception as e:
                message = e.message if isinstance(e, RelayError) else str(e)
                await self._reply_error(msg, RelayError("capability_unsupported", message))

    async def _serve_turns(self, sub: Any, session: AgentSession) -> None:
        async for msg in sub.messages:
            try:
                control = json.loads(msg.data)
            except ValueError as e:
                await self._reply_error(msg, RelayError("invalid_request", f"turn: {e}"))
                continue
            # Each request on its own: one that raises (or cannot be encoded) gets an error reply
            # and the next is still served.
            try:
                await self._reply(msg, await session.turn(control))
            except Exception as e:
                await self._reply_failure(msg, "turn", e)

    async def _serve_cancels(self, sub: Any, session: AgentSession) -> None:
        async for msg in sub.messages:
            try:
                held = json.loads(msg.data)
                held["deliveryId"]
            except (ValueError, KeyError, TypeError) as e:
                await self._reply_error(msg, RelayError("invalid_request", f"cancel: {e!r}"))
                continue
            try:
                await self._reply(msg, {"removed": bool(await session.cancel(held))})
            except Exception as e:
                await self._reply_failure(msg, "cancel", e)

    async def _serve_invokes(self, sub: Any, session: AgentSession) -> None:
        """Each invocation on its own task: a slow action does not hold up the next."""

        async def one(msg: Any) -> None:
            try:
                call = json.loads(msg.data)
            except ValueError as e:
                await self._reply_error(msg, RelayError("invalid_request", f"invoke: {e}"))
                return
            await self._reply(msg, _without_none(await session.invoke_action(call)))

        running: set = set()
        async for msg in sub.messages:
            task = asyncio.ensure_future(one(msg))
            running.add(task)
            task.add_done_callback(running.discard)

    async def _serve_release(self, sub: Any, session: AgentSession, registry_release: bool) -> None:
        async for msg in sub.messages:
            try:
                reason = (json.loads(msg.data or b"{}") or {}).get("reason")
            except (ValueError, AttributeError):
                reason = None
            previous = self.events.current_status
            self.events.status("releasing")
            try:
                await session.release(reason)
            except Exception as e:
                # Not released: back to where it was, still serving, so a release can be asked again.
                if previous is not None:
                    self.events.status(previous)
                await self._reply_failure(msg, "release", e)
                continue
            self.events.emit("session.released", {"sessionId": self.session_id, "reason": reason})
            self.events.status("released")
            if registry_release:
                req = {"sessionId": self.session_id, "agentId": self.agent_id}
                try:
                    await self.bus.call("session.agent.release", req, CALL_TIMEOUT)
                except Exception as e:  # whatever it was, the session itself is released
                    log.warning("registry did not record the release: %s", e)
            await self.events.flush()
            try:
                await self._reply(msg, {"released": True})
            except Exception as e:
                # The session is released all the same: released() must still return.
                log.error("cannot answer the release: %r", e)
            self._released.set()
            return

    async def _serve_decisions(self, sub: Any, id_key: str, value_key: str) -> None:
        """`agent.<id>.permission` {requestId, decision} and `agent.<id>.question` {questionId,
        answer}: a person's decision for a request this agent is waiting on."""
        async for msg in sub.messages:
            try:
                body = json.loads(msg.data)
                id, value = body[id_key], body[value_key]
            except (ValueError, KeyError, TypeError) as e:
                await self._reply_error(msg, RelayError("invalid_request", f"{value_key}: {e!r}"))
                continue
            waiting = self._pending.get(id)
            if waiting is None or waiting.done():
                await self._reply_error(msg, RelayError("not_found", "no prompt of this agent waits for that id"))
                continue
            waiting.set_result(value)
            await self._reply(msg, {"success": True})


async def _attach_new(bus: Bus, opts: AttachOptions) -> tuple[str, Optional[str]]:
    """Creates the relay session if needed and attaches a new agent to it; its id and handle."""
    try:
        await bus.call("session.create", {"sessionId": opts.session_id}, CALL_TIMEOUT)
    except RelayError as e:
        if e.code != "conflict":  # conflict: it exists, attach to it
            raise
    req = {
        "sessionId": opts.session_id,
        "agent": opts.agent,
        "capabilities": opts.capabilities,
        "agentCapabilities": opts.agent_capabilities,
        "adapterSessionId": opts.adapter_session_id,
        "handle": opts.handle,
        "spawnedBy": opts.spawned_by,
    }
    attached = await bus.call("session.agent.attach", _without_none(req), CALL_TIMEOUT)
    return attached["agentId"], attached.get("handle")
