from typing import Literal

AgentRole = Literal["lead", "member"]

AGENT_ROLE_VALUES: set[AgentRole] = {
    "lead",
    "member",
}


def check_agent_role(value: str) -> AgentRole:
    if value in AGENT_ROLE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {AGENT_ROLE_VALUES!r}"
    )
