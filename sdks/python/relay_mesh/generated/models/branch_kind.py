from typing import Literal

BranchKind = Literal[
    "aside", "branch", "compress", "coordinator", "fork", "rewrite", "subagent"
]

BRANCH_KIND_VALUES: set[BranchKind] = {
    "aside",
    "branch",
    "compress",
    "coordinator",
    "fork",
    "rewrite",
    "subagent",
}


def check_branch_kind(value: str) -> BranchKind:
    if value in BRANCH_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {BRANCH_KIND_VALUES!r}"
    )
