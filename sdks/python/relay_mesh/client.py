"""The client: the generated operations with auth and typed errors, plus event streams."""

from __future__ import annotations

from typing import Any, Self
from urllib.parse import quote

import httpx

from .errors import araise_for_error, raise_for_error
from .events import EventStream
from .generated import client as generated
from .generated.api.events import query_events
from .generated.models.query_response import QueryResponse


class Client:
    """A caller of one relay-mesh gateway.

    `base_url` is the gateway's root (`http://127.0.0.1:8080`); `token` a workspace API key
    (`rk_…`) or the gateway's shared token, sent as `Authorization: Bearer`. Pass `client.api`
    to any generated operation, sync or asyncio:

        from relay_mesh.generated.api.sessions import create_session
        created = create_session.sync(client=relay.api, body=CreateSession(cli="claude"))

    An error status raises RelayError (from the JSON envelope) before the generated code
    parses anything, so what an operation returns is its success type.
    """

    def __init__(self, base_url: str, token: str | None = None, *, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        api_url = self.base_url + "/api/v1"
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        common: dict[str, Any] = {"base_url": api_url, "headers": headers, "timeout": timeout}
        self.api = generated.Client(base_url=api_url)
        self.api.set_httpx_client(httpx.Client(**common, event_hooks={"response": [raise_for_error]}))
        self.api.set_async_httpx_client(
            httpx.AsyncClient(**common, event_hooks={"response": [araise_for_error]})
        )

    def stream_events(
        self,
        *,
        session_id: str | None = None,
        agent: str | None = None,
        channel: str | None = None,
        after: int | None = None,
        since: int | None = None,
        types: list[str] | None = None,
        idle_timeout: float = 75.0,
    ) -> EventStream:
        """The events of a session, an agent, a channel or (none given) the whole workspace,
        as an iterator of `Event`s that reconnects with `Last-Event-ID` (see EventStream).

        Starts after the seq `after` (0: the whole log), or at the Unix time `since` in ms
        (when `after` is None), or else with the next event committed. `types` keeps only those event types.
        """
        if session_id is not None:
            path = f"/sessions/{quote(session_id, safe='')}/events/sse"
        elif agent is not None:
            path = f"/agents/{quote(agent, safe='')}/events/sse"
        elif channel is not None:
            path = f"/channels/{quote(channel.removeprefix('#'), safe='')}/events/sse"
        else:
            path = "/events/sse"
        params: dict[str, str | int] = {}
        if types:
            params["types"] = ",".join(types)
        if since is not None:
            # Where it starts, until the first event gives a seq (Last-Event-ID wins then).
            params["since"] = since
        elif after is None:
            after = self.head()
        return EventStream(self.api.get_httpx_client(), path, params, after, idle_timeout)

    def head(self) -> int:
        """The seq of the newest event the caller can see (0 when there is none)."""
        page = query_events.sync(client=self.api, newest_first=True, limit=1)
        assert isinstance(page, QueryResponse)
        return page.events[0].seq if page.events else 0

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()
