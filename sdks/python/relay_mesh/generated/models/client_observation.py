from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.client_observation_payload_type_0 import ClientObservationPayloadType0


T = TypeVar("T", bound="ClientObservation")


@_attrs_define
class ClientObservation:
    """`POST /sessions/{id}/client`.

    Attributes:
        client_account_id (str):
        client_id (str):
        kind (str):
        source (str):
        payload (ClientObservationPayloadType0 | None | Unset):
    """

    client_account_id: str
    client_id: str
    kind: str
    source: str
    payload: ClientObservationPayloadType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.client_observation_payload_type_0 import (
            ClientObservationPayloadType0,
        )

        client_account_id = self.client_account_id

        client_id = self.client_id

        kind = self.kind

        source = self.source

        payload: dict[str, Any] | None | Unset
        if isinstance(self.payload, Unset):
            payload = UNSET
        elif isinstance(self.payload, ClientObservationPayloadType0):
            payload = self.payload.to_dict()
        else:
            payload = self.payload

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "clientAccountId": client_account_id,
                "clientId": client_id,
                "kind": kind,
                "source": source,
            }
        )
        if payload is not UNSET:
            field_dict["payload"] = payload

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.client_observation_payload_type_0 import (
            ClientObservationPayloadType0,
        )

        d = dict(src_dict)
        client_account_id = d.pop("clientAccountId")

        client_id = d.pop("clientId")

        kind = d.pop("kind")

        source = d.pop("source")

        def _parse_payload(
            data: object,
        ) -> ClientObservationPayloadType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                payload_type_0 = ClientObservationPayloadType0.from_dict(data)

                return payload_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ClientObservationPayloadType0 | None | Unset, data)

        payload = _parse_payload(d.pop("payload", UNSET))

        client_observation = cls(
            client_account_id=client_account_id,
            client_id=client_id,
            kind=kind,
            source=source,
            payload=payload,
        )

        return client_observation
