from typing import Literal

Risk = Literal["critical", "high", "low", "medium"]

RISK_VALUES: set[Risk] = {
    "critical",
    "high",
    "low",
    "medium",
}


def check_risk(value: str) -> Risk:
    if value in RISK_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {RISK_VALUES!r}")
