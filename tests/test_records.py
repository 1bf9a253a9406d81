"""gridtools.records: records declared like dataclasses, without their import cost."""

import os
import subprocess
import sys

import pytest

from conftest import REPO
from gridtools.records import ClosedSet, Factory, record


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


class Kind(ClosedSet):
    COMMAND = "command"
    ATTRIBUTE = "attribute"

    @property
    def prefix(self):
        return "+" if self is Kind.ATTRIBUTE else ""


class Number(int, ClosedSet):
    SEVEN = 7
    FIVE = 5


def test_closed_sets_find_members_by_value_and_name_in_order():
    assert Kind("command") is Kind.COMMAND and Kind["ATTRIBUTE"] is Kind.ATTRIBUTE
    assert list(Kind) == [Kind.COMMAND, Kind.ATTRIBUTE] and len(Kind) == 2
    assert Kind.ATTRIBUTE.name == "ATTRIBUTE" and Kind.ATTRIBUTE.value == "attribute"
    assert Kind.ATTRIBUTE.prefix == "+" and Kind.COMMAND.prefix == ""      # methods are no members
    assert set(Kind.__members__) == {"COMMAND", "ATTRIBUTE"}
    assert repr(Kind.COMMAND) == "<Kind.COMMAND: 'command'>" and str(Kind.COMMAND) == "Kind.COMMAND"
    with pytest.raises(ValueError):
        Kind("other")
    with pytest.raises(KeyError):
        Kind["mro"]
    assert Kind.COMMAND != Kind.ATTRIBUTE and {Kind.COMMAND: 1}[Kind.COMMAND] == 1


def test_closed_sets_over_a_data_type_are_of_that_type_and_survive_copies():
    import copy
    import pickle
    assert Number.FIVE == 5 and int(Number.SEVEN) == 7 and Number(5) is Number.FIVE
    assert f"{Number.FIVE}" == "5" and str(Number.SEVEN) == "7" and repr(Number.SEVEN) == "<Number.SEVEN: 7>"
    assert isinstance(Number.FIVE, int) and Number.FIVE + 1 == 6 and hash(Number.FIVE) == hash(5)
    for member in (Kind.COMMAND, Number.SEVEN):
        assert copy.copy(member) is member and copy.deepcopy(member) is member
        assert pickle.loads(pickle.dumps(member)) is member


def test_closed_sets_and_submit_descriptions_import_no_enum():
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "import gridtools.records, gridtools.formats.condor.jobad\n"
            "print(sorted(m for m in ('enum', 'functools', 'collections', 're', 'os') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, os.path.join(REPO, "src")],
                         capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"
