from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.approval_policy import ApprovalPolicy, check_approval_policy
from ..types import UNSET, Unset

T = TypeVar("T", bound="SessionPatch")


@_attrs_define
class SessionPatch:
    """The body of `PATCH /sessions/{id}`: `session.update` without `sessionId`, which is the
    path's. An explicit `null` clears `approvalPolicyOverride` or `executionTargetId`; an absent
    key leaves it alone. (The handler reads it as the contract's `UpdateRequest`, which keeps
    the null/absent difference; this type is its documented shape.)

        Attributes:
            approval_policy_override (ApprovalPolicy | None | Unset):
            execution_target_id (None | str | Unset):
            summary (None | str | Unset):
            title (None | str | Unset):
    """

    approval_policy_override: ApprovalPolicy | None | Unset = UNSET
    execution_target_id: None | str | Unset = UNSET
    summary: None | str | Unset = UNSET
    title: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        approval_policy_override: None | str | Unset
        if isinstance(self.approval_policy_override, Unset):
            approval_policy_override = UNSET
        elif isinstance(self.approval_policy_override, str):
            approval_policy_override = self.approval_policy_override
        else:
            approval_policy_override = self.approval_policy_override

        execution_target_id: None | str | Unset
        if isinstance(self.execution_target_id, Unset):
            execution_target_id = UNSET
        else:
            execution_target_id = self.execution_target_id

        summary: None | str | Unset
        if isinstance(self.summary, Unset):
            summary = UNSET
        else:
            summary = self.summary

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if approval_policy_override is not UNSET:
            field_dict["approvalPolicyOverride"] = approval_policy_override
        if execution_target_id is not UNSET:
            field_dict["executionTargetId"] = execution_target_id
        if summary is not UNSET:
            field_dict["summary"] = summary
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_approval_policy_override(
            data: object,
        ) -> ApprovalPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                approval_policy_override_type_1 = check_approval_policy(data)

                return approval_policy_override_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ApprovalPolicy | None | Unset, data)

        approval_policy_override = _parse_approval_policy_override(
            d.pop("approvalPolicyOverride", UNSET)
        )

        def _parse_execution_target_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        execution_target_id = _parse_execution_target_id(
            d.pop("executionTargetId", UNSET)
        )

        def _parse_summary(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        summary = _parse_summary(d.pop("summary", UNSET))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        session_patch = cls(
            approval_policy_override=approval_policy_override,
            execution_target_id=execution_target_id,
            summary=summary,
            title=title,
        )

        return session_patch
