from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.proposal_status import ProposalStatus, check_proposal_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.proposal_tally import ProposalTally
    from ..models.vote import Vote
    from ..models.voter import Voter


T = TypeVar("T", bound="Proposal")


@_attrs_define
class Proposal:
    """A proposal, open or decided.

    Attributes:
        created_at (int):
        deadline (int):
        options (list[str]):
        proposal_id (str):
        proposer (str): Who proposed it: `@handle`, `key:<id>` or `service:<name>`.
        question (str):
        quorum (int):
        status (ProposalStatus):
        tally (ProposalTally): Votes per option, every option listed.
        to (str): Where it was put: `#ops` or `@a,@b`.
        voters (list[Voter]):
        votes (list[Vote]):
        message_id (None | str | Unset): The relay message that asked the voters.
        outcome (None | str | Unset): The option that reached the quorum.
        reason (None | str | Unset): Why it ended as it did.
        resolved_at (int | None | Unset):
    """

    created_at: int
    deadline: int
    options: list[str]
    proposal_id: str
    proposer: str
    question: str
    quorum: int
    status: ProposalStatus
    tally: ProposalTally
    to: str
    voters: list[Voter]
    votes: list[Vote]
    message_id: None | str | Unset = UNSET
    outcome: None | str | Unset = UNSET
    reason: None | str | Unset = UNSET
    resolved_at: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        deadline = self.deadline

        options = self.options

        proposal_id = self.proposal_id

        proposer = self.proposer

        question = self.question

        quorum = self.quorum

        status: str = self.status

        tally = self.tally.to_dict()

        to = self.to

        voters = []
        for voters_item_data in self.voters:
            voters_item = voters_item_data.to_dict()
            voters.append(voters_item)

        votes = []
        for votes_item_data in self.votes:
            votes_item = votes_item_data.to_dict()
            votes.append(votes_item)

        message_id: None | str | Unset
        if isinstance(self.message_id, Unset):
            message_id = UNSET
        else:
            message_id = self.message_id

        outcome: None | str | Unset
        if isinstance(self.outcome, Unset):
            outcome = UNSET
        else:
            outcome = self.outcome

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        resolved_at: int | None | Unset
        if isinstance(self.resolved_at, Unset):
            resolved_at = UNSET
        else:
            resolved_at = self.resolved_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "createdAt": created_at,
                "deadline": deadline,
                "options": options,
                "proposalId": proposal_id,
                "proposer": proposer,
                "question": question,
                "quorum": quorum,
                "status": status,
                "tally": tally,
                "to": to,
                "voters": voters,
                "votes": votes,
            }
        )
        if message_id is not UNSET:
            field_dict["messageId"] = message_id
        if outcome is not UNSET:
            field_dict["outcome"] = outcome
        if reason is not UNSET:
            field_dict["reason"] = reason
        if resolved_at is not UNSET:
            field_dict["resolvedAt"] = resolved_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.proposal_tally import ProposalTally
        from ..models.vote import Vote
        from ..models.voter import Voter

        d = dict(src_dict)
        created_at = d.pop("createdAt")

        deadline = d.pop("deadline")

        options = cast(list[str], d.pop("options"))

        proposal_id = d.pop("proposalId")

        proposer = d.pop("proposer")

        question = d.pop("question")

        quorum = d.pop("quorum")

        status = check_proposal_status(d.pop("status"))

        tally = ProposalTally.from_dict(d.pop("tally"))

        to = d.pop("to")

        voters = []
        _voters = d.pop("voters")
        for voters_item_data in _voters:
            voters_item = Voter.from_dict(voters_item_data)

            voters.append(voters_item)

        votes = []
        _votes = d.pop("votes")
        for votes_item_data in _votes:
            votes_item = Vote.from_dict(votes_item_data)

            votes.append(votes_item)

        def _parse_message_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message_id = _parse_message_id(d.pop("messageId", UNSET))

        def _parse_outcome(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        outcome = _parse_outcome(d.pop("outcome", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        def _parse_resolved_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        resolved_at = _parse_resolved_at(d.pop("resolvedAt", UNSET))

        proposal = cls(
            created_at=created_at,
            deadline=deadline,
            options=options,
            proposal_id=proposal_id,
            proposer=proposer,
            question=question,
            quorum=quorum,
            status=status,
            tally=tally,
            to=to,
            voters=voters,
            votes=votes,
            message_id=message_id,
            outcome=outcome,
            reason=reason,
            resolved_at=resolved_at,
        )

        proposal.additional_properties = d
        return proposal

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
