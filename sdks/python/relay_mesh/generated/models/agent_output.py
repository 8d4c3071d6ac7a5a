from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.output_row import OutputRow


T = TypeVar("T", bound="AgentOutput")


@_attrs_define
class AgentOutput:
    """An agent's recent terminal output, oldest row first.

    Attributes:
        agent_id (str):
        rows (list[OutputRow]):
    """

    agent_id: str
    rows: list[OutputRow]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent_id = self.agent_id

        rows = []
        for rows_item_data in self.rows:
            rows_item = rows_item_data.to_dict()
            rows.append(rows_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agentId": agent_id,
                "rows": rows,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.output_row import OutputRow

        d = dict(src_dict)
        agent_id = d.pop("agentId")

        rows = []
        _rows = d.pop("rows")
        for rows_item_data in _rows:
            rows_item = OutputRow.from_dict(rows_item_data)

            rows.append(rows_item)

        agent_output = cls(
            agent_id=agent_id,
            rows=rows,
        )

        agent_output.additional_properties = d
        return agent_output

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
