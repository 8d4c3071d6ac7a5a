"""The session's events, in order, to the event log (`event.append`).

Events get their id when emitted, so a batch retried after a lost reply is stored once. One task
sends them in emission order, batching whatever is queued; while the log cannot be reached it
retries with backoff and loses nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from typing import Optional

from .bus import Bus, RelayError

BATCH = 500
log = logging.getLogger("relay_mesh_harness")


def now_ms() -> int:
    return int(time.time() * 1000)


class EventSink:
    def __init__(self, bus: Bus, session_id: str, agent_id: str):
        self.session_id = session_id
        self.agent_id = agent_id
        self.current_status: Optional[str] = None
        self._bus = bus
        self._queue: asyncio.Queue = asyncio.Queue()
        self._task = asyncio.ensure_future(self._send())

    def emit(self, event_type: str, payload: Optional[dict] = None) -> None:
        """Queues one event of this agent session. A payload that is not JSON raises TypeError or
        ValueError here, before it is queued."""
        # Checked now: queued, it would fail the batch far from the caller who can fix it.
        json.dumps(payload, allow_nan=False)
        self._queue.put_nowait(
            {
                "eventId": str(uuid.uuid4()),
                "type": event_type,
                "ts": now_ms(),
                "sessionId": self.session_id,
                "agentId": self.agent_id,
                # No workspace: the harness identity says which (without one, `default`).
                "payload": payload if payload is not None else {},
            }
        )

    def status(self, status: str) -> None:
        """Reports a status change (`status.changed` with the previous status); repeats are
        dropped."""
        if self.current_status == status:
            return
        previous, self.current_status = self.current_status, status
        self.emit("status.changed", {"status": status, "previousStatus": previous})

    async def flush(self) -> None:
        """Waits until every event emitted so far is stored in the log."""
        done = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(done)
        await done

    def close(self) -> None:
        self._task.cancel()

    async def _send(self) -> None:
        while True:
            batch, waiting = [], []
            item = await self._queue.get()
            while True:
                (waiting if isinstance(item, asyncio.Future) else batch).append(item)
                if len(batch) >= BATCH or self._queue.empty():
                    break
                item = self._queue.get_nowait()
            if batch:
                await self._append(batch)
            for done in waiting:
                if not done.done():
                    done.set_result(None)

    async def _append(self, events: list) -> None:
        """Appends a batch, retrying while the log cannot be reached. A batch the log refuses is
        sent again one event at a time, so only the invalid event is dropped (and logged). Any
        other failure is handled the same way: the send loop must outlive it, or every later event
        stays queued and flush() never returns."""
        try:
            await self._append_retrying(events)
        except Exception as e:
            if len(events) == 1:
                log.error("agent event %s not stored: %r", events[0]["type"], e)
                return
            for event in events:
                try:
                    await self._append_retrying([event])
                except Exception as e:
                    log.error("agent event %s not stored: %r", event["type"], e)

    async def _append_retrying(self, events: list) -> None:
        wait = 0.1
        while True:
            try:
                await self._bus.call("event.append", {"events": events}, timeout=5.0)
                return
            except RelayError as e:
                # Refused: retrying the same request cannot help.
                if not e.retryable:
                    raise
                log.warning("event log not reachable (%s); events kept and retried in %.1f s", e, wait)
                await asyncio.sleep(wait)
                wait = min(wait * 2, 5.0)
