from typing import Literal

StatusFilter = Literal["active", "all", "archived", "closed", "discovered"]

STATUS_FILTER_VALUES: set[StatusFilter] = {
    "active",
    "all",
    "archived",
    "closed",
    "discovered",
}


def check_status_filter(value: str) -> StatusFilter:
    if value in STATUS_FILTER_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {STATUS_FILTER_VALUES!r}"
    )
