"""gridtools' ClassAd engine against HTCondor's own answers.

tests/data/classad_oracle.txt holds hundreds of expressions with the value
HTCondor 25 gives each (see tests/classad_oracle.py). The first test always
compares with that table; the second asks HTCondor itself, and runs only
where its Python bindings (the htcondor package) import.
"""

import os
import time

import pytest

import os.path as _path
import sys

sys.path.insert(0, _path.dirname(_path.abspath(__file__)))
import classad_oracle as oracle  # noqa: E402

CASES = oracle.load()


@pytest.fixture(autouse=True, scope="module")
def utc():
    """absTime values print with the local offset: evaluate in UTC."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = oracle.TIME_ZONE
    time.tzset()
    yield
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()


def test_table_is_large():
    assert len(CASES) >= 500


@pytest.mark.parametrize("text,answer", CASES, ids=[c[0] for c in CASES])
def test_matches_committed_htcondor_answer(text, answer):
    assert oracle.gridtools_answer(text) == answer


def test_matches_live_htcondor():
    classad2 = oracle.htcondor()
    if classad2 is None:
        pytest.skip("the htcondor package is not installed here")
    differ = [(text, oracle.oracle_answer(classad2, text), oracle.gridtools_answer(text))
              for text, _ in CASES]
    differ = [d for d in differ if d[1] != d[2]]
    assert differ == []


ZONED = {  # what reads this machine's clock, in a zone that is not UTC (Asia/Kolkata, +05:30)
    'getHours(absTime("2020-03-04T05:06:07+01:00"))': "9",
    'getMinutes(absTime("2020-03-04T05:06:07+01:00"))': "36",
    'getDayOfMonth(absTime("2024-12-31T23:30:00+00:00"))': "1",
    "splitTime(0).Offset": "19800",
    "splitTime(0).Hours": "5",
    'formatTime(0, "%H:%M")': '"05:30"',
    'formatTime(absTime("2024-02-29T12:34:56+02:00"), "%H:%M")': '"12:34"',
}


def test_time_parts_read_the_local_clock_as_htcondor_does():
    """getHours() and the other parts of an absTime, splitTime() and formatTime() of a
    number read this machine's clock; formatTime() and splitTime() of an absTime its own."""
    os.environ["TZ"] = "Asia/Kolkata"
    time.tzset()
    try:
        assert {text: oracle.gridtools_answer(text) for text in ZONED} == ZONED
        classad2 = oracle.htcondor()
        if classad2 is not None:
            assert {text: oracle.oracle_answer(classad2, text) for text in ZONED} == ZONED
    finally:
        oracle.fix_time_zone()
