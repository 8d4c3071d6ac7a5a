from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.pipeline_step import PipelineStep


T = TypeVar("T", bound="Compress")


@_attrs_define
class Compress:
    """`POST /sessions/{id}/compress`.

    Attributes:
        pipeline (list[PipelineStep]): 1 to 20 steps.
    """

    pipeline: list[PipelineStep]

    def to_dict(self) -> dict[str, Any]:
        pipeline = []
        for pipeline_item_data in self.pipeline:
            pipeline_item = pipeline_item_data.to_dict()
            pipeline.append(pipeline_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "pipeline": pipeline,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.pipeline_step import PipelineStep

        d = dict(src_dict)
        pipeline = []
        _pipeline = d.pop("pipeline")
        for pipeline_item_data in _pipeline:
            pipeline_item = PipelineStep.from_dict(pipeline_item_data)

            pipeline.append(pipeline_item)

        compress = cls(
            pipeline=pipeline,
        )

        return compress
