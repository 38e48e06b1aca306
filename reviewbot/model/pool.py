"""Model work in a bounded pool of threads, results in the order of the jobs.

The workers share the run's session: its ledger (call cap, token budget, deadline) and its
rate-limit pause, so a 429 slows the pool, not one worker, and the order of the results (and
of the artifacts built from them) never depends on which reply came first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def run_in_pool(jobs: Sequence[Callable[[], T]], workers: int) -> list[T]:
    if workers <= 1 or len(jobs) <= 1:
        return [job() for job in jobs]
    with ThreadPoolExecutor(max_workers=min(workers, len(jobs)),
                            thread_name_prefix="reviewbot-model") as pool:
        futures = [pool.submit(job) for job in jobs]
        return [future.result() for future in futures]
