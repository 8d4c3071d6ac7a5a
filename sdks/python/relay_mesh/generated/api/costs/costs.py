from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.report import Report
from ...models.wire_error import WireError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    agent: str | Unset = UNSET,
    session: str | Unset = UNSET,
    model: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["since"] = since

    params["until"] = until

    params["agent"] = agent

    params["session"] = session

    params["model"] = model

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/costs",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Report | WireError | None:
    if response.status_code == 200:
        response_200 = Report.from_dict(response.json())

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
) -> Response[Report | WireError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    agent: str | Unset = UNSET,
    session: str | Unset = UNSET,
    model: str | Unset = UNSET,
) -> Response[Report | WireError]:
    """
    Args:
        since (int | Unset):
        until (int | Unset):
        agent (str | Unset):
        session (str | Unset):
        model (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Report | WireError]
    """

    kwargs = _get_kwargs(
        since=since,
        until=until,
        agent=agent,
        session=session,
        model=model,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    agent: str | Unset = UNSET,
    session: str | Unset = UNSET,
    model: str | Unset = UNSET,
) -> Report | WireError | None:
    """
    Args:
        since (int | Unset):
        until (int | Unset):
        agent (str | Unset):
        session (str | Unset):
        model (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Report | WireError
    """

    return sync_detailed(
        client=client,
        since=since,
        until=until,
        agent=agent,
        session=session,
        model=model,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    agent: str | Unset = UNSET,
    session: str | Unset = UNSET,
    model: str | Unset = UNSET,
) -> Response[Report | WireError]:
    """
    Args:
        since (int | Unset):
        until (int | Unset):
        agent (str | Unset):
        session (str | Unset):
        model (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Report | WireError]
    """

    kwargs = _get_kwargs(
        since=since,
        until=until,
        agent=agent,
        session=session,
        model=model,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    since: int | Unset = UNSET,
    until: int | Unset = UNSET,
    agent: str | Unset = UNSET,
    session: str | Unset = UNSET,
    model: str | Unset = UNSET,
) -> Report | WireError | None:
    """
    Args:
        since (int | Unset):
        until (int | Unset):
        agent (str | Unset):
        session (str | Unset):
        model (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Report | WireError
    """

    return (
        await asyncio_detailed(
            client=client,
            since=since,
            until=until,
            agent=agent,
            session=session,
            model=model,
        )
    ).parsed
