from typing import Literal

ApprovalPolicy = Literal["always-ask", "full-access", "reject"]

APPROVAL_POLICY_VALUES: set[ApprovalPolicy] = {
    "always-ask",
    "full-access",
    "reject",
}


def check_approval_policy(value: str) -> ApprovalPolicy:
    if value in APPROVAL_POLICY_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {APPROVAL_POLICY_VALUES!r}"
    )
