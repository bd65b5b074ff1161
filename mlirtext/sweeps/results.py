"""The statuses a sweep gives a test, how they rank, and one test's result."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: Best first. A test is worse than expected when its status ranks after the expected one;
#: `timeout` and `crash` (the test's child process ran over its limit or died) rank with a failure
#: to compile: nothing came out of it. `skip` (the suite could not try it here: a missing tool) is
#: compared with nothing but itself.
STATUSES = ("pass", "mismatch", "fail-run", "fail-compile", "timeout", "crash", "skip")
RANK = {"pass": 0, "mismatch": 1, "fail-run": 2, "fail-compile": 3, "timeout": 3, "crash": 3}


@dataclass
class Result:
    """One test's outcome. `test` names it in the suite (with the device in brackets where a suite
    runs a test on several: `test_abs [local-task]`); `error` the first line of what went wrong;
    `max_error` the largest absolute difference of a mismatch; `size` bytes of what was compiled;
    `details` what the suite's own summary needs (e.g. the ONNX suite's bound inputs)."""
    test: str
    status: str
    error: str = ""
    max_error: float | None = None
    seconds: float = 0.0
    size: int | None = None
    node: str = ""
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def worse(got: str, expected: str) -> bool:
    """Whether status `got` is worse than `expected` (a skip only against a skip)."""
    if "skip" in (got, expected):
        return got != expected and expected != "skip"
    return RANK[got] > RANK[expected]


def better(got: str, expected: str) -> bool:
    if "skip" in (got, expected):
        return False
    return RANK[got] < RANK[expected]


def with_device(test: str, device: str) -> str:
    return f"{test} [{device}]"
