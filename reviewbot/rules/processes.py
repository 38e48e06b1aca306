"""CPU-bound work over many files on more than one core: forked processes take shares.

The rules are pure Python, so threads would queue on the interpreter lock, and a fresh
interpreter would pay reviewbot's imports again (about 0.2 s, most of a small hook's time).
A forked process starts with everything the parent has loaded: its modules, the diff, the
files already read. What it computes comes back by pickle, so it must be plain data.

Forking only on Linux (macOS's system libraries are not fork-safe, Windows cannot fork),
only with a second CPU this process may use, and only when the caller says the work repays
it. A worker that dies (killed, out of memory) costs time, not results: its share is
computed again here. An exception raised by the work itself is raised here, as it would be
without a second process. One map at a time per process: the work is handed to the workers
through a module variable.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# The work the forked workers run: set just before they are forked and read by them, so
# the function and its items (which hold the repository, open files) are never pickled.
_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None


def usable_processes(wanted: int) -> int:
    """How many processes a run may use: what the user allows, at most one per CPU this
    process may run on, and one where forking is not safe."""
    if wanted <= 1 or sys.platform != "linux":
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except OSError:  # pragma: no cover - a kernel without affinity support
        cpus = os.cpu_count() or 1
    return max(1, min(wanted, cpus))


def balanced_shares(weights: Sequence[int], count: int) -> list[list[int]]:
    """Item indices split into `count` shares of about equal weight (heaviest first, each to
    the lightest share), each share in item order; the first share is the heaviest."""
    shares: list[list[int]] = [[] for _ in range(count)]
    loads = [0] * count
    for index in sorted(range(len(weights)), key=lambda i: -weights[i]):
        lightest = loads.index(min(loads))
        shares[lightest].append(index)
        loads[lightest] += weights[index]
    # The parent takes the heaviest share: it has no pickling to do on the way back.
    order = sorted(range(count), key=lambda s: -loads[s])
    return [sorted(shares[s]) for s in order if shares[s]]


def map_in_processes(func: Callable[[T], R], items: Sequence[T], weights: Sequence[int],
                     processes: int) -> list[R]:
    """`func(item)` for every item, in the items' order; with `processes` > 1 and more than
    one item, forked workers compute all shares but the first while this process computes
    the first. `func` must return picklable data."""
    count = min(usable_processes(processes), len(items))
    if count <= 1:
        return [func(item) for item in items]
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing import get_context

    global _WORK
    shares = balanced_shares(weights, count)
    results: dict[int, R] = {}
    _WORK = (func, items)
    # The collector in a worker would touch every object it inherited and so copy the
    # parent's memory page by page; frozen, they stay shared.
    gc.freeze()
    try:
        with ProcessPoolExecutor(len(shares) - 1, mp_context=get_context("fork")) as pool:
            futures = [pool.submit(_run_share, share) for share in shares[1:]]
            results.update((index, func(items[index])) for index in shares[0])
            for share, future in zip(shares[1:], futures, strict=True):
                try:
                    results.update(zip(share, future.result(), strict=True))
                except BrokenProcessPool:
                    results.update((index, func(items[index])) for index in share)
    finally:
        _WORK = None
        gc.unfreeze()
    return [results[index] for index in range(len(items))]


def _run_share(indices: list[int]) -> list[Any]:
    """In a forked worker: the share's results, from the work the parent set before forking."""
    if _WORK is None:  # pragma: no cover - only a worker started some other way
        raise RuntimeError("a worker runs only the work set before it was forked")
    func, items = _WORK
    return [func(items[index]) for index in indices]
