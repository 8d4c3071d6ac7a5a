from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_mode import DeliveryMode, check_delivery_mode
from ..types import UNSET, Unset

T = TypeVar("T", bound="DeliveryCapabilities")


@_attrs_define
class DeliveryCapabilities:
    """
    Attributes:
        modes (list[DeliveryMode]):
        queue (bool | None | Unset):
    """

    modes: list[DeliveryMode]
    queue: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        modes = []
        for modes_item_data in self.modes:
            modes_item: str = modes_item_data
            modes.append(modes_item)

        queue: bool | None | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "modes": modes,
            }
        )
        if queue is not UNSET:
            field_dict["queue"] = queue

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        modes = []
        _modes = d.pop("modes")
        for modes_item_data in _modes:
            modes_item = check_delivery_mode(modes_item_data)

            modes.append(modes_item)

        def _parse_queue(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        queue = _parse_queue(d.pop("queue", UNSET))

        delivery_capabilities = cls(
            modes=modes,
            queue=queue,
        )

        delivery_capabilities.additional_properties = d
        return delivery_capabilities

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
