from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ProposeRequest")


@_attrs_define
class ProposeRequest:
    """`consensus.propose`.

    Attributes:
        options (list[str]):
        question (str):
        to (list[str] | str): Where a message goes: `"@bob"`, `"#ops"`, or `["@bob", "@carol"]` (a group DM).
        proposal_id (None | str | Unset): Proposing again with the same id answers with the stored proposal.
        quorum (int | None | Unset): Votes one option needs to win, at most the number of voters; a majority of the
            voters
            by default.
        timeout_ms (float | None | Unset): How long voting stays open, in ms (default one hour, at most 7 days).
    """

    options: list[str]
    question: str
    to: list[str] | str
    proposal_id: None | str | Unset = UNSET
    quorum: int | None | Unset = UNSET
    timeout_ms: float | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        options = self.options

        question = self.question

        to: list[str] | str
        if isinstance(self.to, list):
            to = self.to

        else:
            to = self.to

        proposal_id: None | str | Unset
        if isinstance(self.proposal_id, Unset):
            proposal_id = UNSET
        else:
            proposal_id = self.proposal_id

        quorum: int | None | Unset
        if isinstance(self.quorum, Unset):
            quorum = UNSET
        else:
            quorum = self.quorum

        timeout_ms: float | None | Unset
        if isinstance(self.timeout_ms, Unset):
            timeout_ms = UNSET
        else:
            timeout_ms = self.timeout_ms

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "options": options,
                "question": question,
                "to": to,
            }
        )
        if proposal_id is not UNSET:
            field_dict["proposalId"] = proposal_id
        if quorum is not UNSET:
            field_dict["quorum"] = quorum
        if timeout_ms is not UNSET:
            field_dict["timeoutMs"] = timeout_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        options = cast(list[str], d.pop("options"))

        question = d.pop("question")

        def _parse_to(data: object) -> list[str] | str:
            try:
                if not isinstance(data, list):
                    raise TypeError()
                componentsschemas_to_type_1 = cast(list[str], data)

                return componentsschemas_to_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | str, data)

        to = _parse_to(d.pop("to"))

        def _parse_proposal_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        proposal_id = _parse_proposal_id(d.pop("proposalId", UNSET))

        def _parse_quorum(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        quorum = _parse_quorum(d.pop("quorum", UNSET))

        def _parse_timeout_ms(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        timeout_ms = _parse_timeout_ms(d.pop("timeoutMs", UNSET))

        propose_request = cls(
            options=options,
            question=question,
            to=to,
            proposal_id=proposal_id,
            quorum=quorum,
            timeout_ms=timeout_ms,
        )

        return propose_request
