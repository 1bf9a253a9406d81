"""HTCondor's concurrency limits: jobs that use a limited resource run at most up to its
capacity (``<NAME>_LIMIT``, a set's default, CONCURRENCY_LIMIT_DEFAULT), in Grid
Engine's order and in the negotiator's; a scenario of the pass, and a running daemon."""

from dataclasses import replace

import pytest

from conftest import destroy_cell, make_cell, wait_for
from condortools import negotiated, submit, wait_status
from gridtools.sched import inputs
from gridtools.sched.cycle import cycle
from schedkit import reasons, snapshot, starts


def limited(sc, uses, capacities, running_uses=()):
    """The scenario's snapshot with its jobs HTCondor jobs using ``uses`` (job id ->
    limits), its running tasks ``running_uses`` and the capacities given."""
    snap = snapshot(sc)
    jobs = tuple(replace(j, shadow=True, limits=uses.get(j.id, ())) for j in snap.jobs)
    running = tuple(replace(r, shadow=True, limits=running_uses) for r in snap.running)
    return replace(snap, jobs=jobs, running=running,
                   config=replace(snap.config, concurrency=tuple(sorted(capacities.items()))))


SCENARIO = {"hosts": ["h1", "h2"], "slots": 4,
            "jobs": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}]}


def test_a_limit_lets_as_many_run_as_its_capacity():
    snap = limited(SCENARIO, {1: (("xsw", 1.0),), 2: (("xsw", 1.0),), 3: (("xsw", 1.0),)}, {"xsw": 2.0})
    decisions = cycle(snap)
    assert sorted(s.split()[0] for s in starts(decisions)) == ["1.1", "2.1", "4.1"]    # 4 uses none
    assert reasons(decisions, 3) == ["job dropped because concurrency limit xsw (2) is reached"]


def test_running_jobs_and_amounts_count():
    running = {"running": [{"job": 9, "granted": "all.q@h1=1"}]}
    snap = limited({**SCENARIO, **running}, {1: (("xsw", 2.0),), 2: (("db", 1.0), ("xsw", 1.0))},
                   {"xsw": 3.0, "db": 5.0}, running_uses=(("xsw", 1.0),))
    decisions = cycle(snap)
    assert sorted(s.split()[0] for s in starts(decisions)) == ["1.1", "3.1", "4.1"]
    assert reasons(decisions, 2) == ["job dropped because concurrency limit xsw (3) is reached"]
    # a name without a capacity is free
    free = cycle(limited(SCENARIO, {1: (("other", 5.0),), 2: (("other", 5.0),)}, {}))
    assert len(starts(free)) == 4


def test_limits_read_from_the_job_ad():
    spec = {"condor_ad": 'MyType = "Job"\nConcurrencyLimits = "db,xsw:2"\nOwner = "a"\n', "universe": 5}
    assert inputs.concurrency_limits(spec) == (("db", 1.0), ("xsw", 2.0))
    spec["condor_ad"] = ['ConcurrencyLimits = strcat("SWX:2 ", "net_a")\n', "ProcId = 1\n"]
    assert inputs.concurrency_limits(spec) == (("swx", 2.0), ("net_a", 1.0))
    assert inputs.concurrency_limits({"condor_ad": 'Owner = "a"\n'}) == ()
    assert inputs.concurrency_limits({**spec, "universe": 12}) == ()          # (local: no slot, no limits)
    spec["condor_ad"] = "ConcurrencyLimits = TARGET.Network\n"                # (the machine's: none)
    assert inputs.concurrency_limits(spec) == ()
    # a weight that is not above 0, or no number, counts 1 (as HTCondor's negotiator
    # counts it): a job cannot give back what the limit lets others use
    spec["condor_ad"] = 'ConcurrencyLimits = "license:-10,db:nan,x:0,y:0.5"\n'
    assert inputs.concurrency_limits(spec) == (("license", 1.0), ("db", 1.0), ("x", 1.0), ("y", 0.5))


def test_limits_are_read_in_any_case_and_from_every_proc():
    """A ClassAd's names have no case, and its last line of a name counts: a job that
    writes ``concurrencylimits`` is held to them; procs that differ are each held to
    every limit of the cluster at its most (no proc escapes a limit another declares)."""
    spec = {"condor_ad": 'MyType = "Job"\nconcurrencylimits = "dblic"\n', "universe": 5}
    assert inputs.concurrency_limits(spec) == (("dblic", 1.0),)
    spec["condor_ad"] = 'CONCURRENCYLIMITS = "a"\nOwner = "x"\nConcurrencyLimits = "b:2"\n'
    assert inputs.concurrency_limits(spec) == (("b", 2.0),)
    spec["condor_ad"] = ['Owner = "x"\n', 'concurrencyLimits = "dblic:2"\n', 'ConcurrencyLimits = "dblic,net"\n']
    assert inputs.concurrency_limits(spec) == (("dblic", 2.0), ("net", 1.0))
    assert not inputs.limits_need_machine(spec)


@pytest.mark.parametrize("negotiator", [False, True])
def test_a_daemon_keeps_jobs_within_their_limits(workdir, negotiator):
    cell = make_cell(slots=4, start=False)
    try:
        negotiated(cell, "XSW_LIMIT = 1\nCONCURRENCY_LIMIT_DEFAULT = 2\nCONCURRENCY_LIMIT_DEFAULT_LARGE = 3\n",
                   on=negotiator)
        cell.start_daemon()
        body = "executable = /bin/sleep\narguments = 60\nconcurrency_limits = {}\nqueue {}\n"
        xsw = submit(cell, body.format("XSW", 2), cwd=workdir, name="x.sub")
        other = submit(cell, body.format("other", 3), cwd=workdir, name="o.sub")
        large = submit(cell, body.format("large.db", 4), cwd=workdir, name="l.sub")

        def status(cluster):
            return sorted(cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split())
        wait_for(lambda: status(xsw) == ["1", "2"] and status(other) == ["1", "2", "2"])
        wait_for(lambda: "concurrency limit xsw (1) is reached" in cell.run("qstat", "-j", str(xsw)).stdout)
        assert "concurrency limit other (2) is reached" in cell.run("qstat", "-j", str(other)).stdout
        # the large set's members have 3 each, but the cell has 4 slots: 1 + 2 running already
        assert status(large).count("2") <= 1
        cell.run("condor_rm", str(xsw), str(other), check=True)
        wait_for(lambda: status(large) == ["1", "2", "2", "2"])
        cell.run("condor_rm", str(large), check=True)
    finally:
        destroy_cell(cell)


def test_a_running_proc_holds_the_limits_it_started_with_whatever_condor_qedit_says(workdir):
    """A running proc edited to name no limit still holds the one it started with (the
    next job naming it waits), and one edited to name a limit it did not start with
    does not take it from the jobs that wait for it."""
    cell = make_cell(slots=4, start=False)
    try:
        negotiated(cell, "LIC_LIMIT = 1\nNET_LIMIT = 1\n", on=False)
        cell.start_daemon()
        body = "executable = /bin/sleep\narguments = 300\nconcurrency_limits = {}\nqueue\n"
        first = submit(cell, body.format("lic"), cwd=workdir, name="a.sub")
        wait_status(cell, f"{first}.0", 2)
        assert cell.run("condor_qedit", str(first), "ConcurrencyLimits", '"net"').returncode == 0
        second = submit(cell, body.format("lic"), cwd=workdir, name="b.sub")
        net = submit(cell, body.format("net"), cwd=workdir, name="c.sub")
        wait_status(cell, f"{net}.0", 2)
        wait_for(lambda: "concurrency limit lic (1) is reached" in cell.run("qstat", "-j", str(second)).stdout)
        assert cell.run("condor_q", str(second), "-af", "JobStatus").stdout == "1\n"
        cell.run("condor_rm", str(first), check=True)
        wait_status(cell, f"{second}.0", 2)
        cell.run("condor_rm", str(second), str(net), check=True)
    finally:
        destroy_cell(cell)


# ---------------------------------------------------------------- limits that need the machine

def test_limits_that_need_the_machine_are_counted_on_the_host_a_job_would_use():
    snap = limited(SCENARIO, {}, {"lic_h1": 1.0, "lic_h2": 1.0})
    by_host = {"h1": (("lic_h1", 1.0),), "h2": (("lic_h2", 1.0),)}
    jobs = tuple(replace(j, machine_limits=j.id != 4) for j in snap.jobs)
    snap = replace(snap, jobs=jobs, host_limits={1: by_host, 2: by_host, 3: by_host})
    decisions = cycle(snap)
    started = sorted(s.split()[0] for s in starts(decisions))
    assert started == ["1.1", "2.1", "4.1"]                 # one on each host, and the job without limits
    hosts = {s.split()[0]: s.split()[1] for s in starts(decisions)}
    assert hosts["1.1"] == "all.q@h1=1" and hosts["2.1"] == "all.q@h2=1"
    assert "job dropped because concurrency limit lic_h1 (1) is reached" in " ".join(reasons(decisions, 3))
    # a running task uses the limits of its own host
    running = {"running": [{"job": 9, "granted": "all.q@h1=1"}]}
    snap = limited({**SCENARIO, **running}, {}, {"lic_h1": 1.0, "lic_h2": 1.0}, running_uses=(("lic_h1", 1.0),))
    snap = replace(snap, jobs=tuple(replace(j, machine_limits=True) for j in snap.jobs),
                   host_limits={j.id: by_host for j in snap.jobs})
    decisions = cycle(snap)
    assert starts(decisions) == ["1.1 all.q@h2=1"]


def test_limits_read_from_the_job_ad_that_need_the_machine():
    from gridtools.classad import parse_ad
    spec = {"condor_ad": 'MyType = "Job"\nConcurrencyLimits = strcat("lic_", TARGET.Machine, ":", MY.Seats)\n'
                         'Seats = 2\nOwner = "a"\n', "universe": 5}
    assert inputs.concurrency_limits(spec) == () and inputs.limits_need_machine(spec)
    job, machine = parse_ad(spec["condor_ad"]), parse_ad('Machine = "node7"\n')
    assert inputs.limits_in(job, machine) == (("lic_node7", 2.0),)
    assert not inputs.limits_need_machine({**spec, "condor_ad": 'ConcurrencyLimits = "db"\n'})
    assert not inputs.limits_need_machine({**spec, "universe": 12})


def running_hosts(cell, cluster):
    """The hosts the running procs of ``cluster`` run on, sorted (one entry per proc)."""
    out = cell.run("condor_q", str(cluster), "-af", "JobStatus", "RemoteHost").stdout.split("\n")
    return sorted(line.split()[1].rpartition("@")[2] for line in out if line.startswith("2 "))


@pytest.mark.parametrize("negotiator", [False, True])
def test_a_daemon_counts_limits_that_name_the_machine(workdir, negotiator):
    cell = make_cell(slots=2, hosts=["p1", "p2"], start=False)
    try:
        negotiated(cell, "LIC_P1_LIMIT = 1\nLIC_P2_LIMIT = 1\n", on=negotiator)
        cell.start_daemon()
        cluster = submit(cell, "executable = /bin/sleep\narguments = 60\n"
                               'concurrency_limits_expr = strcat("lic_", TARGET.Machine)\nqueue 3\n', cwd=workdir)
        wait_for(lambda: running_hosts(cell, cluster) == ["p1", "p2"])
        wait_for(lambda: "concurrency limit lic_p" in cell.run("qstat", "-j", str(cluster)).stdout)
        assert sorted(cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split()) == ["1", "2", "2"]
        cell.run("condor_rm", f"{cluster}.0", check=True)        # a license frees: the third runs there
        wait_for(lambda: len(running_hosts(cell, cluster)) == 2 and
                 sorted(cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split()) == ["2", "2"])
        cell.run("condor_rm", str(cluster), check=True)
    finally:
        destroy_cell(cell)


def test_the_negotiator_tries_the_next_machine_when_a_limit_there_is_full(workdir):
    """As HTCondor's negotiator checks the limits of each candidate: a job whose limit is
    full on the machine it ranks first goes to another."""
    cell = make_cell(slots=2, hosts=["p1", "p2"], start=False)
    try:
        negotiated(cell, 'LIC_P1_LIMIT = 1\nNEGOTIATOR_PRE_JOB_RANK = Machine == "p1"\n')
        cell.start_daemon()
        cluster = submit(cell, "executable = /bin/sleep\narguments = 60\n"
                               'concurrency_limits_expr = strcat("lic_", TARGET.Machine)\nqueue 3\n', cwd=workdir)
        wait_for(lambda: running_hosts(cell, cluster) == ["p1", "p2", "p2"])
        cell.run("condor_rm", str(cluster), check=True)
    finally:
        destroy_cell(cell)
