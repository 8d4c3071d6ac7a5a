from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.list_response import ListResponse
from ...models.status_filter import StatusFilter
from ...models.wire_error import WireError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    status: StatusFilter | Unset = UNSET,
    execution_target_id: str | Unset = UNSET,
    include_preview: bool | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status

    params["status"] = json_status

    params["executionTargetId"] = execution_target_id

    params["includePreview"] = include_preview

    params["limit"] = limit

    params["offset"] = offset

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/sessions",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ListResponse | WireError | None:
    if response.status_code == 200:
        response_200 = ListResponse.from_dict(response.json())

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
) -> Response[ListResponse | WireError]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: StatusFilter | Unset = UNSET,
    execution_target_id: str | Unset = UNSET,
    include_preview: bool | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
) -> Response[ListResponse | WireError]:
    """
    Args:
        status (StatusFilter | Unset):
        execution_target_id (str | Unset):
        include_preview (bool | Unset):
        limit (int | Unset):
        offset (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListResponse | WireError]
    """

    kwargs = _get_kwargs(
        status=status,
        execution_target_id=execution_target_id,
        include_preview=include_preview,
        limit=limit,
        offset=offset,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    status: StatusFilter | Unset = UNSET,
    execution_target_id: str | Unset = UNSET,
    include_preview: bool | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
) -> ListResponse | WireError | None:
    """
    Args:
        status (StatusFilter | Unset):
        execution_target_id (str | Unset):
        include_preview (bool | Unset):
        limit (int | Unset):
        offset (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListResponse | WireError
    """

    return sync_detailed(
        client=client,
        status=status,
        execution_target_id=execution_target_id,
        include_preview=include_preview,
        limit=limit,
        offset=offset,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    status: StatusFilter | Unset = UNSET,
    execution_target_id: str | Unset = UNSET,
    include_preview: bool | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
) -> Response[ListResponse | WireError]:
    """
    Args:
        status (StatusFilter | Unset):
        execution_target_id (str | Unset):
        include_preview (bool | Unset):
        limit (int | Unset):
        offset (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListResponse | WireError]
    """

    kwargs = _get_kwargs(
        status=status,
        execution_target_id=execution_target_id,
        include_preview=include_preview,
        limit=limit,
        offset=offset,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    status: StatusFilter | Unset = UNSET,
    execution_target_id: str | Unset = UNSET,
    include_preview: bool | Unset = UNSET,
    limit: int | Unset = UNSET,
    offset: int | Unset = UNSET,
) -> ListResponse | WireError | None:
    """
    Args:
        status (StatusFilter | Unset):
        execution_target_id (str | Unset):
        include_preview (bool | Unset):
        limit (int | Unset):
        offset (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListResponse | WireError
    """

    return (
        await asyncio_detailed(
            client=client,
            status=status,
            execution_target_id=execution_target_id,
            include_preview=include_preview,
            limit=limit,
            offset=offset,
        )
    ).parsed
