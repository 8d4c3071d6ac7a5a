from typing import Literal

ProposalStatus = Literal["cancelled", "expired", "open", "resolved"]

PROPOSAL_STATUS_VALUES: set[ProposalStatus] = {
    "cancelled",
    "expired",
    "open",
    "resolved",
}


def check_proposal_status(value: str) -> ProposalStatus:
    if value in PROPOSAL_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PROPOSAL_STATUS_VALUES!r}"
    )
