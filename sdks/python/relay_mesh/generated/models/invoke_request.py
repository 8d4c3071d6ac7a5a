from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.invoke_request_input_type_0 import InvokeRequestInputType0


T = TypeVar("T", bound="InvokeRequest")


@_attrs_define
class InvokeRequest:
    """`action.invoke`: runs an agent's action with `input`, as the authenticated caller.

    Attributes:
        action (str):
        agent (str): The agent that exposes it (id or `@handle`).
        input_ (InvokeRequestInputType0 | None | Unset): Checked against the action's input schema; `{}` when absent.
        invocation_id (None | str | Unset): The same id again from the same caller answers with the first call's outcome
            instead of
            running the action twice.
        timeout_ms (float | None | Unset): How long to wait for the agent's answer, in ms (1 to 30,000; default 30,000;
            a
            fraction is rounded up).
    """

    action: str
    agent: str
    input_: InvokeRequestInputType0 | None | Unset = UNSET
    invocation_id: None | str | Unset = UNSET
    timeout_ms: float | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.invoke_request_input_type_0 import InvokeRequestInputType0

        action = self.action

        agent = self.agent

        input_: dict[str, Any] | None | Unset
        if isinstance(self.input_, Unset):
            input_ = UNSET
        elif isinstance(self.input_, InvokeRequestInputType0):
            input_ = self.input_.to_dict()
        else:
            input_ = self.input_

        invocation_id: None | str | Unset
        if isinstance(self.invocation_id, Unset):
            invocation_id = UNSET
        else:
            invocation_id = self.invocation_id

        timeout_ms: float | None | Unset
        if isinstance(self.timeout_ms, Unset):
            timeout_ms = UNSET
        else:
            timeout_ms = self.timeout_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
                "agent": agent,
            }
        )
        if input_ is not UNSET:
            field_dict["input"] = input_
        if invocation_id is not UNSET:
            field_dict["invocationId"] = invocation_id
        if timeout_ms is not UNSET:
            field_dict["timeoutMs"] = timeout_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.invoke_request_input_type_0 import InvokeRequestInputType0

        d = dict(src_dict)
        action = d.pop("action")

        agent = d.pop("agent")

        def _parse_input_(data: object) -> InvokeRequestInputType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                input_type_0 = InvokeRequestInputType0.from_dict(data)

                return input_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(InvokeRequestInputType0 | None | Unset, data)

        input_ = _parse_input_(d.pop("input", UNSET))

        def _parse_invocation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        invocation_id = _parse_invocation_id(d.pop("invocationId", UNSET))

        def _parse_timeout_ms(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        timeout_ms = _parse_timeout_ms(d.pop("timeoutMs", UNSET))

        invoke_request = cls(
            action=action,
            agent=agent,
            input_=input_,
            invocation_id=invocation_id,
            timeout_ms=timeout_ms,
        )

        return invoke_request
