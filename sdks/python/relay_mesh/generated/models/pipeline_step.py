from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.pipeline_step_options_type_0 import PipelineStepOptionsType0


T = TypeVar("T", bound="PipelineStep")


@_attrs_define
class PipelineStep:
    """One step of a compression pipeline (seed 002): an action id and its options.

    Attributes:
        action_id (str):
        options (None | PipelineStepOptionsType0 | Unset):
    """

    action_id: str
    options: None | PipelineStepOptionsType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.pipeline_step_options_type_0 import PipelineStepOptionsType0

        action_id = self.action_id

        options: dict[str, Any] | None | Unset
        if isinstance(self.options, Unset):
            options = UNSET
        elif isinstance(self.options, PipelineStepOptionsType0):
            options = self.options.to_dict()
        else:
            options = self.options

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "actionId": action_id,
            }
        )
        if options is not UNSET:
            field_dict["options"] = options

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.pipeline_step_options_type_0 import PipelineStepOptionsType0

        d = dict(src_dict)
        action_id = d.pop("actionId")

        def _parse_options(data: object) -> None | PipelineStepOptionsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                options_type_0 = PipelineStepOptionsType0.from_dict(data)

                return options_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PipelineStepOptionsType0 | Unset, data)

        options = _parse_options(d.pop("options", UNSET))

        pipeline_step = cls(
            action_id=action_id,
            options=options,
        )

        return pipeline_step
