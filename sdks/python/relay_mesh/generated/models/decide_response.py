from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.permission import Permission


T = TypeVar("T", bound="DecideResponse")


@_attrs_define
class DecideResponse:
    """
    Attributes:
        harness_notified (bool): Whether the harness that asked took the decision (it may have gone away; the
            decision is stored either way).
        permission (Permission): A stored permission request, as `permission.get` and `permission.list` return it.
        success (bool):
    """

    harness_notified: bool
    permission: Permission
    success: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        harness_notified = self.harness_notified

        permission = self.permission.to_dict()

        success = self.success

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "harnessNotified": harness_notified,
                "permission": permission,
                "success": success,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.permission import Permission

        d = dict(src_dict)
        harness_notified = d.pop("harnessNotified")

        permission = Permission.from_dict(d.pop("permission"))

        success = d.pop("success")

        decide_response = cls(
            harness_notified=harness_notified,
            permission=permission,
            success=success,
        )

        decide_response.additional_properties = d
        return decide_response

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
