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
