"""Work split across forked processes: same results, in order, whatever happens to a worker."""

from __future__ import annotations

import os
import sys

import pytest

from reviewbot.rules.processes import balanced_shares, map_in_processes, usable_processes

PARENT = os.getpid()
forks = pytest.mark.skipif(usable_processes(2) < 2,
                           reason="forking needs Linux and a second CPU for this process")


def test_shares_cover_every_item_once_in_order_heaviest_first() -> None:
    shares = balanced_shares([1, 10, 1, 1, 4, 3], 2)
    assert sorted(i for share in shares for i in share) == list(range(6))
    assert all(share == sorted(share) for share in shares)
    assert shares == [[1], [0, 2, 3, 4, 5]]


def test_shares_balance_by_weight_not_count() -> None:
    shares = balanced_shares([5, 5, 5, 5, 1, 1], 2)
    loads = [sum([5, 5, 5, 5, 1, 1][i] for i in share) for share in shares]
    assert loads == [11, 11]


def test_no_empty_share_when_items_are_fewer_than_processes() -> None:
    assert balanced_shares([3, 2], 4) == [[0], [1]]


def test_one_process_asked_or_one_item_never_forks() -> None:
    assert map_in_processes(lambda _: os.getpid(), [1, 2, 3], [1, 1, 1], 1) == [PARENT] * 3
    assert map_in_processes(lambda _: os.getpid(), [1], [1], 4) == [PARENT]


def test_only_linux_forks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert usable_processes(8) == 1


def test_never_more_processes_than_cpus() -> None:
    assert usable_processes(10_000) <= (os.cpu_count() or 1)
    assert usable_processes(0) == 1


@forks
def test_a_worker_computes_its_share_and_results_keep_the_items_order() -> None:
    results = map_in_processes(lambda n: (n * n, os.getpid()), list(range(8)),
                               [1] * 8, 2)
    assert [square for square, _ in results] == [n * n for n in range(8)]
    assert {pid for _, pid in results} - {PARENT}, "no item was computed in a worker"


def _fails_on_three(item: int) -> int:
    if item == 3:
        raise ValueError(f"bad item {item}")
    return item


@forks
@pytest.mark.parametrize("weights", [[1, 1, 1, 9], [9, 1, 1, 1]])
def test_an_error_in_either_process_is_raised_here(weights: list[int]) -> None:
    with pytest.raises(ValueError, match="bad item 3"):
        map_in_processes(_fails_on_three, [0, 1, 2, 3], weights, 2)


@forks
def test_a_worker_that_dies_costs_time_not_results() -> None:
    def dies_in_a_worker(item: int) -> tuple[int, int]:
        if os.getpid() != PARENT:
            os._exit(1)
        return item, os.getpid()

    results = map_in_processes(dies_in_a_worker, [0, 1, 2, 3], [4, 1, 1, 1], 2)
    assert results == [(n, PARENT) for n in range(4)]


class _Unpicklable(Exception):
    def __init__(self, handle: object) -> None:
        super().__init__("held a handle")
        self.handle = handle

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("cannot pickle a handle")


@forks
def test_what_cannot_come_back_from_a_worker_is_said_not_lost() -> None:
    """An exception or a result that does not pickle is raised here as what it was."""
    def raises_unpicklable(item: int) -> int:
        if os.getpid() != PARENT:
            raise _Unpicklable(object())
        return item

    with pytest.raises(RuntimeError, match="held a handle"):
        map_in_processes(raises_unpicklable, [0, 1, 2, 3], [4, 1, 1, 1], 2)
    with pytest.raises(RuntimeError, match="could not be sent back"):
        map_in_processes(lambda item: (lambda: item) if os.getpid() != PARENT else item,
                         [0, 1, 2, 3], [4, 1, 1, 1], 2)
