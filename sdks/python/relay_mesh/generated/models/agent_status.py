from typing import Literal

AgentStatus = Literal[
    "active",
    "blocked",
    "failed",
    "idle",
    "offline",
    "paused",
    "released",
    "releasing",
    "starting",
    "waiting",
]

AGENT_STATUS_VALUES: set[AgentStatus] = {
    "active",
    "blocked",
    "failed",
    "idle",
    "offline",
    "paused",
    "released",
    "releasing",
    "starting",
    "waiting",
}


def check_agent_status(value: str) -> AgentStatus:
    if value in AGENT_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {AGENT_STATUS_VALUES!r}"
    )
