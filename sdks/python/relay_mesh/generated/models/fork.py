from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.fork_kind import ForkKind, check_fork_kind
from ..types import UNSET, Unset

T = TypeVar("T", bound="Fork")


@_attrs_define
class Fork:
    """
    Attributes:
        branch_kind (ForkKind | None | Unset):
        from_message_id (None | str | Unset):
        name (None | str | Unset):
        target_working_directory (None | str | Unset):
    """

    branch_kind: ForkKind | None | Unset = UNSET
    from_message_id: None | str | Unset = UNSET
    name: None | str | Unset = UNSET
    target_working_directory: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        branch_kind: None | str | Unset
        if isinstance(self.branch_kind, Unset):
            branch_kind = UNSET
        elif isinstance(self.branch_kind, str):
            branch_kind = self.branch_kind
        else:
            branch_kind = self.branch_kind

        from_message_id: None | str | Unset
        if isinstance(self.from_message_id, Unset):
            from_message_id = UNSET
        else:
            from_message_id = self.from_message_id

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        target_working_directory: None | str | Unset
        if isinstance(self.target_working_directory, Unset):
            target_working_directory = UNSET
        else:
            target_working_directory = self.target_working_directory

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if branch_kind is not UNSET:
            field_dict["branchKind"] = branch_kind
        if from_message_id is not UNSET:
            field_dict["fromMessageId"] = from_message_id
        if name is not UNSET:
            field_dict["name"] = name
        if target_working_directory is not UNSET:
            field_dict["targetWorkingDirectory"] = target_working_directory

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_branch_kind(data: object) -> ForkKind | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                branch_kind_type_1 = check_fork_kind(data)

                return branch_kind_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ForkKind | None | Unset, data)

        branch_kind = _parse_branch_kind(d.pop("branchKind", UNSET))

        def _parse_from_message_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        from_message_id = _parse_from_message_id(d.pop("fromMessageId", UNSET))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_target_working_directory(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        target_working_directory = _parse_target_working_directory(
            d.pop("targetWorkingDirectory", UNSET)
        )

        fork = cls(
            branch_kind=branch_kind,
            from_message_id=from_message_id,
            name=name,
            target_working_directory=target_working_directory,
        )

        return fork
