"""next_job_start_delay holds back its owner's HTCondor jobs alone: another user's HTCondor
jobs, every Grid Engine job (-now y ones too) and the scheduler universe start all the same;
and within one owner, the proc whose start set the hold does not take the next start from
the owner's other jobs once the hold ends (a job requeued after each run would else start
at every expiry and keep the owner's other jobs waiting for good)."""

from dataclasses import replace

import os

from conftest import cell_fixture, wait_for
from qtools import jid_of, state_of
from schedkit import reasons as said
from schedkit import snapshot, starts
from test_matchpass import inputs as negotiator_inputs
from test_matchpass import scenario as negotiator_scenario
from gridtools.sched import matchpass
from gridtools.sched.cycle import cycle

HELD = "job dropped because a job started with next_job_start_delay holds back"


def condor(sc, delays=(), condor_ids=None, universes=(), **config):
    """The scenario's snapshot: the jobs of ``condor_ids`` (else all) HTCondor jobs on
    execute hosts, ``delays`` their NextJobStartDelay (id -> seconds), ``universes`` the
    slot-less ones (id -> universe), and SchedConfig fields."""
    snap = snapshot(sc)
    delays, universes = dict(delays), dict(universes)
    jobs = []
    for job in snap.jobs:
        is_condor = condor_ids is None or job.id in condor_ids
        jobs.append(replace(job, start_delay=float(delays.get(job.id, 0)),
                            shadow=is_condor and job.id not in universes,
                            universe=universes.get(job.id, "")))
    return replace(snap, jobs=tuple(jobs), config=replace(snap.config, **config))


def held(decisions, job_id, owner="alice"):
    return any(line.startswith(HELD) for line in said(decisions, job_id, owner))


def test_one_users_hold_does_not_hold_back_other_users_or_grid_engine_jobs():
    """alice's hold lasts until 1010: her HTCondor job (1) and local universe job (6)
    wait; bob's HTCondor job (2), bob's Grid Engine jobs (3, and 4 with -now y), alice's
    own Grid Engine job (5) and her scheduler universe job (7) start."""
    sc = {"hosts": ["h1"], "slots": 8, "now": 1000,
          "jobs": [{"id": 1}, {"id": 2, "owner": "bob"}, {"id": 3, "owner": "bob"},
                   {"id": 4, "owner": "bob", "qsub": "-now y"}, {"id": 5},
                   {"id": 6}, {"id": 7}]}
    decisions = cycle(condor(sc, condor_ids={1, 2, 6, 7}, universes={6: "local", 7: "scheduler"},
                             start_hold={"alice": 1010.0}))
    assert sorted(s.job_id for s in decisions.starts) == [2, 3, 4, 5, 7]
    assert decisions.rejects == []
    assert held(decisions, 1) and held(decisions, 6)
    assert decisions.reasons[1][0].args == (1010.0,)


def test_a_delayed_start_in_the_pass_holds_back_its_owners_jobs_alone():
    """alice's job 1 asks for 600 seconds and is first in the order: it starts, then
    alice's other HTCondor job waits, while bob's jobs of both dialects start."""
    sc = {"hosts": ["h1"], "slots": 8, "now": 1000,
          "jobs": [{"id": 1}, {"id": 2}, {"id": 3, "owner": "bob"}, {"id": 4, "owner": "bob"},
                   {"id": 5, "owner": "bob", "qsub": "-now y"}]}
    decisions = cycle(condor(sc, {1: 600}, condor_ids={1, 2, 3}))
    assert sorted(s.job_id for s in decisions.starts) == [1, 3, 4, 5]
    assert held(decisions, 2)
    assert decisions.reasons[2][0].args == (1600.0,)
    # bob's own delayed start holds back bob's later HTCondor job, not alice's
    sc["jobs"] = [{"id": 1, "owner": "bob"}, {"id": 2, "owner": "bob"}, {"id": 3}]
    decisions = cycle(condor(sc, {1: 60}))
    assert sorted(s.job_id for s in decisions.starts) == [1, 3]
    assert held(decisions, 2, "bob")


def test_the_proc_that_set_the_hold_does_not_start_first_again():
    """alice's job 1 is requeued at once after each run (NextJobStartDelay 30) and is first
    in the order; its last start set the hold that ends now. Her job 2, waiting too, starts
    first, and its own delay holds job 1 back; bob's job starts all the same."""
    sc = {"hosts": ["h1"], "slots": 4, "now": 1030,
          "jobs": [{"id": 1}, {"id": 2}, {"id": 3, "owner": "bob"}]}
    hold = {"start_hold": {"alice": 1030.0}, "start_holders": {"alice": (1, 1)}}
    decisions = cycle(condor(sc, {1: 30, 2: 30}, **hold))
    assert sorted(s.job_id for s in decisions.starts) == [2, 3]
    assert held(decisions, 1)
    assert decisions.reasons[1][0].args == (1060.0,)
    # the next time the hold ends, job 2 set it: job 1 starts
    later = {**sc, "now": 1060, "jobs": [{"id": 1}, {"id": 4}]}
    decisions = cycle(condor(later, {1: 30, 4: 30}, start_hold={"alice": 1060.0},
                             start_holders={"alice": (2, 1)}))
    assert starts(decisions) == ["1.1 all.q@h1=1"]
    # the proc that set it starts at once when none of her other jobs can
    decisions = cycle(condor({**sc, "jobs": [{"id": 1}]}, {1: 30}, **hold))
    assert starts(decisions) == ["1.1 all.q@h1=1"]
    # so does it when her other jobs take no delay (one pass starts them all)
    decisions = cycle(condor(sc, {1: 30}, **hold))
    assert sorted(s.job_id for s in decisions.starts) == [1, 2, 3]


def test_within_a_cluster_the_requeued_proc_lets_the_next_proc_go_first():
    """Proc 0 of a cluster of three set the hold and was requeued: proc 1 starts now."""
    sc = {"hosts": ["h1"], "slots": 4, "now": 1030, "jobs": [{"id": 1, "tasks": [1, 2, 3]}]}
    decisions = cycle(condor(sc, {1: 30}, start_hold={"alice": 1030.0}, start_holders={"alice": (1, 1)}))
    assert starts(decisions) == ["1.2 all.q@h1=1"]
    assert held(decisions, 1)


def test_the_negotiators_order_keeps_the_hold_per_owner_and_passes_the_holder_over():
    """With params NEGOTIATOR=1: alice's hold keeps her HTCondor job waiting and not bob's;
    once it ends, her other matched job starts before the proc that set it."""
    sc = negotiator_scenario(jobs=[{"id": 1, "submit": 1}, {"id": 2, "owner": "bob", "submit": 2}])
    snap = condor(sc, start_hold={"alice": 1500.0})
    decisions = matchpass.match_pass(snap, negotiator_inputs(snap))
    assert [s.job_id for s in decisions.starts] == [2]
    assert held(decisions, 1)
    sc = negotiator_scenario(jobs=[{"id": 1, "submit": 1}, {"id": 2, "submit": 2}])
    snap = condor(sc, {1: 30, 2: 30}, start_hold={"alice": 1000.0}, start_holders={"alice": (1, 1)})
    decisions = matchpass.match_pass(snap, negotiator_inputs(snap))
    assert [s.job_id for s in decisions.starts] == [2]
    assert held(decisions, 1)


# ---------------------------------------------------------------- a running cell

#: a cell whose MAX_NEXT_JOB_START_DELAY cuts every hold to 3 seconds
cell = cell_fixture(slots=5, condor_config="MAX_NEXT_JOB_START_DELAY = 3\n")

#: a job requeued after each run, that asks for 600 seconds after each start
LOOPER = """executable = /bin/true
on_exit_remove = false
next_job_start_delay = 600
queue 1
"""
SLEEPER = """executable = /bin/sleep
arguments = 300
queue 1
"""


def _submit(cell, user, workdir, text, name):
    path = os.path.join(workdir, name)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o644)
    proc = cell.run("condor_submit", "-terse", path, user=user, cwd=workdir)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return int(proc.stdout.split(".")[0])


def _attr(cell, cluster, name):
    out = cell.run("condor_q", str(cluster), "-allusers", "-af", name).stdout.split()
    return out[0] if out else None


def _starts(cell, cluster):
    value = _attr(cell, cluster, "NumJobStarts")
    return int(value) if value not in (None, "undefined") else 0


def test_a_requeued_delayed_job_holds_back_neither_other_users_nor_its_owners_other_jobs(
        cell, users, workdir):
    """alice's looping job runs again at the end of each of its holds. bob's HTCondor job,
    his qsub job and his qsub -now y job start at once; alice's own second HTCondor job
    starts once her hold ends, her looping job waiting to run again."""
    alice, bob = users[0], users[1]
    looper = _submit(cell, alice, workdir, LOOPER, "loop.sub")
    wait_for(lambda: _starts(cell, looper) >= 2, timeout=20)     # (it runs again after its hold)
    theirs = _submit(cell, bob, workdir, SLEEPER, "bob.sub")
    qjob = jid_of(cell.qsub("-terse", "-b", "y", "sleep", "300", user=bob, cwd=workdir))
    wait_for(lambda: _attr(cell, theirs, "JobStatus") == "2" and state_of(cell, qjob) == "r", timeout=10)
    now = cell.qsub("-sync", "y", "-now", "y", "-b", "y", "true", user=bob, cwd=workdir, timeout=30)
    assert now.returncode == 0, now.stdout + now.stderr
    # alice's second job starts once her hold ends (3 seconds at most)
    mine = _submit(cell, alice, workdir, SLEEPER, "two.sub")
    wait_for(lambda: _attr(cell, mine, "JobStatus") == "2", timeout=15)
    assert _starts(cell, looper) >= 2
    cell.run("condor_rm", str(looper), str(mine), user=alice, check=True)
    cell.run("condor_rm", str(theirs), user=bob, check=True)
    cell.run("qdel", str(qjob), user=bob, check=True)
