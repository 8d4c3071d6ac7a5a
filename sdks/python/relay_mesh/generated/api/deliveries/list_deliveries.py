from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.delivery_status import DeliveryStatus
from ...models.list_deliveries_response import ListDeliveriesResponse
from ...models.wire_error import WireError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    session_id: str | Unset = UNSET,
    agent_id: str | Unset = UNSET,
    message_id: str | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["sessionId"] = session_id

    params["agentId"] = agent_id

    params["messageId"] = message_id

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status

    params["status"] = json_status

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/deliveries",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ListDeliveriesResponse | WireError | None:
    if response.status_code == 200:
        response_200 = ListDeliveriesResponse.from_dict(response.json())

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

    if response.status_code == 504:
        response_504 = WireError.from_dict(response.json())

        return response_504

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ListDeliveriesResponse | WireError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    session_id: str | Unset = UNSET,
    agent_id: str | Unset = UNSET,
    message_id: str | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
) -> Response[ListDeliveriesResponse | WireError]:
    """
    Args:
        session_id (str | Unset):
        agent_id (str | Unset):
        message_id (str | Unset):
        status (DeliveryStatus | Unset): created → accepted/deferred → delivered | failed;
            cancelled by request.
        limit (int | Unset):
        cursor (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListDeliveriesResponse | WireError]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        agent_id=agent_id,
        message_id=message_id,
        status=status,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    session_id: str | Unset = UNSET,
    agent_id: str | Unset = UNSET,
    message_id: str | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
) -> ListDeliveriesResponse | WireError | None:
    """
    Args:
        session_id (str | Unset):
        agent_id (str | Unset):
        message_id (str | Unset):
        status (DeliveryStatus | Unset): created → accepted/deferred → delivered | failed;
            cancelled by request.
        limit (int | Unset):
        cursor (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListDeliveriesResponse | WireError
    """

    return sync_detailed(
        client=client,
        session_id=session_id,
        agent_id=agent_id,
        message_id=message_id,
        status=status,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    session_id: str | Unset = UNSET,
    agent_id: str | Unset = UNSET,
    message_id: str | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
) -> Response[ListDeliveriesResponse | WireError]:
    """
    Args:
        session_id (str | Unset):
        agent_id (str | Unset):
        message_id (str | Unset):
        status (DeliveryStatus | Unset): created → accepted/deferred → delivered | failed;
            cancelled by request.
        limit (int | Unset):
        cursor (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListDeliveriesResponse | WireError]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        agent_id=agent_id,
        message_id=message_id,
        status=status,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    session_id: str | Unset = UNSET,
    agent_id: str | Unset = UNSET,
    message_id: str | Unset = UNSET,
    status: DeliveryStatus | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: int | Unset = UNSET,
) -> ListDeliveriesResponse | WireError | None:
    """
    Args:
        session_id (str | Unset):
        agent_id (str | Unset):
        message_id (str | Unset):
        status (DeliveryStatus | Unset): created → accepted/deferred → delivered | failed;
            cancelled by request.
        limit (int | Unset):
        cursor (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListDeliveriesResponse | WireError
    """

    return (
        await asyncio_detailed(
            client=client,
            session_id=session_id,
            agent_id=agent_id,
            message_id=message_id,
            status=status,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
