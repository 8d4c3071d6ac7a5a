"""Typed errors from the API's JSON envelope: `{"error": {code, message, retryable, details}}`."""

from __future__ import annotations

from typing import Any

import httpx

from .generated.models.error_code import ErrorCode


class RelayError(Exception):
    """An error reply of the relay-mesh API.

    `code` is one of the API's closed set of codes (`not_found`, `conflict`, `unauthorized`,
    `forbidden`, `rate_limited`, `unavailable`, `timeout`, …); `retryable` says whether the
    same request may succeed later. A reply without the envelope (a proxy's error page, say)
    gets the code `internal`, retryable when its status is 5xx.
    """

    def __init__(
        self,
        status: int,
        code: ErrorCode | str,
        message: str,
        retryable: bool,
        details: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code}: {message} (HTTP {status})")
        self.status = status
        self.code = code
        self.message = message
        self.retryable = retryable
        self.details = details
        # Seconds, from a Retry-After header (429, and 503 at the stream cap).
        self.retry_after = retry_after

    @classmethod
    def from_response(cls, response: httpx.Response) -> RelayError:
        retry_after = response.headers.get("retry-after")
        after = float(retry_after) if retry_after and retry_after.isdigit() else None
        try:
            body = response.json()["error"]
            return cls(
                response.status_code,
                body["code"],
                body["message"],
                bool(body["retryable"]),
                body.get("details"),
                after,
            )
        except (ValueError, KeyError, TypeError):
            text = response.text[:500]
            return cls(response.status_code, "internal", text, response.status_code >= 500, None, after)


def raise_for_error(response: httpx.Response) -> None:
    """httpx response hook: an error status raises RelayError before anything parses it."""
    if response.status_code >= 400:
        response.read()
        raise RelayError.from_response(response)


async def araise_for_error(response: httpx.Response) -> None:
    """The same hook for httpx.AsyncClient (the generated `asyncio` functions)."""
    if response.status_code >= 400:
        await response.aread()
        raise RelayError.from_response(response)
