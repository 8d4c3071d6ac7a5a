from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.key_role import KeyRole, check_key_role
from ..types import UNSET, Unset

T = TypeVar("T", bound="ApiKey")


@_attrs_define
class ApiKey:
    """A key as listed: never its token.

    Attributes:
        created_at (int):
        key_id (str):
        name (str):
        role (KeyRole): What a key may do at the gateway.
        workspace (str):
        created_by (None | str | Unset): Who made it (`admin:<keyId>`, `service:admin` for relayctl).
        revoked_at (int | None | Unset):
    """

    created_at: int
    key_id: str
    name: str
    role: KeyRole
    workspace: str
    created_by: None | str | Unset = UNSET
    revoked_at: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        key_id = self.key_id

        name = self.name

        role: str = self.role

        workspace = self.workspace

        created_by: None | str | Unset
        if isinstance(self.created_by, Unset):
            created_by = UNSET
        else:
            created_by = self.created_by

        revoked_at: int | None | Unset
        if isinstance(self.revoked_at, Unset):
            revoked_at = UNSET
        else:
            revoked_at = self.revoked_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "createdAt": created_at,
                "keyId": key_id,
                "name": name,
                "role": role,
                "workspace": workspace,
            }
        )
        if created_by is not UNSET:
            field_dict["createdBy"] = created_by
        if revoked_at is not UNSET:
            field_dict["revokedAt"] = revoked_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = d.pop("createdAt")

        key_id = d.pop("keyId")

        name = d.pop("name")

        role = check_key_role(d.pop("role"))

        workspace = d.pop("workspace")

        def _parse_created_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_by = _parse_created_by(d.pop("createdBy", UNSET))

        def _parse_revoked_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        revoked_at = _parse_revoked_at(d.pop("revokedAt", UNSET))

        api_key = cls(
            created_at=created_at,
            key_id=key_id,
            name=name,
            role=role,
            workspace=workspace,
            created_by=created_by,
            revoked_at=revoked_at,
        )

        api_key.additional_properties = d
        return api_key

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
