"""MAX_JOBS_RUNNING: the schedd runs at most that many HTCondor jobs on execute hosts at
once (seed 002's throttle), in Grid Engine's order and in the negotiator's; Grid Engine
jobs and the local universe do not count."""

import os

import pytest

from conftest import destroy_cell, make_cell, wait_for
from condortools import negotiated, submit


def statuses(cell, cluster):
    return sorted(cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split())


@pytest.mark.parametrize("negotiator", [False, True])
def test_the_schedd_runs_at_most_max_jobs_running(workdir, negotiator):
    cell = make_cell(slots=3, start=False)
    try:
        negotiated(cell, "MAX_JOBS_RUNNING = 1\n", on=negotiator)
        cell.start_daemon()
        cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue 3\n", cwd=workdir)
        wait_for(lambda: statuses(cell, cluster) == ["1", "1", "2"])
        # a Grid Engine job and a local universe job still run beside it
        jid = cell.qsub("-terse", "-b", "y", "true", cwd=workdir, check=True).stdout.strip()
        local = submit(cell, "universe = local\nexecutable = /bin/true\nqueue\n", cwd=workdir)
        cell.wait_finished(int(jid))
        wait_for(lambda: statuses(cell, local) == [])
        waiting = cell.run("condor_q", str(cluster), "-af:j", "JobStatus").stdout.split("\n")
        idle = next(line.split()[0] for line in waiting if line.endswith(" 1"))
        out = cell.run("qstat", "-j", idle.split(".")[0]).stdout
        assert "job dropped because the schedd runs MAX_JOBS_RUNNING (1) jobs" in out
        assert statuses(cell, cluster) == ["1", "1", "2"]
        first = next(line.split()[0] for line in waiting if line.endswith(" 2"))
        # a higher limit lets the others run
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write("MAX_JOBS_RUNNING = 3\n")
        cell.run("condor_reconfig", check=True)
        wait_for(lambda: statuses(cell, cluster) == ["2", "2", "2"])
        # a lower one vacates the last started until as many run as it allows
        with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
            fh.write("MAX_JOBS_RUNNING = 1\n")
        cell.run("condor_reconfig", check=True)
        wait_for(lambda: statuses(cell, cluster) == ["1", "1", "2"])
        assert cell.run("condor_q", first, "-af", "JobStatus").stdout == "2\n"      # the first stays
        cell.run("condor_rm", str(cluster), check=True)
    finally:
        destroy_cell(cell)


def test_the_default_is_the_machines_memory_up_to_ten_thousand(cell):
    assert cell.run("condor_config_val", "MAX_JOBS_RUNNING").stdout.startswith("MIN({")
    memory = int(cell.run("condor_config_val", "DETECTED_MEMORY").stdout)
    assert memory == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)


def test_the_daemon_applies_the_default(cell):
    """Unset, the limit is the machine's memory in megabytes up to 10000, from the first
    pass on (nothing logged as unreadable)."""
    from types import SimpleNamespace

    from gridtools.daemon.condor import Condor
    logged = []
    memory = int(cell.run("condor_config_val", "DETECTED_MEMORY").stdout)
    old = os.environ.get("GRIDTOOLS_ROOT")
    os.environ["GRIDTOOLS_ROOT"] = cell.root
    try:
        import time
        from gridtools.spool import config as spool_config
        # (what a reading of the configuration needs of the daemon's state: it publishes it)
        state = SimpleNamespace(log=logged.append, need_schedule=False, need_publish=False,
                                config=spool_config.load(), started=time.time())
        assert Condor()._max_jobs_running(state) == min(memory, 10000)
    finally:
        os.environ.pop("GRIDTOOLS_ROOT") if old is None else os.environ.update(GRIDTOOLS_ROOT=old)
    assert not [line for line in logged if "MAX_JOBS_RUNNING" in line]
