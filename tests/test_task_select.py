"""Picking the tasks a command names (``-t`` ranges, HTCondor proc lists) out of a job's:
the same answer as testing every task against every range, at a cost that grows with
the tasks and the ranges added, not their product; and a request naming too many
stepped ranges is refused before anything is looked at."""

import random
import time

import pytest

from gridtools.formats import reqcheck
from gridtools.formats.jobcheck import Invalid
from gridtools.model.taskset import select


def _by_hand(numbers, ranges):
    return [n for n in numbers if any(n in range(first, last + 1, step) for first, last, step in ranges)]


def test_select_picks_what_every_range_names():
    rng = random.Random(7)
    for _ in range(3000):
        numbers = sorted(rng.sample(range(1, 90), rng.randint(0, 60)))
        ranges = [(rng.randint(-3, 90), rng.randint(-3, 95), rng.randint(1, 6)) for _ in range(rng.randint(0, 8))]
        assert select(numbers, ranges) == _by_hand(numbers, ranges), (numbers, ranges)
    assert select(range(1, 11), [(3, 5, 1), (8, 20, 2)]) == [3, 4, 5, 8, 10]


def test_a_thousand_ranges_over_thousands_of_tasks_cost_little():
    numbers = list(range(1, 5001))
    for ranges in ([(1, 5000 - i, 1) for i in range(1024)],
                   [(1, 5000 - i, 3) for i in range(1024)],
                   [(1, 5000, step) for step in range(2, 1026)]):
        began = time.process_time()
        select(numbers, ranges)
        assert time.process_time() - began < 0.5      # (testing each task against each range: seconds)


def test_a_request_naming_too_many_stepped_ranges_is_refused():
    ok = {"targets": [{"id": 1, "tasks": [[1, 10, 2]] * 1024}] * 9}
    assert len(reqcheck.check("delete", ok)["targets"]) == 9
    with pytest.raises(Invalid, match="task ranges with a step: at most 10000"):
        reqcheck.check("condor_qedit", {"targets": [{"id": 1, "tasks": [[1, 10, 2]] * 1024}] * 10, "attrs": {}})


def test_a_huge_stepped_range_over_a_few_tasks_looks_at_the_tasks():
    """``-t 2-2000000000:2`` on an array of two tasks (1 and 2000000000): the two are looked
    at, not the billion numbers of the range."""
    began = time.process_time()
    assert select(range(1, 2000000001, 1999999999), [(2, 2000000000, 2)] * 10000) == [2000000000]
    assert time.process_time() - began < 0.5
