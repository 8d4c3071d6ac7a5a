from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ag_ui_capabilities_custom_type_0 import AgUiCapabilitiesCustomType0
    from ..models.ag_ui_capabilities_execution_type_0 import (
        AgUiCapabilitiesExecutionType0,
    )
    from ..models.ag_ui_capabilities_human_in_the_loop_type_0 import (
        AgUiCapabilitiesHumanInTheLoopType0,
    )
    from ..models.ag_ui_capabilities_identity_type_0 import (
        AgUiCapabilitiesIdentityType0,
    )
    from ..models.ag_ui_capabilities_multi_agent_type_0 import (
        AgUiCapabilitiesMultiAgentType0,
    )
    from ..models.ag_ui_capabilities_multimodal_type_0 import (
        AgUiCapabilitiesMultimodalType0,
    )
    from ..models.ag_ui_capabilities_output_type_0 import AgUiCapabilitiesOutputType0
    from ..models.ag_ui_capabilities_reasoning_type_0 import (
        AgUiCapabilitiesReasoningType0,
    )
    from ..models.ag_ui_capabilities_state_type_0 import AgUiCapabilitiesStateType0
    from ..models.ag_ui_capabilities_tools_type_0 import AgUiCapabilitiesToolsType0
    from ..models.ag_ui_capabilities_transport_type_0 import (
        AgUiCapabilitiesTransportType0,
    )


T = TypeVar("T", bound="AgUiCapabilities")


@_attrs_define
class AgUiCapabilities:
    """AG-UI `AgentCapabilities` (seed 004): discovery only, absent means unknown. Known categories
    must be objects; their contents are the agent's to describe and are kept as declared.

        Attributes:
            custom (AgUiCapabilitiesCustomType0 | None | Unset):
            execution (AgUiCapabilitiesExecutionType0 | None | Unset):
            human_in_the_loop (AgUiCapabilitiesHumanInTheLoopType0 | None | Unset):
            identity (AgUiCapabilitiesIdentityType0 | None | Unset):
            multi_agent (AgUiCapabilitiesMultiAgentType0 | None | Unset):
            multimodal (AgUiCapabilitiesMultimodalType0 | None | Unset):
            output (AgUiCapabilitiesOutputType0 | None | Unset):
            reasoning (AgUiCapabilitiesReasoningType0 | None | Unset):
            state (AgUiCapabilitiesStateType0 | None | Unset):
            tools (AgUiCapabilitiesToolsType0 | None | Unset):
            transport (AgUiCapabilitiesTransportType0 | None | Unset):
    """

    custom: AgUiCapabilitiesCustomType0 | None | Unset = UNSET
    execution: AgUiCapabilitiesExecutionType0 | None | Unset = UNSET
    human_in_the_loop: AgUiCapabilitiesHumanInTheLoopType0 | None | Unset = UNSET
    identity: AgUiCapabilitiesIdentityType0 | None | Unset = UNSET
    multi_agent: AgUiCapabilitiesMultiAgentType0 | None | Unset = UNSET
    multimodal: AgUiCapabilitiesMultimodalType0 | None | Unset = UNSET
    output: AgUiCapabilitiesOutputType0 | None | Unset = UNSET
    reasoning: AgUiCapabilitiesReasoningType0 | None | Unset = UNSET
    state: AgUiCapabilitiesStateType0 | None | Unset = UNSET
    tools: AgUiCapabilitiesToolsType0 | None | Unset = UNSET
    transport: AgUiCapabilitiesTransportType0 | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.ag_ui_capabilities_custom_type_0 import (
            AgUiCapabilitiesCustomType0,
        )
        from ..models.ag_ui_capabilities_execution_type_0 import (
            AgUiCapabilitiesExecutionType0,
        )
        from ..models.ag_ui_capabilities_human_in_the_loop_type_0 import (
            AgUiCapabilitiesHumanInTheLoopType0,
        )
        from ..models.ag_ui_capabilities_identity_type_0 import (
            AgUiCapabilitiesIdentityType0,
        )
        from ..models.ag_ui_capabilities_multi_agent_type_0 import (
            AgUiCapabilitiesMultiAgentType0,
        )
        from ..models.ag_ui_capabilities_multimodal_type_0 import (
            AgUiCapabilitiesMultimodalType0,
        )
        from ..models.ag_ui_capabilities_output_type_0 import (
            AgUiCapabilitiesOutputType0,
        )
        from ..models.ag_ui_capabilities_reasoning_type_0 import (
            AgUiCapabilitiesReasoningType0,
        )
        from ..models.ag_ui_capabilities_state_type_0 import AgUiCapabilitiesStateType0
        from ..models.ag_ui_capabilities_tools_type_0 import AgUiCapabilitiesToolsType0
        from ..models.ag_ui_capabilities_transport_type_0 import (
            AgUiCapabilitiesTransportType0,
        )

        custom: dict[str, Any] | None | Unset
        if isinstance(self.custom, Unset):
            custom = UNSET
        elif isinstance(self.custom, AgUiCapabilitiesCustomType0):
            custom = self.custom.to_dict()
        else:
            custom = self.custom

        execution: dict[str, Any] | None | Unset
        if isinstance(self.execution, Unset):
            execution = UNSET
        elif isinstance(self.execution, AgUiCapabilitiesExecutionType0):
            execution = self.execution.to_dict()
        else:
            execution = self.execution

        human_in_the_loop: dict[str, Any] | None | Unset
        if isinstance(self.human_in_the_loop, Unset):
            human_in_the_loop = UNSET
        elif isinstance(self.human_in_the_loop, AgUiCapabilitiesHumanInTheLoopType0):
            human_in_the_loop = self.human_in_the_loop.to_dict()
        else:
            human_in_the_loop = self.human_in_the_loop

        identity: dict[str, Any] | None | Unset
        if isinstance(self.identity, Unset):
            identity = UNSET
        elif isinstance(self.identity, AgUiCapabilitiesIdentityType0):
            identity = self.identity.to_dict()
        else:
            identity = self.identity

        multi_agent: dict[str, Any] | None | Unset
        if isinstance(self.multi_agent, Unset):
            multi_agent = UNSET
        elif isinstance(self.multi_agent, AgUiCapabilitiesMultiAgentType0):
            multi_agent = self.multi_agent.to_dict()
        else:
            multi_agent = self.multi_agent

        multimodal: dict[str, Any] | None | Unset
        if isinstance(self.multimodal, Unset):
            multimodal = UNSET
        elif isinstance(self.multimodal, AgUiCapabilitiesMultimodalType0):
            multimodal = self.multimodal.to_dict()
        else:
            multimodal = self.multimodal

        output: dict[str, Any] | None | Unset
        if isinstance(self.output, Unset):
            output = UNSET
        elif isinstance(self.output, AgUiCapabilitiesOutputType0):
            output = self.output.to_dict()
        else:
            output = self.output

        reasoning: dict[str, Any] | None | Unset
        if isinstance(self.reasoning, Unset):
            reasoning = UNSET
        elif isinstance(self.reasoning, AgUiCapabilitiesReasoningType0):
            reasoning = self.reasoning.to_dict()
        else:
            reasoning = self.reasoning

        state: dict[str, Any] | None | Unset
        if isinstance(self.state, Unset):
            state = UNSET
        elif isinstance(self.state, AgUiCapabilitiesStateType0):
            state = self.state.to_dict()
        else:
            state = self.state

        tools: dict[str, Any] | None | Unset
        if isinstance(self.tools, Unset):
            tools = UNSET
        elif isinstance(self.tools, AgUiCapabilitiesToolsType0):
            tools = self.tools.to_dict()
        else:
            tools = self.tools

        transport: dict[str, Any] | None | Unset
        if isinstance(self.transport, Unset):
            transport = UNSET
        elif isinstance(self.transport, AgUiCapabilitiesTransportType0):
            transport = self.transport.to_dict()
        else:
            transport = self.transport

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if custom is not UNSET:
            field_dict["custom"] = custom
        if execution is not UNSET:
            field_dict["execution"] = execution
        if human_in_the_loop is not UNSET:
            field_dict["humanInTheLoop"] = human_in_the_loop
        if identity is not UNSET:
            field_dict["identity"] = identity
        if multi_agent is not UNSET:
            field_dict["multiAgent"] = multi_agent
        if multimodal is not UNSET:
            field_dict["multimodal"] = multimodal
        if output is not UNSET:
            field_dict["output"] = output
        if reasoning is not UNSET:
            field_dict["reasoning"] = reasoning
        if state is not UNSET:
            field_dict["state"] = state
        if tools is not UNSET:
            field_dict["tools"] = tools
        if transport is not UNSET:
            field_dict["transport"] = transport

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ag_ui_capabilities_custom_type_0 import (
            AgUiCapabilitiesCustomType0,
        )
        from ..models.ag_ui_capabilities_execution_type_0 import (
            AgUiCapabilitiesExecutionType0,
        )
        from ..models.ag_ui_capabilities_human_in_the_loop_type_0 import (
            AgUiCapabilitiesHumanInTheLoopType0,
        )
        from ..models.ag_ui_capabilities_identity_type_0 import (
            AgUiCapabilitiesIdentityType0,
        )
        from ..models.ag_ui_capabilities_multi_agent_type_0 import (
            AgUiCapabilitiesMultiAgentType0,
        )
        from ..models.ag_ui_capabilities_multimodal_type_0 import (
            AgUiCapabilitiesMultimodalType0,
        )
        from ..models.ag_ui_capabilities_output_type_0 import (
            AgUiCapabilitiesOutputType0,
        )
        from ..models.ag_ui_capabilities_reasoning_type_0 import (
            AgUiCapabilitiesReasoningType0,
        )
        from ..models.ag_ui_capabilities_state_type_0 import AgUiCapabilitiesStateType0
        from ..models.ag_ui_capabilities_tools_type_0 import AgUiCapabilitiesToolsType0
        from ..models.ag_ui_capabilities_transport_type_0 import (
            AgUiCapabilitiesTransportType0,
        )

        d = dict(src_dict)

        def _parse_custom(data: object) -> AgUiCapabilitiesCustomType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                custom_type_0 = AgUiCapabilitiesCustomType0.from_dict(data)

                return custom_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesCustomType0 | None | Unset, data)

        custom = _parse_custom(d.pop("custom", UNSET))

        def _parse_execution(
            data: object,
        ) -> AgUiCapabilitiesExecutionType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                execution_type_0 = AgUiCapabilitiesExecutionType0.from_dict(data)

                return execution_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesExecutionType0 | None | Unset, data)

        execution = _parse_execution(d.pop("execution", UNSET))

        def _parse_human_in_the_loop(
            data: object,
        ) -> AgUiCapabilitiesHumanInTheLoopType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                human_in_the_loop_type_0 = (
                    AgUiCapabilitiesHumanInTheLoopType0.from_dict(data)
                )

                return human_in_the_loop_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesHumanInTheLoopType0 | None | Unset, data)

        human_in_the_loop = _parse_human_in_the_loop(d.pop("humanInTheLoop", UNSET))

        def _parse_identity(
            data: object,
        ) -> AgUiCapabilitiesIdentityType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                identity_type_0 = AgUiCapabilitiesIdentityType0.from_dict(data)

                return identity_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesIdentityType0 | None | Unset, data)

        identity = _parse_identity(d.pop("identity", UNSET))

        def _parse_multi_agent(
            data: object,
        ) -> AgUiCapabilitiesMultiAgentType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                multi_agent_type_0 = AgUiCapabilitiesMultiAgentType0.from_dict(data)

                return multi_agent_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesMultiAgentType0 | None | Unset, data)

        multi_agent = _parse_multi_agent(d.pop("multiAgent", UNSET))

        def _parse_multimodal(
            data: object,
        ) -> AgUiCapabilitiesMultimodalType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                multimodal_type_0 = AgUiCapabilitiesMultimodalType0.from_dict(data)

                return multimodal_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesMultimodalType0 | None | Unset, data)

        multimodal = _parse_multimodal(d.pop("multimodal", UNSET))

        def _parse_output(data: object) -> AgUiCapabilitiesOutputType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                output_type_0 = AgUiCapabilitiesOutputType0.from_dict(data)

                return output_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesOutputType0 | None | Unset, data)

        output = _parse_output(d.pop("output", UNSET))

        def _parse_reasoning(
            data: object,
        ) -> AgUiCapabilitiesReasoningType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                reasoning_type_0 = AgUiCapabilitiesReasoningType0.from_dict(data)

                return reasoning_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesReasoningType0 | None | Unset, data)

        reasoning = _parse_reasoning(d.pop("reasoning", UNSET))

        def _parse_state(data: object) -> AgUiCapabilitiesStateType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                state_type_0 = AgUiCapabilitiesStateType0.from_dict(data)

                return state_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesStateType0 | None | Unset, data)

        state = _parse_state(d.pop("state", UNSET))

        def _parse_tools(data: object) -> AgUiCapabilitiesToolsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                tools_type_0 = AgUiCapabilitiesToolsType0.from_dict(data)

                return tools_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesToolsType0 | None | Unset, data)

        tools = _parse_tools(d.pop("tools", UNSET))

        def _parse_transport(
            data: object,
        ) -> AgUiCapabilitiesTransportType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                transport_type_0 = AgUiCapabilitiesTransportType0.from_dict(data)

                return transport_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AgUiCapabilitiesTransportType0 | None | Unset, data)

        transport = _parse_transport(d.pop("transport", UNSET))

        ag_ui_capabilities = cls(
            custom=custom,
            execution=execution,
            human_in_the_loop=human_in_the_loop,
            identity=identity,
            multi_agent=multi_agent,
            multimodal=multimodal,
            output=output,
            reasoning=reasoning,
            state=state,
            tools=tools,
            transport=transport,
        )

        return ag_ui_capabilities
