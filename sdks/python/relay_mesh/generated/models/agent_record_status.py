from typing import Literal

AgentRecordStatus = Literal["active", "dead", "disposed", "idle"]

AGENT_RECORD_STATUS_VALUES: set[AgentRecordStatus] = {
    "active",
    "dead",
    "disposed",
    "idle",
}


def check_agent_record_status(value: str) -> AgentRecordStatus:
    if value in AGENT_RECORD_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {AGENT_RECORD_STATUS_VALUES!r}"
    )
