from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.delivery_policy import DeliveryPolicy
from ...models.wire_error import WireError
from ...models.workspace import Workspace
from ...types import Response


def _get_kwargs(
    name: str,
    *,
    body: DeliveryPolicy,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/workspaces/{name}/delivery-policy".format(
            name=quote(str(name), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> WireError | Workspace | None:
    if response.status_code == 200:
        response_200 = Workspace.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = WireError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = WireError.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = WireError.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = WireError.from_dict(response.json())

        return response_404

    if response.status_code == 413:
        response_413 = WireError.from_dict(response.json())

        return response_413

    if response.status_code == 429:
        response_429 = WireError.from_dict(response.json())

        return response_429

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
) -> Response[WireError | Workspace]:
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
    body: DeliveryPolicy,
) -> Response[WireError | Workspace]:
    """
    Args:
        name (str):
        body (DeliveryPolicy): How messages are delivered in a workspace (seed 001 step 3),
            applied before delivery: the
            mode of a send that names none, the modes a send may ask for, and how many deliveries may
            wait for one agent. A delivery the policy refuses fails with a receipt that says why.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[WireError | Workspace]
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
    body: DeliveryPolicy,
) -> WireError | Workspace | None:
    """
    Args:
        name (str):
        body (DeliveryPolicy): How messages are delivered in a workspace (seed 001 step 3),
            applied before delivery: the
            mode of a send that names none, the modes a send may ask for, and how many deliveries may
            wait for one agent. A delivery the policy refuses fails with a receipt that says why.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        WireError | Workspace
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
    body: DeliveryPolicy,
) -> Response[WireError | Workspace]:
    """
    Args:
        name (str):
        body (DeliveryPolicy): How messages are delivered in a workspace (seed 001 step 3),
            applied before delivery: the
            mode of a send that names none, the modes a send may ask for, and how many deliveries may
            wait for one agent. A delivery the policy refuses fails with a receipt that says why.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[WireError | Workspace]
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
    body: DeliveryPolicy,
) -> WireError | Workspace | None:
    """
    Args:
        name (str):
        body (DeliveryPolicy): How messages are delivered in a workspace (seed 001 step 3),
            applied before delivery: the
            mode of a send that names none, the modes a send may ask for, and how many deliveries may
            wait for one agent. A delivery the policy refuses fails with a receipt that says why.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        WireError | Workspace
    """

    return (
        await asyncio_detailed(
            name=name,
            client=client,
            body=body,
        )
    ).parsed
