from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.delivery_policy import DeliveryPolicy


T = TypeVar("T", bound="Workspace")


@_attrs_define
class Workspace:
    """
    Attributes:
        created_at (int):
        name (str): Letters, digits, `-` and `_` (it is a NATS subject token): `acme`, `team-7`.
        created_by (None | str | Unset):
        delivery_policy (DeliveryPolicy | None | Unset):
        display_name (None | str | Unset):
    """

    created_at: int
    name: str
    created_by: None | str | Unset = UNSET
    delivery_policy: DeliveryPolicy | None | Unset = UNSET
    display_name: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.delivery_policy import DeliveryPolicy

        created_at = self.created_at

        name = self.name

        created_by: None | str | Unset
        if isinstance(self.created_by, Unset):
            created_by = UNSET
        else:
            created_by = self.created_by

        delivery_policy: dict[str, Any] | None | Unset
        if isinstance(self.delivery_policy, Unset):
            delivery_policy = UNSET
        elif isinstance(self.delivery_policy, DeliveryPolicy):
            delivery_policy = self.delivery_policy.to_dict()
        else:
            delivery_policy = self.delivery_policy

        display_name: None | str | Unset
        if isinstance(self.display_name, Unset):
            display_name = UNSET
        else:
            display_name = self.display_name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "createdAt": created_at,
                "name": name,
            }
        )
        if created_by is not UNSET:
            field_dict["createdBy"] = created_by
        if delivery_policy is not UNSET:
            field_dict["deliveryPolicy"] = delivery_policy
        if display_name is not UNSET:
            field_dict["displayName"] = display_name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.delivery_policy import DeliveryPolicy

        d = dict(src_dict)
        created_at = d.pop("createdAt")

        name = d.pop("name")

        def _parse_created_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_by = _parse_created_by(d.pop("createdBy", UNSET))

        def _parse_delivery_policy(data: object) -> DeliveryPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                delivery_policy_type_1 = DeliveryPolicy.from_dict(data)

                return delivery_policy_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DeliveryPolicy | None | Unset, data)

        delivery_policy = _parse_delivery_policy(d.pop("deliveryPolicy", UNSET))

        def _parse_display_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        display_name = _parse_display_name(d.pop("displayName", UNSET))

        workspace = cls(
            created_at=created_at,
            name=name,
            created_by=created_by,
            delivery_policy=delivery_policy,
            display_name=display_name,
        )

        workspace.additional_properties = d
        return workspace

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
