"""MAX_STARTERS: an execution host runs at most that many jobs at once, whatever its slots
(LoadLeveler's startd rejects a start once "the job limit set for the MAX_STARTERS keyword
has been reached", and is Busy: "the maximum number of jobs are running on this machine")."""

import os
from dataclasses import replace

from conftest import destroy_cell, make_cell, wait_for
from qtools import jid_of, reasons, state_of, wait_state
from schedkit import reasons as said
from schedkit import snapshot, starts
from gridtools.sched.cycle import cycle

MPI = ("pe_name mpi\nslots 16\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
       "stop_proc_args NONE\nallocation_rule $round_robin\ncontrol_slaves FALSE\n"
       "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")


def limited(sc, **limits):
    """The scenario's snapshot with MAX_STARTERS of the hosts named."""
    snap = snapshot(sc)
    return replace(snap, hosts={name: replace(host, max_starters=limits.get(name, 0))
                                for name, host in snap.hosts.items()})


def per_host(decisions):
    found = {}
    for start in decisions.starts:
        for host in {g[1] for g in start.granted}:
            found[host] = found.get(host, 0) + 1
    return found


def test_a_host_starts_no_more_jobs_than_its_max_starters():
    """Four slots on each host; h1 runs one job already and may run one, h2 may run two:
    of four serial jobs, two start (both on h2), the others wait with the reason."""
    sc = {"hosts": ["h1", "h2"], "slots": 4, "running": [{"job": 9, "granted": "all.q@h1=1"}],
          "jobs": [{"id": i} for i in (1, 2, 3, 4)]}
    decisions = cycle(limited(sc, h1=1, h2=2))
    assert per_host(decisions) == {"h2": 2}
    assert 'queue instance "all.q@h1" dropped because host "h1" is busy: it runs MAX_STARTERS (1) jobs' \
        in said(decisions, 3)
    assert 'queue instance "all.q@h2" dropped because host "h2" is busy: it runs MAX_STARTERS (2) jobs' \
        in said(decisions, 4)
    # without the limit every job starts
    assert len(cycle(snapshot(sc)).starts) == 4


def test_a_parallel_job_counts_once_on_each_of_its_hosts():
    """A round-robin job of four slots runs on both hosts (two slots each): one job on each
    host, so with MAX_STARTERS 1 nothing else starts there however many slots are free."""
    sc = {"hosts": ["h1", "h2"], "slots": 4, "queue": {"pe_list": "make mpi"},
          "objects": {"pe/mpi": MPI}, "jobs": [{"id": 1, "qsub": "-pe mpi 4"}, {"id": 2}]}
    decisions = cycle(limited(sc, h1=1, h2=1))
    assert starts(decisions) == ["1.1 all.q@h1=2,all.q@h2=2"]
    assert not decisions.starts[1:]
    text = said(decisions, 2)
    assert any("MAX_STARTERS (1)" in line and '"all.q@h1"' in line for line in text)
    assert any("MAX_STARTERS (1)" in line and '"all.q@h2"' in line for line in text)
    # the running parallel job holds both hosts in the next pass too
    running = {"job": 1, "granted": "all.q@h1=2,all.q@h2=2", "pe": "mpi"}
    later = cycle(limited({**sc, "running": [running], "jobs": [{"id": 2}]}, h1=1, h2=1))
    assert later.starts == []


def host_state(cell, host):
    for line in cell.run("qhost", "-st").stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == host:
            return fields[-1]
    return None


def test_max_starters_in_a_running_cell(workdir):
    """MAX_STARTERS = 1 for every host, 2 for node2 from its own configuration file: of
    four jobs (of both dialects) on two hosts of three slots, one runs on testhost and two
    on node2; the fourth waits with the reason, and both hosts show Busy."""
    cell = make_cell(slots=3, hosts=["testhost", "node2"], start=False)
    try:
        etc = os.path.join(cell.root, "etc")
        os.makedirs(os.path.join(etc, "hosts"))
        with open(os.path.join(etc, "hosts", "node2.local"), "w") as fh:
            fh.write("MAX_STARTERS = 2\n")
        with open(os.path.join(etc, "condor_config"), "a") as fh:
            fh.write("MAX_STARTERS = 1\nLOCAL_CONFIG_FILE = $(ETC)/hosts/$(HOSTNAME).local\n"
                     "REQUIRE_LOCAL_CONFIG_FILE = false\n")
        cell.start_daemon()
        jobs = [jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir)) for _ in range(3)]
        with open(os.path.join(workdir, "job.sub"), "w") as fh:
            fh.write("executable = /bin/sleep\narguments = 300\nqueue\n")
        out = cell.run("condor_submit", "-terse", "job.sub", cwd=workdir, check=True).stdout
        jobs.append(int(out.split(".")[0]))
        wait_for(lambda: sum(state_of(cell, j) == "r" for j in jobs) == 3)
        hosts = cell.run("qstat", "-s", "r").stdout
        assert hosts.count("@testhost") == 1 and hosts.count("@node2") == 2
        waiting = next(j for j in jobs if state_of(cell, j) == "qw")
        wait_for(lambda: any("MAX_STARTERS" in line for line in reasons(cell, waiting)))
        lines = reasons(cell, waiting)
        assert 'queue instance "all.q@testhost" dropped because host "testhost" is busy: ' \
               "it runs MAX_STARTERS (1) jobs" in lines
        assert 'queue instance "all.q@node2" dropped because host "node2" is busy: ' \
               "it runs MAX_STARTERS (2) jobs" in lines
        wait_for(lambda: host_state(cell, "testhost") == "Busy" and host_state(cell, "node2") == "Busy")
        # a job that ends makes room for the one waiting
        first = next(j for j in jobs if state_of(cell, j) == "r")
        cell.run("qdel", str(first), check=True)
        wait_state(cell, waiting, ("r",))
    finally:
        destroy_cell(cell)
