from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.delivery_mode import DeliveryMode, check_delivery_mode
from ..types import UNSET, Unset

T = TypeVar("T", bound="Flush")


@_attrs_define
class Flush:
    """
    Attributes:
        mode (DeliveryMode | None | Unset):
    """

    mode: DeliveryMode | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        mode: None | str | Unset
        if isinstance(self.mode, Unset):
            mode = UNSET
        elif isinstance(self.mode, str):
            mode = self.mode
        else:
            mode = self.mode

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if mode is not UNSET:
            field_dict["mode"] = mode

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_mode(data: object) -> DeliveryMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                mode_type_1 = check_delivery_mode(data)

                return mode_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeliveryMode | None | Unset, data)

        mode = _parse_mode(d.pop("mode", UNSET))

        flush = cls(
            mode=mode,
        )

        return flush
