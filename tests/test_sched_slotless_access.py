"""Slot-less jobs (HTCondor's local and scheduler universes, sched.local) and their home
queue instance: they start there only while it takes new jobs and its access lists let
the job's owner and project in, in Grid Engine's order and in the negotiator's, with the
reason the slot path gives for that instance."""

from dataclasses import replace

import pytest
import schedkit
from gridtools.sched import matchpass
from gridtools.sched.cycle import cycle

STAFF = "name staff\ntype ACL\nfshare 0\noticket 0\nentries bob\n"
PROJECT = "name {}\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n"


def cell(**more):
    sc = {"hosts": ["h1", "h2"], "slots": 1, "objects": {"usersets/staff": STAFF,
                                                           "projects/big": PROJECT.format("big")},
          "jobs": [{"id": 1, "owner": more.pop("owner", "alice"), "qsub": more.pop("qsub", "")}]}
    sc.update(more)
    return sc


def slotless(sc, universe="local"):
    """The scenario's snapshot with its job 1 a slot-less job submitted on h1."""
    snap = schedkit.snapshot(sc)
    job = replace(snap.jobs[0], universe=universe, submit_host="h1")
    return replace(snap, jobs=(job,))


def both_orders(snap):
    """The decisions of Grid Engine's pass and of the negotiator's for ``snap``."""
    negotiated = replace(snap, config=replace(snap.config, params={"NEGOTIATOR": "1"}))
    return cycle(snap), matchpass.match_pass(negotiated, matchpass.Inputs())


def outcome(sc, owner="alice", universe="local"):
    """(starts, reasons of job 1) in both orders; they must agree."""
    found = []
    for decisions in both_orders(slotless(sc, universe)):
        found.append((schedkit.starts(decisions), schedkit.reasons(decisions, 1, owner)))
    assert found[0] == found[1]
    return found[0]


def test_an_open_home_instance_starts_the_job_without_a_slot():
    assert outcome(cell()) == (["1.1 all.q@h1=0"], [])
    assert outcome(cell(), universe="scheduler") == (["1.1 all.q@h1=0"], [])


@pytest.mark.parametrize("letters, word", [
    ("d", "disabled"), ("s", "suspended"), ("E", "in error state"), ("D", "disabled"),
    ("C", "suspended"), ("S", "suspended"), ("u", "temporarily not available")])
def test_a_home_instance_that_takes_no_new_jobs_starts_none(letters, word):
    starts, reasons = outcome(cell(queue_states={"all.q@h1": letters}))
    assert starts == []
    assert reasons == [f'queue instance "all.q@h1" dropped because it is {word}']


def test_the_home_instances_host_closed_starts_none():
    starts, reasons = outcome(cell(host_states={"h1": "drain"}))
    assert starts == [] and len(reasons) == 1 and reasons[0].startswith('queue instance "all.q@h1" dropped')


def test_another_instance_closed_does_not_matter():
    assert outcome(cell(queue_states={"all.q@h2": "d"})) == (["1.1 all.q@h1=0"], [])


def test_the_queues_user_lists_keep_other_owners_out():
    sc = cell(queue={"user_lists": "staff"})
    assert outcome(sc) == ([], ['has no permission for queue "all.q@h1"'])
    assert outcome(cell(queue={"user_lists": "staff"}, owner="bob"), owner="bob") == (["1.1 all.q@h1=0"], [])


def test_the_queues_xuser_lists_keep_their_users_out():
    sc = cell(queue={"xuser_lists": "staff"}, owner="bob")
    assert outcome(sc, owner="bob") == ([], ['has no permission for queue "all.q@h1"'])
    assert outcome(cell(queue={"xuser_lists": "staff"})) == (["1.1 all.q@h1=0"], [])


def test_the_queues_project_lists():
    assert outcome(cell(queue={"projects": "big"})) == (
        [], ['(no project) does not have the correct project to run in queue "all.q@h1"'])
    assert outcome(cell(queue={"projects": "big"}, qsub="-P big")) == (["1.1 all.q@h1=0"], [])
    assert outcome(cell(queue={"xprojects": "big"}, qsub="-P big")) == (
        [], ['(project big) is not allowed to run in queue "all.q@h1" based on the excluded project list'])


def test_the_hosts_access_lists():
    sc = cell(exechost={"h1": {"user_lists": "staff"}})
    assert outcome(sc) == ([], ['has no permission for host "h1"'])


def test_held_tasks_keep_their_reason_and_the_others_the_queues():
    sc = cell(queue_states={"all.q@h1": "d"})
    sc["jobs"][0].update(tasks=[1, 2], held_tasks=[1])
    starts, reasons = outcome(sc)
    assert starts == []
    assert reasons == ["Job is in hold state",
                       'queue instance "all.q@h1" dropped because it is disabled']


def test_a_local_universe_job_waits_for_its_home_queue_in_a_live_cell(cell, workdir, users):
    """End to end: a local universe job of a user the queue's user_lists leave out, then
    in a disabled queue, stays idle and qstat -j says why; it runs once both are lifted."""
    from condortools import statuses, submit
    from conftest import wait_for
    alice, bob = users[0], users[1]
    qi = f"all.q@{cell.host}"
    assert cell.run("qconf", "-au", bob, "slotless_ok").returncode == 0
    assert cell.run("qconf", "-mattr", "queue", "user_lists", "slotless_ok", "all.q").returncode == 0
    cluster = submit(cell, "universe = local\nexecutable = /bin/true\nqueue\n", cwd=workdir, user=alice)

    def says(text):
        return text in cell.run("qstat", "-j", str(cluster)).stdout
    wait_for(lambda: says(f'has no permission for queue "{qi}"'), timeout=20)
    assert statuses(cell, str(cluster)) == {f"{cluster}.0": 1}
    assert cell.run("qmod", "-d", "all.q").returncode == 0
    assert cell.run("qconf", "-rattr", "queue", "user_lists", "NONE", "all.q").returncode == 0
    wait_for(lambda: says(f'queue instance "{qi}" dropped because it is disabled'), timeout=20)
    assert statuses(cell, str(cluster)) == {f"{cluster}.0": 1}
    assert cell.run("qmod", "-e", "all.q").returncode == 0
    wait_for(lambda: not statuses(cell, str(cluster)), timeout=30)
