"""CPU-bound work over many files on more than one core: forked processes take shares.

The rules are pure Python, so threads would queue on the interpreter lock, and a fresh
interpreter would pay reviewbot's imports again (about 0.2 s, most of a small hook's time).
A forked process starts with everything the parent has loaded: its modules, the diff, the
files already read. What it computes comes back by pickle, so it must be plain data.

Forking only on Linux (macOS's system libraries are not fork-safe, Windows cannot fork),
only with a second CPU this process may use, and only when the caller says the work repays
it. A worker that dies (killed, out of memory) costs time, not results: its share is
computed again here. An exception raised by the work itself is raised here, as it would be
without a second process. The workers are forked directly (no process pool: importing
multiprocessing and starting its pool cost a small change more than its second core saved),
and each writes its pickled results to a pipe.
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")

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
    shares = balanced_shares(weights, count)
    # The collector in a worker would touch every object it inherited and so copy the
    # parent's memory page by page; frozen, they stay shared.
    gc.freeze()
    try:
        workers = [_fork(func, items, share) for share in shares[1:]]
        results = {index: func(items[index]) for index in shares[0]}
        for worker in workers:
            results.update(zip(worker.share, worker.results(func, items), strict=True))
    finally:
        gc.unfreeze()
    return [results[index] for index in range(len(items))]


class _Worker:
    """A forked process computing a share, its answer coming back through a pipe."""

    def __init__(self, pid: int, pipe: int, share: list[int]) -> None:
        self.pid, self.pipe, self.share = pid, pipe, share

    def results(self, func: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """The share's results; an exception the work raised there is raised here; a worker
        that died (killed, out of memory) has its share computed here."""
        chunks = []
        with os.fdopen(self.pipe, "rb") as reader:
            while chunk := reader.read(1 << 20):
                chunks.append(chunk)
        _, status = os.waitpid(self.pid, 0)
        if status != 0 or not chunks:
            return [func(items[index]) for index in self.share]
        # From the forked copy of this process, through its own pipe: nothing else writes it.
        outcome, value = pickle.loads(b"".join(chunks))  # noqa: S301
        if outcome == "raised":
            raise value
        return cast(list[Any], value)


def _fork(func: Callable[[Any], Any], items: Sequence[Any], share: list[int]) -> _Worker:
    """A process forked from this one, with everything it has loaded (the function and its
    items are never pickled), that computes the share and writes the results back."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid:
        os.close(writer)
        return _Worker(pid, reader, share)
    # The worker: whatever happens, it ends here, without running this process's exit
    # handlers or flushing its buffers (the parent does both).
    status = 1
    try:
        os.close(reader)
        try:
            answer: tuple[str, Any] = ("done", [func(items[index]) for index in share])
        except Exception as exc:  # raised in the parent, as without a second process
            answer = ("raised", exc)
        try:
            data = pickle.dumps(answer)
        except Exception as exc:  # what does not pickle is said as what it was
            said = (repr(answer[1]) if answer[0] == "raised"
                    else f"a worker's results could not be sent back ({exc})")
            data = pickle.dumps(("raised", RuntimeError(said)))
        with os.fdopen(writer, "wb") as out:
            out.write(data)
        status = 0
    finally:
        os._exit(status)
