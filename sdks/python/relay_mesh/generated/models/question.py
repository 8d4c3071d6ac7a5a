from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.question_status import QuestionStatus, check_question_status
from ..types import UNSET, Unset

T = TypeVar("T", bound="Question")


@_attrs_define
class Question:
    """A stored question, as `question.get` and `question.list` return it.

    Attributes:
        agent_id (str):
        asked_at (int):
        options (list[str]):
        question (str):
        question_id (str):
        session_id (str):
        status (QuestionStatus):
        answer (None | str | Unset):
        answered_at (int | None | Unset):
        expires_at (int | None | Unset):
    """

    agent_id: str
    asked_at: int
    options: list[str]
    question: str
    question_id: str
    session_id: str
    status: QuestionStatus
    answer: None | str | Unset = UNSET
    answered_at: int | None | Unset = UNSET
    expires_at: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        asked_at = self.asked_at

        options = self.options

        question = self.question

        question_id = self.question_id

        session_id = self.session_id

        status: str = self.status

        answer: None | str | Unset
        if isinstance(self.answer, Unset):
            answer = UNSET
        else:
            answer = self.answer

        answered_at: int | None | Unset
        if isinstance(self.answered_at, Unset):
            answered_at = UNSET
        else:
            answered_at = self.answered_at

        expires_at: int | None | Unset
        if isinstance(self.expires_at, Unset):
            expires_at = UNSET
        else:
            expires_at = self.expires_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agentId": agent_id,
                "askedAt": asked_at,
                "options": options,
                "question": question,
                "questionId": question_id,
                "sessionId": session_id,
                "status": status,
            }
        )
        if answer is not UNSET:
            field_dict["answer"] = answer
        if answered_at is not UNSET:
            field_dict["answeredAt"] = answered_at
        if expires_at is not UNSET:
            field_dict["expiresAt"] = expires_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        agent_id = d.pop("agentId")

        asked_at = d.pop("askedAt")

        options = cast(list[str], d.pop("options"))

        question = d.pop("question")

        question_id = d.pop("questionId")

        session_id = d.pop("sessionId")

        status = check_question_status(d.pop("status"))

        def _parse_answer(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        answer = _parse_answer(d.pop("answer", UNSET))

        def _parse_answered_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        answered_at = _parse_answered_at(d.pop("answeredAt", UNSET))

        def _parse_expires_at(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expires_at = _parse_expires_at(d.pop("expiresAt", UNSET))

        question = cls(
            agent_id=agent_id,
            asked_at=asked_at,
            options=options,
            question=question,
            question_id=question_id,
            session_id=session_id,
            status=status,
            answer=answer,
            answered_at=answered_at,
            expires_at=expires_at,
        )

        question.additional_properties = d
        return question

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
