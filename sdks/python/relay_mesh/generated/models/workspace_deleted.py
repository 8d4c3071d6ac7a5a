from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="WorkspaceDeleted")


@_attrs_define
class WorkspaceDeleted:
    """`workspace.delete`: what deleting it did.

    Attributes:
        deleted_at (int):
        keys_revoked (list[str]): The keys revoked with it (their streams end, schedules pause, webhooks stop).
        name (str):
    """

    deleted_at: int
    keys_revoked: list[str]
    name: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        deleted_at = self.deleted_at

        keys_revoked = self.keys_revoked

        name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "deletedAt": deleted_at,
                "keysRevoked": keys_revoked,
                "name": name,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        deleted_at = d.pop("deletedAt")

        keys_revoked = cast(list[str], d.pop("keysRevoked"))

        name = d.pop("name")

        workspace_deleted = cls(
            deleted_at=deleted_at,
            keys_revoked=keys_revoked,
            name=name,
        )

        workspace_deleted.additional_properties = d
        return workspace_deleted

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
