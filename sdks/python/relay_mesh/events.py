"""SSE event streams that survive a dropped connection: what generators do not write."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx

from .errors import RelayError
from .generated.models.event import Event


class EventStream(Iterator[Event]):
    """The events of one SSE stream, each once and in seq order, across reconnects.

    A connection that fails, ends, or carries not a byte (the gateway sends a heartbeat every
    30 s while idle) for `idle_timeout` seconds is opened again with `Last-Event-ID` set to the
    last seq yielded, so the gateway replays exactly what came after it: nothing is skipped.
    A frame at or below that seq is dropped, so nothing is yielded twice. Errors that are not
    retryable (401, 403, 400) end the iteration with RelayError; retryable ones (503 at the
    stream cap, with Retry-After) and network errors are retried with a capped backoff.
    """

    def __init__(
        self,
        http: httpx.Client,
        path: str,
        params: dict[str, Any],
        after: int | None,
        idle_timeout: float = 75.0,
        max_backoff: float = 5.0,
    ) -> None:
        self._http = http
        self._path = path
        self._params = params
        self._idle_timeout = idle_timeout
        self._max_backoff = max_backoff
        # The seq of the last event yielded; the next connection resumes after it. None only
        # before the first event of a stream that starts at a time (`since`).
        self.last_seq = after
        # How many times the stream was opened again.
        self.reconnects = 0
        self._events = self._run()

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        """Closes the connection; the iteration ends."""
        self._events.close()

    def _run(self) -> Iterator[Event]:
        backoff = 0.1
        while True:
            headers = {"Accept": "text/event-stream"}
            if self.last_seq is not None:
                headers["Last-Event-ID"] = str(self.last_seq)
            try:
                with self._http.stream(
                    "GET",
                    self._path,
                    params=self._params,
                    headers=headers,
                    timeout=httpx.Timeout(self._idle_timeout, connect=10.0),
                ) as response:
                    backoff = 0.1
                    for seq, data in _frames(response.iter_lines()):
                        if self.last_seq is not None and seq <= self.last_seq:
                            continue
                        event = Event.from_dict(json.loads(data))
                        self.last_seq = seq
                        yield event
                wait = backoff  # the server ended the stream (it restarts, say)
            except RelayError as e:
                if not e.retryable:
                    raise
                wait = e.retry_after or backoff
            except httpx.TransportError:
                wait = backoff
            self.reconnects += 1
            time.sleep(wait)
            backoff = min(backoff * 2, self._max_backoff)


def _frames(lines: Iterator[str]) -> Iterator[tuple[int, str]]:
    """(id, data) of each complete frame; comments (heartbeats) and frames without an id are
    skipped, and a frame cut off by a dropped connection never completes."""
    seq: int | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if seq is not None and data:
                yield seq, "\n".join(data)
            seq, data = None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "id":
            seq = int(value) if value.isdigit() else None
        elif field == "data":
            data.append(value)
