from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ActionCapabilities")


@_attrs_define
class ActionCapabilities:
    """
    Attributes:
        expose (bool | None | Unset):
        invoke (bool | None | Unset):
    """

    expose: bool | None | Unset = UNSET
    invoke: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        expose: bool | None | Unset
        if isinstance(self.expose, Unset):
            expose = UNSET
        else:
            expose = self.expose

        invoke: bool | None | Unset
        if isinstance(self.invoke, Unset):
            invoke = UNSET
        else:
            invoke = self.invoke

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if expose is not UNSET:
            field_dict["expose"] = expose
        if invoke is not UNSET:
            field_dict["invoke"] = invoke

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_expose(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        expose = _parse_expose(d.pop("expose", UNSET))

        def _parse_invoke(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        invoke = _parse_invoke(d.pop("invoke", UNSET))

        action_capabilities = cls(
            expose=expose,
            invoke=invoke,
        )

        action_capabilities.additional_properties = d
        return action_capabilities

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
