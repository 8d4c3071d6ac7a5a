from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.query_response import QueryResponse
from ...models.wire_error import WireError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    types: str | Unset = UNSET,
    agent: str | Unset = UNSET,
    session_id: str | Unset = UNSET,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
    newest_first: bool | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["types"] = types

    params["agent"] = agent

    params["sessionId"] = session_id

    params["since"] = since

    params["until"] = until

    params["limit"] = limit

    params["cursor"] = cursor

    params["newestFirst"] = newest_first

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> QueryResponse | WireError | None:
    if response.status_code == 200:
        response_200 = QueryResponse.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = WireError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = WireError.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = WireError.from_dict(response.json())

        return response_404

    if response.status_code == 503:
        response_503 = WireError.from_dict(response.json())

        return response_503

    if response.status_code == 504:
        response_504 = WireError.from_dict(response.json())

        return response_504

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[QueryResponse | WireError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    agent: str | Unset = UNSET,
    session_id: str | Unset = UNSET,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
    newest_first: bool | Unset = UNSET,
) -> Response[QueryResponse | WireError]:
    """
    Args:
        types (str | Unset):
        agent (str | Unset):
        session_id (str | Unset):
        since (int | Unset):
        until (int | Unset):
        limit (int | Unset):
        cursor (int | Unset):
        newest_first (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[QueryResponse | WireError]
    """

    kwargs = _get_kwargs(
        types=types,
        agent=agent,
        session_id=session_id,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
        newest_first=newest_first,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    agent: str | Unset = UNSET,
    session_id: str | Unset = UNSET,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
    newest_first: bool | Unset = UNSET,
) -> QueryResponse | WireError | None:
    """
    Args:
        types (str | Unset):
        agent (str | Unset):
        session_id (str | Unset):
        since (int | Unset):
        until (int | Unset):
        limit (int | Unset):
        cursor (int | Unset):
        newest_first (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        QueryResponse | WireError
    """

    return sync_detailed(
        client=client,
        types=types,
        agent=agent,
        session_id=session_id,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
        newest_first=newest_first,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    agent: str | Unset = UNSET,
    session_id: str | Unset = UNSET,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
    newest_first: bool | Unset = UNSET,
) -> Response[QueryResponse | WireError]:
    """
    Args:
        types (str | Unset):
        agent (str | Unset):
        session_id (str | Unset):
        since (int | Unset):
        until (int | Unset):
        limit (int | Unset):
        cursor (int | Unset):
        newest_first (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[QueryResponse | WireError]
    """

    kwargs = _get_kwargs(
        types=types,
        agent=agent,
        session_id=session_id,
        since=since,
        until=until,
        limit=limit,
        cursor=cursor,
        newest_first=newest_first,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    agent: str | Unset = UNSET,
    session_id: str | Unset = UNSET,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
    newest_first: bool | Unset = UNSET,
) -> QueryResponse | WireError | None:
    """
    Args:
        types (str | Unset):
        agent (str | Unset):
        session_id (str | Unset):
        since (int | Unset):
        until (int | Unset):
        limit (int | Unset):
        cursor (int | Unset):
        newest_first (bool | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        QueryResponse | WireError
    """

    return (
        await asyncio_detailed(
            client=client,
            types=types,
            agent=agent,
            session_id=session_id,
            since=since,
            until=until,
            limit=limit,
            cursor=cursor,
            newest_first=newest_first,
        )
    ).parsed
