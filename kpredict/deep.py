"""A retry with room for deep recursion: valid but deeply nested code (a sum of 1,000 terms, a chain
of 1,000 method calls) can exceed Python's default recursion limit in the analysis."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

DEEP_RECURSION_LIMIT = 20_000
DEEP_STACK_BYTES = 512 * 1024 * 1024


def run_deep(fn: Callable[..., T], *args: object) -> T:
    """Run fn(*args) in a thread with a large stack and a high recursion limit.

    For valid but deeply nested code (a sum of 1,000 terms, a chain of 1,000 method calls) that
    exceeds Python's default recursion limit in the analysis. Used only as a retry after a
    RecursionError, so the common path pays nothing.
    """
    result: list[object] = []
    error: list[BaseException] = []

    def body() -> None:
        try:
            result.append(fn(*args))
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            error.append(e)

    old_limit = sys.getrecursionlimit()
    old_stack = threading.stack_size()
    try:
        threading.stack_size(DEEP_STACK_BYTES)
        sys.setrecursionlimit(max(old_limit, DEEP_RECURSION_LIMIT))
        t = threading.Thread(target=body, name="kpredict-deep")
        t.start()
        t.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if error:
        raise error[0]
    return result[0]  # type: ignore[return-value]
