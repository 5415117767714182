"""Repeated blocks in a sequence: a model's N identical layers, found so a report shows one.

A 32-layer decoder's forward has 1,600 op rows and 300 kernel names that are one layer's 50 rows
and 9 names, 32 times over (with other group numbers and kernel indices). The text report shows
the block once with how many times it repeats; JSON keeps every row.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

MAX_PERIOD = 256  # longest block looked for (a layer's op rows: about 50 in transformers' decoders)
_MOD = (1 << 61) - 1
_BASE = 1_000_003


def runs(keys: Sequence[Hashable], max_period: int = MAX_PERIOD) -> list[tuple[int, int, int]]:
    """Cover `keys` left to right with (start, period, count): keys[start:start+period] repeated
    `count` times in a row (count 1: the items stand alone). At each point the repeat that covers
    the most items wins (the shorter period on a tie), so a layer of 50 rows repeated 32 times is
    one run, not 50 runs of one row. Blocks are compared by rolling hash, and a period is only
    tried where the item recurs, so a function of 16,000 rows takes milliseconds, not minutes."""
    ids: dict[Hashable, int] = {}
    seq = [ids.setdefault(k, len(ids) + 1) for k in keys]
    n = len(seq)
    h = [0] * (n + 1)
    pw = [1] * (n + 1)
    for k, x in enumerate(seq):
        h[k + 1] = (h[k] * _BASE + x) % _MOD
        pw[k + 1] = pw[k] * _BASE % _MOD

    def block(i: int, p: int) -> int:
        return (h[i + p] - h[i] * pw[p]) % _MOD

    where: dict[int, list[int]] = {}
    for k, x in enumerate(seq):
        where.setdefault(x, []).append(k)
    cursor = {x: 0 for x in where}  # index into where[x] of the first position >= i

    out: list[tuple[int, int, int]] = []
    single = -1  # start of the stretch of items that repeat nothing
    i = 0
    while i < n:
        x = seq[i]
        pos = where[x]
        c0 = cursor[x]
        while pos[c0] < i:
            c0 += 1
        cursor[x] = c0
        best_p, best_c = 1, 1
        for j in pos[c0 + 1:]:
            p = j - i
            if p > max_period or i + 2 * p > n:
                break
            first = block(i, p)
            if block(j, p) != first:
                continue
            c = 2
            while i + (c + 1) * p <= n and block(i + c * p, p) == first:
                c += 1
            if p * c > best_p * best_c and seq[i:i + p] == seq[j:j + p]:
                best_p, best_c = p, c
        if best_c == 1:
            if single < 0:
                single = i
            i += 1
            continue
        if single >= 0:
            out.append((single, i - single, 1))
            single = -1
        out.append((i, best_p, best_c))
        i += best_p * best_c
    if single >= 0:
        out.append((single, n - single, 1))
    return out
