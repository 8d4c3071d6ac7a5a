from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.delivery_mode import DeliveryMode, check_delivery_mode
from ..types import UNSET, Unset

T = TypeVar("T", bound="DeliveryPolicy")


@_attrs_define
class DeliveryPolicy:
    """How messages are delivered in a workspace (seed 001 step 3), applied before delivery: the
    mode of a send that names none, the modes a send may ask for, and how many deliveries may
    wait for one agent. A delivery the policy refuses fails with a receipt that says why.

        Attributes:
            allowed_modes (list[DeliveryMode] | None | Unset): Every mode when absent; the default mode is always allowed.
            default_mode (DeliveryMode | None | Unset):
            max_pending_per_agent (int | None | Unset): No cap when absent.
    """

    allowed_modes: list[DeliveryMode] | None | Unset = UNSET
    default_mode: DeliveryMode | None | Unset = UNSET
    max_pending_per_agent: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        allowed_modes: list[str] | None | Unset
        if isinstance(self.allowed_modes, Unset):
            allowed_modes = UNSET
        elif isinstance(self.allowed_modes, list):
            allowed_modes = []
            for allowed_modes_type_0_item_data in self.allowed_modes:
                allowed_modes_type_0_item: str = allowed_modes_type_0_item_data
                allowed_modes.append(allowed_modes_type_0_item)

        else:
            allowed_modes = self.allowed_modes

        default_mode: None | str | Unset
        if isinstance(self.default_mode, Unset):
            default_mode = UNSET
        elif isinstance(self.default_mode, str):
            default_mode = self.default_mode
        else:
            default_mode = self.default_mode

        max_pending_per_agent: int | None | Unset
        if isinstance(self.max_pending_per_agent, Unset):
            max_pending_per_agent = UNSET
        else:
            max_pending_per_agent = self.max_pending_per_agent

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if allowed_modes is not UNSET:
            field_dict["allowedModes"] = allowed_modes
        if default_mode is not UNSET:
            field_dict["defaultMode"] = default_mode
        if max_pending_per_agent is not UNSET:
            field_dict["maxPendingPerAgent"] = max_pending_per_agent

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_allowed_modes(data: object) -> list[DeliveryMode] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                allowed_modes_type_0 = []
                _allowed_modes_type_0 = data
                for allowed_modes_type_0_item_data in _allowed_modes_type_0:
                    allowed_modes_type_0_item = check_delivery_mode(
                        allowed_modes_type_0_item_data
                    )

                    allowed_modes_type_0.append(allowed_modes_type_0_item)

                return allowed_modes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[DeliveryMode] | None | Unset, data)

        allowed_modes = _parse_allowed_modes(d.pop("allowedModes", UNSET))

        def _parse_default_mode(data: object) -> DeliveryMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                default_mode_type_1 = check_delivery_mode(data)

                return default_mode_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeliveryMode | None | Unset, data)

        default_mode = _parse_default_mode(d.pop("defaultMode", UNSET))

        def _parse_max_pending_per_agent(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_pending_per_agent = _parse_max_pending_per_agent(
            d.pop("maxPendingPerAgent", UNSET)
        )

        delivery_policy = cls(
            allowed_modes=allowed_modes,
            default_mode=default_mode,
            max_pending_per_agent=max_pending_per_agent,
        )

        return delivery_policy
