from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.wire_error import WireError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    name: str,
    *,
    types: str | Unset = UNSET,
    since: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    params: dict[str, Any] = {}

    params["types"] = types

    params["since"] = since

    params["offset"] = offset

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/agents/{name}/events/sse".format(
            name=quote(str(name), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> WireError | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 400:
        response_400 = WireError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = WireError.from_dict(response.json())

        return response_401

    if response.status_code == 503:
        response_503 = WireError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[WireError | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    since: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> Response[WireError | str]:
    """
    Args:
        name (str):
        types (str | Unset):
        since (int | Unset):
        offset (int | Unset):
        last_event_id (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[WireError | str]
    """

    kwargs = _get_kwargs(
        name=name,
        types=types,
        since=since,
        offset=offset,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    since: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> WireError | str | None:
    """
    Args:
        name (str):
        types (str | Unset):
        since (int | Unset):
        offset (int | Unset):
        last_event_id (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        WireError | str
    """

    return sync_detailed(
        name=name,
        client=client,
        types=types,
        since=since,
        offset=offset,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    since: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> Response[WireError | str]:
    """
    Args:
        name (str):
        types (str | Unset):
        since (int | Unset):
        offset (int | Unset):
        last_event_id (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[WireError | str]
    """

    kwargs = _get_kwargs(
        name=name,
        types=types,
        since=since,
        offset=offset,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    types: str | Unset = UNSET,
    since: int | Unset = UNSET,
    offset: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> WireError | str | None:
    """
    Args:
        name (str):
        types (str | Unset):
        since (int | Unset):
        offset (int | Unset):
        last_event_id (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        WireError | str
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            types=types,
            since=since,
            offset=offset,
            last_event_id=last_event_id,
        )
    ).parsed
