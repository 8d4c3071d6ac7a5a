from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ObserveClientResponse")


@_attrs_define
class ObserveClientResponse:
    """
    Attributes:
        changed (bool): The account changed (`session.clientAccount.changed` was emitted).
        previous_client_account_id (None | str | Unset):
    """

    changed: bool
    previous_client_account_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        changed = self.changed

        previous_client_account_id: None | str | Unset
        if isinstance(self.previous_client_account_id, Unset):
            previous_client_account_id = UNSET
        else:
            previous_client_account_id = self.previous_client_account_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "changed": changed,
            }
        )
        if previous_client_account_id is not UNSET:
            field_dict["previousClientAccountId"] = previous_client_account_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        changed = d.pop("changed")

        def _parse_previous_client_account_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        previous_client_account_id = _parse_previous_client_account_id(
            d.pop("previousClientAccountId", UNSET)
        )

        observe_client_response = cls(
            changed=changed,
            previous_client_account_id=previous_client_account_id,
        )

        observe_client_response.additional_properties = d
        return observe_client_response

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
