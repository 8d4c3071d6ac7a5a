from typing import Literal

QuestionStatus = Literal["answered", "expired", "pending"]

QUESTION_STATUS_VALUES: set[QuestionStatus] = {
    "answered",
    "expired",
    "pending",
}


def check_question_status(value: str) -> QuestionStatus:
    if value in QUESTION_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {QUESTION_STATUS_VALUES!r}"
    )
