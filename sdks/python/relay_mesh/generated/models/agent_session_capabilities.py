from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.action_capabilities import ActionCapabilities
    from ..models.delivery_capabilities import DeliveryCapabilities
    from ..models.event_capabilities import EventCapabilities
    from ..models.lifecycle_capabilities import LifecycleCapabilities
    from ..models.messaging_capabilities import MessagingCapabilities


T = TypeVar("T", bound="AgentSessionCapabilities")


@_attrs_define
class AgentSessionCapabilities:
    """What one attached agent session can receive, emit, invoke, expose and release (seed 000).

    Attributes:
        delivery (DeliveryCapabilities):
        events (EventCapabilities):
        lifecycle (LifecycleCapabilities):
        messaging (MessagingCapabilities):
        actions (ActionCapabilities | None | Unset):
    """

    delivery: DeliveryCapabilities
    events: EventCapabilities
    lifecycle: LifecycleCapabilities
    messaging: MessagingCapabilities
    actions: ActionCapabilities | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.action_capabilities import ActionCapabilities

        delivery = self.delivery.to_dict()

        events = self.events.to_dict()

        lifecycle = self.lifecycle.to_dict()

        messaging = self.messaging.to_dict()

        actions: dict[str, Any] | None | Unset
        if isinstance(self.actions, Unset):
            actions = UNSET
        elif isinstance(self.actions, ActionCapabilities):
            actions = self.actions.to_dict()
        else:
            actions = self.actions

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "delivery": delivery,
                "events": events,
                "lifecycle": lifecycle,
                "messaging": messaging,
            }
        )
        if actions is not UNSET:
            field_dict["actions"] = actions

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.action_capabilities import ActionCapabilities
        from ..models.delivery_capabilities import DeliveryCapabilities
        from ..models.event_capabilities import EventCapabilities
        from ..models.lifecycle_capabilities import LifecycleCapabilities
        from ..models.messaging_capabilities import MessagingCapabilities

        d = dict(src_dict)
        delivery = DeliveryCapabilities.from_dict(d.pop("delivery"))

        events = EventCapabilities.from_dict(d.pop("events"))

        lifecycle = LifecycleCapabilities.from_dict(d.pop("lifecycle"))

        messaging = MessagingCapabilities.from_dict(d.pop("messaging"))

        def _parse_actions(data: object) -> ActionCapabilities | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                actions_type_1 = ActionCapabilities.from_dict(data)

                return actions_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ActionCapabilities | None | Unset, data)

        actions = _parse_actions(d.pop("actions", UNSET))

        agent_session_capabilities = cls(
            delivery=delivery,
            events=events,
            lifecycle=lifecycle,
            messaging=messaging,
            actions=actions,
        )

        return agent_session_capabilities
