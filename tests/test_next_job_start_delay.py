"""next_job_start_delay (NextJobStartDelay): once a job with it starts, none of its owner's
HTCondor jobs starts for that many seconds (at most MAX_NEXT_JOB_START_DELAY, default 600),
as HTCondor's schedd holds back its next start; the scheduler universe, Grid Engine's jobs
and other users' jobs are not held back (tests/test_next_job_start_delay_scope.py)."""

import os
from dataclasses import replace

from conftest import destroy_cell, make_cell, wait_for
from qtools import reasons
from schedkit import reasons as said
from schedkit import snapshot, starts
from gridtools.sched import inputs
from gridtools.sched.cycle import cycle


def delayed(sc, delays, condor=None, **config):
    """The scenario's snapshot with the jobs' NextJobStartDelay (``delays``: id -> seconds),
    its jobs HTCondor jobs on execute hosts (those of ``condor``, else all), and SchedConfig
    fields."""
    snap = snapshot(sc)
    jobs = tuple(replace(job, start_delay=float(delays.get(job.id, 0)),
                         shadow=condor is None or job.id in condor) for job in snap.jobs)
    return replace(snap, jobs=jobs, config=replace(snap.config, **config))


def test_a_start_with_a_delay_holds_back_the_owners_later_starts():
    """Job 1 (two tasks) asks for 30 seconds: its first task starts, and none of its
    owner's other HTCondor tasks in the pass (not its own second task, not job 2), with
    the time they wait for."""
    sc = {"hosts": ["h1"], "slots": 4, "now": 1000, "jobs": [{"id": 1, "tasks": [1, 2]}, {"id": 2}]}
    decisions = cycle(delayed(sc, {1: 30}))
    assert starts(decisions) == ["1.1 all.q@h1=1"]
    assert any(line.startswith("job dropped because a job started with next_job_start_delay holds back")
               for line in said(decisions, 2))
    assert decisions.reasons[2][0].args == (1030.0,)
    # capped by MAX_NEXT_JOB_START_DELAY
    decisions = cycle(delayed(sc, {1: 30}, max_start_delay=5.0))
    assert decisions.reasons[2][0].args == (1005.0,)
    # a job without the delay does not hold back the others
    assert len(cycle(delayed(sc, {})).starts) == 3


def test_the_hold_of_an_earlier_start_lasts_until_its_time():
    sc = {"hosts": ["h1"], "slots": 4, "now": 1000, "jobs": [{"id": 1}, {"id": 2}]}
    assert cycle(delayed(sc, {}, start_hold={"alice": 1010.0})).starts == []
    assert len(cycle(delayed({**sc, "now": 1010}, {}, start_hold={"alice": 1010.0})).starts) == 2
    # a scheduler universe job (DAGMan) is started all the same; a local universe one is not
    snap = delayed(sc, {}, start_hold={"alice": 1010.0})
    jobs = (replace(snap.jobs[0], universe="scheduler", shadow=False),
            replace(snap.jobs[1], universe="local", shadow=False))
    decisions = cycle(replace(snap, jobs=jobs))
    assert [s.job_id for s in decisions.starts] == [1]


def test_the_delay_is_read_from_the_jobs_ad():
    ad = 'Cmd = "/bin/true"\nNextJobStartDelay = 5 * 2\n'
    assert inputs.start_delay({"condor_ad": ad}) == 10.0
    assert inputs.start_delay({"condor_ad": 'Cmd = "/bin/true"\nNextJobStartDelay = 2.9\n'}) == 2.0
    assert inputs.start_delay({"condor_ad": 'Cmd = "/bin/true"\nNextJobStartDelay = -3\n'}) == 0.0
    assert inputs.start_delay({"condor_ad": 'Cmd = "/bin/true"\n'}) == 0.0
    # procs that differ: the largest, or the proc's own
    ads = [ad, "NextJobStartDelay = 20\n"]
    assert inputs.start_delay({"condor_ad": ads}) == 20.0
    assert inputs.start_delay({"condor_ad": ads}, 1) == 10.0


def start_dates(cell, cluster):
    out = cell.run("condor_q", str(cluster), "-af", "JobCurrentStartDate").stdout.split()
    return sorted(int(v) for v in out if v != "undefined")


def test_next_job_start_delay_in_a_running_cell(workdir):
    """A cluster of two procs asks for 1000 seconds, capped to 3 by MAX_NEXT_JOB_START_DELAY:
    its first proc starts, and its second and another HTCondor job of the same user
    submitted afterwards wait with the reason, then start 3 seconds after it, one at a
    time."""
    cell = make_cell(slots=4, start=False)
    try:
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write("MAX_NEXT_JOB_START_DELAY = 3\n")
        cell.start_daemon()
        with open(os.path.join(workdir, "job.sub"), "w") as fh:
            fh.write("executable = /bin/sleep\narguments = 300\nnext_job_start_delay = 1000\nqueue 2\n")
        with open(os.path.join(workdir, "other.sub"), "w") as fh:
            fh.write("executable = /bin/sleep\narguments = 300\nqueue 1\n")
        cluster = int(cell.run("condor_submit", "-terse", "job.sub", cwd=workdir,
                               check=True).stdout.split(".")[0])
        wait_for(lambda: len(start_dates(cell, cluster)) == 1)
        other = int(cell.run("condor_submit", "-terse", "other.sub", cwd=workdir,
                             check=True).stdout.split(".")[0])
        wait_for(lambda: any("next_job_start_delay" in line for line in reasons(cell, other)))
        assert start_dates(cell, other) == []
        assert len(start_dates(cell, cluster)) == 1
        # (the cap lets them start within seconds, not 1000)
        wait_for(lambda: len(start_dates(cell, cluster)) == 2 and len(start_dates(cell, other)) == 1,
                 timeout=20)
        first, second = start_dates(cell, cluster)
        assert second - first >= 2          # (start dates are whole seconds)
        assert start_dates(cell, other)[0] - first >= 2
        cell.run("condor_rm", str(cluster), str(other), check=True)
    finally:
        destroy_cell(cell)
