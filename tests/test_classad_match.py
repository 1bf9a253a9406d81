"""Matchmaking with the examples of the HTCondor seeds: machine policies
written as condor_config macros, job Requirements and Rank."""

import pytest

from gridtools.classad import (
    UNDEFINED, ClassAd, accepts, parse, parse_ad, rank, symmetric_match,
)
from gridtools.formats.condor_config import Config


def machine_from_config(text, **attrs):
    """A machine ad whose Requirements is the config's START and whose Rank
    is its RANK, with the given attributes."""
    config = Config({})
    config.read_text(text, "condor_config")
    ad = ClassAd(attrs)
    ad["Requirements"] = parse(config.get("START"))
    if "RANK" in config:
        ad["Rank"] = parse(config.get("RANK") or "0")
    return ad


def job(**attrs):
    ad = ClassAd({"Requirements": True})
    for name, value in attrs.items():
        ad[name] = parse(value) if name in ("Requirements", "Rank") else value
    return ad


CHEMISTRY = """
START = True
RANK = Department =!= UNDEFINED && Department == "Chemistry"
SUSPEND = False
CONTINUE = True
PREEMPT = False
KILL = False
"""


def test_chemistry_department_rank():
    machine = machine_from_config(CHEMISTRY, Memory=512)
    assert rank(machine, job(Department="Chemistry")) == 1.0
    assert rank(machine, job(Department="chemistry")) == 1.0  # == ignores case
    assert rank(machine, job(Department="Physics")) == 0.0
    assert rank(machine, job()) == 0.0  # no Department: FALSE, not UNDEFINED
    assert machine.eval("Rank", job()) is False
    assert symmetric_match(machine, job(Department="Physics"))


def test_chemistry_rank_without_the_undefined_guard():
    machine = machine_from_config('START = True\nRANK = Department == "Chemistry"\n')
    assert machine.eval("Rank", job()) is UNDEFINED
    assert rank(machine, job()) == 0.0


OWNERS = """
START = True
IsOwner = (Owner == "adesmet" || Owner == "roy")
IsChem =(Department =!= UNDEFINED && Department == "Chemistry")
IsPhys =(Department =!= UNDEFINED && Department == "Physics")
RANK = $(IsOwner)*20 + $(IsChem)*10 + $(IsPhys)
"""


@pytest.mark.parametrize("attrs,expected", [
    ({"Owner": "adesmet"}, 20.0),
    ({"Owner": "roy", "Department": "Physics"}, 21.0),
    ({"Owner": "roy", "Department": "Chemistry"}, 30.0),
    ({"Owner": "alice", "Department": "Chemistry"}, 10.0),
    ({"Owner": "bob", "Department": "Physics"}, 1.0),
    ({"Owner": "carol"}, 0.0),
    ({"Owner": "ADESMET"}, 20.0),
])
def test_owner_then_department_rank(attrs, expected):
    machine = machine_from_config(OWNERS)
    assert rank(machine, job(**attrs)) == expected


def test_owner_rank_orders_jobs():
    machine = machine_from_config(OWNERS)
    jobs = [job(Owner="carol"), job(Owner="bob", Department="Physics"),
            job(Owner="roy"), job(Owner="alice", Department="Chemistry")]
    order = sorted(jobs, key=lambda j: rank(machine, j), reverse=True)
    assert [j.eval("Owner") for j in order] == ["roy", "alice", "bob", "carol"]


INSTRUCTIONAL = "(INSTRUCTIONAL =?= UNDEFINED || INSTRUCTIONAL == FALSE)"


@pytest.mark.parametrize("machine_attrs,matches", [
    ({"INSTRUCTIONAL": True, "NETWORK_SPEED": 100}, False),
    ({"INSTRUCTIONAL": False, "NETWORK_SPEED": 10}, True),
    ({"NETWORK_SPEED": 1000}, True),
])
def test_instructional_machines_are_avoided(machine_attrs, matches):
    machine = ClassAd(dict(machine_attrs, Requirements=True))
    j = job(Requirements=INSTRUCTIONAL, Rank="NETWORK_SPEED")
    assert symmetric_match(j, machine) is matches
    assert rank(j, machine) == float(machine_attrs["NETWORK_SPEED"])


COLTRANE = "MINUTE = 60\nSTART = KeyboardIdle > 15 * $(MINUTE) {op} Owner == \"coltrane\"\n"


def test_coltrane_or_start_leaves_the_owner_state():
    machine = machine_from_config(COLTRANE.format(op="||"), KeyboardIdle=34)
    # Evaluated locally (no job): FALSE || UNDEFINED is UNDEFINED, not FALSE,
    # so the machine is not in the Owner state.
    assert machine.eval("Requirements") is UNDEFINED
    assert machine.eval("Requirements") is not False
    assert symmetric_match(machine, job(Owner="coltrane"))
    assert not symmetric_match(machine, job(Owner="miles"))
    assert machine.eval("Requirements", job()) is UNDEFINED
    assert not accepts(machine, job())


def test_coltrane_and_start_stays_in_the_owner_state():
    machine = machine_from_config(COLTRANE.format(op="&&"), KeyboardIdle=34)
    assert machine.eval("Requirements") is False  # anything && FALSE is FALSE
    assert not symmetric_match(machine, job(Owner="coltrane"))


def test_keyboard_idle_long_enough_accepts_anyone():
    machine = machine_from_config(COLTRANE.format(op="||"), KeyboardIdle=16 * 60)
    assert machine.eval("Requirements") is True
    assert symmetric_match(machine, job(Owner="miles"))


SEED_MACHINE = """
MyType = "Machine"
TargetType = "Job"
Name = "vm6@romano.cs.wisc.edu"
Machine = "romano.cs.wisc.edu"
Requirements = LoadAvg < 0.5
Rank = 0.0
Disk = 2019048
LoadAvg = 0.000000
KeyboardIdle = 1018497
Memory = 512
Cpus = 1
Mips = 124122
"""


def test_load_average_requirement_of_the_seed_machine():
    machine = parse_ad(SEED_MACHINE)
    wants_memory = job(Requirements="TARGET.Memory >= 256 && TARGET.Disk > 1000000",
                       Rank="TARGET.Mips")
    assert symmetric_match(wants_memory, machine)
    assert rank(wants_memory, machine) == 124122.0
    assert rank(machine, wants_memory) == 0.0
    busy = parse_ad(SEED_MACHINE.replace("LoadAvg = 0.000000", "LoadAvg = 0.75"))
    assert not symmetric_match(wants_memory, busy)
    too_big = job(Requirements="TARGET.Memory >= 1024")
    assert not symmetric_match(too_big, machine)


def test_requirements_are_checked_both_ways():
    machine = ClassAd({"Memory": 4096, "Requirements": parse('TARGET.Owner != "rival"')})
    good = job(Owner="friend", Requirements="TARGET.Memory > 1000")
    rival = job(Owner="rival", Requirements="TARGET.Memory > 1000")
    greedy = job(Owner="friend", Requirements="TARGET.Memory > 10000")
    assert symmetric_match(good, machine) and symmetric_match(machine, good)
    assert accepts(rival, machine) and not accepts(machine, rival)
    assert not symmetric_match(rival, machine)
    assert not symmetric_match(greedy, machine)


def test_missing_or_non_boolean_requirements_do_not_match():
    machine = ClassAd({"Requirements": True})
    assert not symmetric_match(ClassAd({"Owner": "x"}), machine)
    assert not symmetric_match(job(Requirements='"yes"'), machine)
    assert symmetric_match(job(Requirements="1"), machine)
    assert not symmetric_match(job(Requirements="0.0"), machine)


@pytest.mark.parametrize("expr,expected", [
    ("TARGET.Memory", 2048.0), ("TARGET.Memory / 1024", 2.0), ("TARGET.Load", 0.25),
    ("TARGET.Memory > 1000", 1.0), ("TARGET.Missing", 0.0), ('"high"', 0.0), ("1/0", 0.0),
    ("-3", -3.0),
])
def test_rank_is_a_float(expr, expected):
    machine = ClassAd({"Memory": 2048, "Load": 0.25})
    assert rank(job(Rank=expr), machine) == expected
    assert type(rank(job(Rank=expr), machine)) is float
    assert rank(ClassAd(), machine) == 0.0


def test_preemption_requirements_from_the_seed():
    config = Config({})
    config.read_text(
        "StateTimer = (CurrentTime - EnteredCurrentState)\n"
        "HOUR = (60*60)\n"
        "PREEMPTION_REQUIREMENTS = \\\n"
        " $(StateTimer) > (1 * $(HOUR)) \\\n"
        " && RemoteUserPrio > SubmittorPrio * 1.2\n", "condor_config")
    expr = parse(config.get("PREEMPTION_REQUIREMENTS"))
    running = ClassAd({"CurrentTime": 10000, "EnteredCurrentState": 1000,
                       "RemoteUserPrio": 30.0, "SubmittorPrio": 10.0})
    assert expr.eval(running) is True
    recent = running.copy()
    recent["EnteredCurrentState"] = 9000
    assert expr.eval(recent) is False
