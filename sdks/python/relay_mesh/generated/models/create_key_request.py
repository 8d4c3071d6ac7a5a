from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.key_role import KeyRole, check_key_role
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateKeyRequest")


@_attrs_define
class CreateKeyRequest:
    """`key.create`.

    Attributes:
        name (str): A label for people (1–100 characters, not blank).
        role (KeyRole): What a key may do at the gateway.
        workspace (None | str | Unset): The caller's workspace when absent; relayctl and admin keys of `default` may
            name another.
    """

    name: str
    role: KeyRole
    workspace: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        role: str = self.role

        workspace: None | str | Unset
        if isinstance(self.workspace, Unset):
            workspace = UNSET
        else:
            workspace = self.workspace

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "role": role,
            }
        )
        if workspace is not UNSET:
            field_dict["workspace"] = workspace

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        role = check_key_role(d.pop("role"))

        def _parse_workspace(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workspace = _parse_workspace(d.pop("workspace", UNSET))

        create_key_request = cls(
            name=name,
            role=role,
            workspace=workspace,
        )

        return create_key_request
