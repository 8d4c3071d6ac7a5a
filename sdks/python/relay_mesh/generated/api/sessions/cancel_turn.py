from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.cancel_turn_response import CancelTurnResponse
from ...models.reason import Reason
from ...models.wire_error import WireError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    id: str,
    turn_id: str,
    *,
    body: Reason | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/sessions/{id}/turns/{turn_id}/cancel".format(
            id=quote(str(id), safe=""),
            turn_id=quote(str(turn_id), safe=""),
        ),
    }

    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CancelTurnResponse | WireError | None:
    if response.status_code == 200:
        response_200 = CancelTurnResponse.from_dict(response.json())

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

    if response.status_code == 409:
        response_409 = WireError.from_dict(response.json())

        return response_409

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
) -> Response[CancelTurnResponse | WireError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    turn_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Reason | Unset = UNSET,
) -> Response[CancelTurnResponse | WireError]:
    """
    Args:
        id (str):
        turn_id (str):
        body (Reason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CancelTurnResponse | WireError]
    """

    kwargs = _get_kwargs(
        id=id,
        turn_id=turn_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    turn_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Reason | Unset = UNSET,
) -> CancelTurnResponse | WireError | None:
    """
    Args:
        id (str):
        turn_id (str):
        body (Reason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CancelTurnResponse | WireError
    """

    return sync_detailed(
        id=id,
        turn_id=turn_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: str,
    turn_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Reason | Unset = UNSET,
) -> Response[CancelTurnResponse | WireError]:
    """
    Args:
        id (str):
        turn_id (str):
        body (Reason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CancelTurnResponse | WireError]
    """

    kwargs = _get_kwargs(
        id=id,
        turn_id=turn_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    turn_id: str,
    *,
    client: AuthenticatedClient | Client,
    body: Reason | Unset = UNSET,
) -> CancelTurnResponse | WireError | None:
    """
    Args:
        id (str):
        turn_id (str):
        body (Reason | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CancelTurnResponse | WireError
    """

    return (
        await asyncio_detailed(
            id=id,
            turn_id=turn_id,
            client=client,
            body=body,
        )
    ).parsed
