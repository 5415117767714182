"""Lookup keys hashed once.

Call summaries (summaries.py) and built objects (objects.py ConstructMemo) are found by keys that hold
a whole call signature or constructor arguments: tuples of tuples, whose hash Python works out again
at every lookup. Each byte-formula rerun of a file starts a state that looks up every summary and
object kept from the states before it (Shared.for_rerun), so the same keys were hashed tens of
thousands of times: 5 of 44 s CPU on eight transformers files.
"""

from __future__ import annotations


class Key(tuple):
    """A tuple whose hash is computed once; equal to (and hashed as) the plain tuple of its items."""

    h: int

    def __new__(cls, items: tuple) -> Key:
        key = super().__new__(cls, items)
        key.h = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self.h
