from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.reason import Reason
from ...models.turn_state import TurnState
from ...models.wire_error import WireError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    name: str,
    *,
    body: Reason | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/agents/{name}/interrupt".format(
            name=quote(str(name), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> TurnState | WireError | None:
    if response.status_code == 200:
        response_200 = TurnState.from_dict(response.json())

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

    if response.status_code == 413:
        response_413 = WireError.from_dict(response.json())

        return response_413

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
) -> Response[TurnState | WireError]:
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
    body: Reason | Unset = UNSET,
) -> Response[TurnState | WireError]:
    """
    Args:
        name (str):
        body (Reason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[TurnState | WireError]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: Reason | Unset = UNSET,
) -> TurnState | WireError | None:
    """
    Args:
        name (str):
        body (Reason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        TurnState | WireError
    """

    return sync_detailed(
        name=name,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: Reason | Unset = UNSET,
) -> Response[TurnState | WireError]:
    """
    Args:
        name (str):
        body (Reason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[TurnState | WireError]
    """

    kwargs = _get_kwargs(
        name=name,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    name: str,
    *,
    client: AuthenticatedClient | Client,
    body: Reason | Unset = UNSET,
) -> TurnState | WireError | None:
    """
    Args:
        name (str):
        body (Reason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        TurnState | WireError
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
        )
    ).parsed
