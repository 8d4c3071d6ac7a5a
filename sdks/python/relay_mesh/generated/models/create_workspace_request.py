from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.delivery_policy import DeliveryPolicy


T = TypeVar("T", bound="CreateWorkspaceRequest")


@_attrs_define
class CreateWorkspaceRequest:
    """`workspace.create`.

    Attributes:
        name (str):
        delivery_policy (DeliveryPolicy | None | Unset):
        display_name (None | str | Unset):
    """

    name: str
    delivery_policy: DeliveryPolicy | None | Unset = UNSET
    display_name: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.delivery_policy import DeliveryPolicy

        name = self.name

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

        field_dict.update(
            {
                "name": name,
            }
        )
        if delivery_policy is not UNSET:
            field_dict["deliveryPolicy"] = delivery_policy
        if display_name is not UNSET:
            field_dict["displayName"] = display_name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.delivery_policy import DeliveryPolicy

        d = dict(src_dict)
        name = d.pop("name")

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

        create_workspace_request = cls(
            name=name,
            delivery_policy=delivery_policy,
            display_name=display_name,
        )

        return create_workspace_request
