"""gridtools.records: records declared like dataclasses, without their import cost."""

import subprocess
import sys

import pytest

from gridtools.records import Factory, record


@record
class Point:
    x: int
    y: int = 0
    tags: list = Factory(list)


@record(frozen=True)
class Pair:
    a: str
    b: str = "b"


def test_fields_by_position_or_name_and_defaults():
    assert Point(1).y == 0 and Point(1, 2).y == 2 and Point(x=3, y=4).x == 3
    first, second = Point(1), Point(1)
    first.tags.append("t")
    assert second.tags == []                          # a fresh default for every record


def test_equality_repr_and_hash():
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert repr(Point(1)) == "Point(x=1, y=0, tags=[])"
    assert {Pair("a"): 1}[Pair("a", "b")] == 1
    with pytest.raises(TypeError):
        hash(Point(1))


def test_frozen_records_refuse_changes_and_bad_calls_are_type_errors():
    with pytest.raises(AttributeError):
        Pair("a").a = "c"
    for call in (lambda: Point(), lambda: Point(1, 2, [], 4), lambda: Point(1, z=2), lambda: Point(1, x=2)):
        with pytest.raises(TypeError):
            call()


def test_condor_submit_starts_without_dataclasses():
    code = ("import sys\nimport gridtools.cli.condor.submit, gridtools.formats.condor.jobad, "
            "gridtools.formats.condor.spec, gridtools.seclevels, gridtools.formats.condor_config\n"
            "print(sorted(m for m in ('dataclasses', 'inspect', 'socket', 'calendar') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"
