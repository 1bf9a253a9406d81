"""Pure parts of qconf's daemon side: attribute merging and the monitoring records."""

import pytest

from gridtools.daemon import confattr, monitor
from gridtools.formats.sge.codecs import Integer, KeyValues, NameList
from gridtools.model.resources import INFINITY
from gridtools.sched.reasons import Reason, Why
from gridtools.sched.snapshot import (
    Ask, Decisions, PendingJob, Request, Running, SchedConfig, Snapshot, Start)


@pytest.mark.parametrize("mode,current,text,codec,expected", [
    ("add", ["a"], "b c", NameList(), ["a", "b", "c"]),
    ("delete", ["a", "b"], "a", NameList(), ["b"]),
    ("modify", ["a", "b"], "c b", NameList(), ["a", "b", "c"]),
    ("replace", ["a"], "NONE", NameList(), []),
    ("add", {"x": "1"}, "y=2", KeyValues(), {"x": "1", "y": "2"}),
    ("modify", {"x": "1"}, "x=3,z=4", KeyValues(), {"x": "3", "z": "4"}),
    ("delete", {"x": "1", "y": "2"}, "x", KeyValues(), {"y": "2"}),
    ("delete", {"x": "1", "y": "2"}, "y=9", KeyValues(), {"x": "1"}),
    ("replace", {"x": "1"}, "z=5", KeyValues(), {"z": "5"}),
    ("modify", 3, "7", Integer(), 7),
])
def test_merge(mode, current, text, codec, expected):
    assert confattr.merge(mode, current, text, codec, "attr", "obj") == expected


@pytest.mark.parametrize("mode,current,text,codec,expected,note", [
    ("add", ["a"], "a,b", NameList(), ["a"], 'No modification because "a" already exists in "attr" of "obj"'),
    ("delete", ["a", "c"], "b,c", NameList(), ["a"], '"b" does not exist in "attr" of "obj"\n'),
    ("add", {"x": "1"}, "y=1,x=2", KeyValues(), {"x": "1"},
     'No modification because "x" already exists in "attr" of "obj"'),
    ("delete", {"x": "1"}, "y", KeyValues(), {"x": "1"}, '"y" does not exist in "attr" of "obj"\n'),
    ("modify", {"x": "1"}, "y=2", KeyValues(), {"x": "1", "y": "2"},
     'Unable to find "y" in "attr" of "obj" - Adding new element.\n'),
    ("modify", {}, "y=2", KeyValues(), {"y": "2"}, '"attr" of "obj" is empty - Adding new element(s).\n'),
])
def test_merge_notices(mode, current, text, codec, expected, note):
    """What Grid Engine's master only tells: the change goes on."""
    notes = []
    assert confattr.merge(mode, current, text, codec, "attr", "obj", notes) == expected
    assert notes == [note]


def test_merge_of_a_present_name_may_stop_the_whole_change():
    with pytest.raises(confattr.NoChange, match="already exists"):
        confattr.merge("add", ["a"], "a", NameList(), "hostlist", "obj", [], whole=True)


@pytest.mark.parametrize("mode,current,text,codec,word", [
    ("add", 3, "4", Integer(), "not a list attribute"),
    ("modify", 3, "four", Integer(), "invalid value"),
])
def test_merge_refusals(mode, current, text, codec, word):
    with pytest.raises(confattr.AttrProblem, match=word):
        confattr.merge(mode, current, text, codec, "attr", "obj")


def _snapshot(default_duration=INFINITY):
    request = Request(hard=(Ask("h_rt", 120, "h_rt=0:2:0"),), runtime=120.0)
    pending = PendingJob(id=8, owner="bob", request=request, submit_time=0.0, tasks=(1,))
    running = (Running(7, 1, "alice", (("all.q", "node1", 1),), start_time=1000.0),
               Running(9, 2, "carol", (("all.q", "node1", 2),), start_time=1200.0, end_time=1800.0))
    return Snapshot(now=2000.0, jobs=(pending,), running=running, queues=(), hosts={}, complexes={},
                    config=SchedConfig(default_duration=default_duration))


def test_runlog_lists_starts_and_reasons():
    decisions = Decisions(starts=[Start(8, 1, [["all.q", "node2", 1]])],
                          reasons={5: (Reason(Why.PE_TOO_FEW, ("mpi", 0)),),
                                   6: (Reason(Why.QI_FULL, ("all.q@node1",)),)})
    lines = monitor.runlog_block(_snapshot(), decisions, 2000.0).splitlines()
    assert lines[0].endswith("|-------------START-SCHEDULER-RUN-------------")
    assert lines[1].endswith("|JOB 8.1 [1] starts in queue all.q@node2")
    assert lines[2].endswith('|Job 5 cannot run in PE "mpi" because it only offers 0 slots')
    assert lines[3].endswith('|queue instance "all.q@node1" dropped because it is full')
    assert lines[4].endswith("|--------------STOP-SCHEDULER-RUN-------------")
