from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.breakdown import Breakdown
    from ..models.report_by_agent import ReportByAgent
    from ..models.report_by_model import ReportByModel
    from ..models.report_by_session import ReportBySession


T = TypeVar("T", bound="Report")


@_attrs_define
class Report:
    """
    Attributes:
        by_agent (ReportByAgent):
        by_model (ReportByModel):
        by_session (ReportBySession):
        total (Breakdown): Seed 003 §6.5 `CostBreakdown`, with the cache tokens beside it. `totalTokens` counts every
            token: input, output, cache read and write, and usage reported without a split.
        unpriced_models (list[str]): Models seen with no price: their tokens are counted, their cost is 0.
    """

    by_agent: ReportByAgent
    by_model: ReportByModel
    by_session: ReportBySession
    total: Breakdown
    unpriced_models: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by_agent = self.by_agent.to_dict()

        by_model = self.by_model.to_dict()

        by_session = self.by_session.to_dict()

        total = self.total.to_dict()

        unpriced_models = self.unpriced_models

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "byAgent": by_agent,
                "byModel": by_model,
                "bySession": by_session,
                "total": total,
                "unpricedModels": unpriced_models,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.breakdown import Breakdown
        from ..models.report_by_agent import ReportByAgent
        from ..models.report_by_model import ReportByModel
        from ..models.report_by_session import ReportBySession

        d = dict(src_dict)
        by_agent = ReportByAgent.from_dict(d.pop("byAgent"))

        by_model = ReportByModel.from_dict(d.pop("byModel"))

        by_session = ReportBySession.from_dict(d.pop("bySession"))

        total = Breakdown.from_dict(d.pop("total"))

        unpriced_models = cast(list[str], d.pop("unpricedModels"))

        report = cls(
            by_agent=by_agent,
            by_model=by_model,
            by_session=by_session,
            total=total,
            unpriced_models=unpriced_models,
        )

        report.additional_properties = d
        return report

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
