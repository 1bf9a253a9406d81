"""The negotiator's further spins in a running daemon (sched_conf params NEGOTIATOR=1):
a submitter that comes while another's jobs run gets every free slot its idle jobs
match in the pass that follows its submission, not one of them there and the others
only at the daemon's next own pass (schedule_interval)."""

import os
import re

import pytest

from condortools import negotiated, submit
from conftest import destroy_cell, make_cell, wait_for

#: the daemon's own passes: far enough apart that a job left to the next one waits longer
#: than the tests wait
INTERVAL = "0:0:30"


@pytest.fixture
def cell(users):
    cell = make_cell(slots=4, start=False)
    try:
        negotiated(cell, "UID_DOMAIN = example.org\n")
        path = os.path.join(cell.root, "etc", "sched_conf")
        with open(path) as fh:
            text, count = re.subn(r"(?m)^schedule_interval\s+.*$", f"schedule_interval                 {INTERVAL}",
                                  fh.read())
        assert count == 1
        with open(path, "w") as fh:
            fh.write(text)
        cell.start_daemon()
        yield cell
    except BaseException:
        destroy_cell(cell)
        raise
    destroy_cell(cell)


def _submit(cell, workdir, user, count):
    return submit(cell, f"executable = /bin/sleep\narguments = 60\nqueue {count}\n", cwd=workdir, user=user,
                  name=f"{user}.sub")


def _running(cell, cluster):
    out = cell.run("condor_q", "-allusers", "-af", "ClusterId", "ProcId", "JobStatus").stdout
    return sorted(f"{c}.{p}" for c, p, s in (line.split() for line in out.splitlines())
                  if c == str(cluster) and s == "2")


def test_the_second_submitter_gets_both_free_slots_at_once(cell, workdir):
    """gtbob has used the pool before (his priority is worse than gtalice's, so his
    share of it is less than half); gtalice runs 2 of the 4 slots; gtbob's 2 jobs then
    both start within a few seconds (one of them waited for the daemon's next own pass)."""
    sched = cell.run("qconf", "-ssconf").stdout
    assert re.search(rf"(?m)^schedule_interval\s+{INTERVAL}$", sched), sched
    cell.run("condor_userprio", "-setprio", "gtbob@example.org", "0.6", check=True)
    alice = _submit(cell, workdir, "gtalice", 2)
    wait_for(lambda: len(_running(cell, alice)) == 2, timeout=20)
    bob = _submit(cell, workdir, "gtbob", 2)
    wait_for(lambda: len(_running(cell, bob)) == 2, timeout=8)
    assert len(_running(cell, alice)) == 2


def test_the_second_submitter_gets_the_slots_a_ceiling_leaves(cell, workdir):
    """gtalice has a ceiling of 1 slot and 4 jobs: she runs 1; gtbob's 4 jobs then take
    the 3 other slots within a few seconds."""
    cell.run("condor_userprio", "-setceiling", "gtalice@example.org", "1", check=True)
    alice = _submit(cell, workdir, "gtalice", 4)
    wait_for(lambda: len(_running(cell, alice)) == 1, timeout=20)
    bob = _submit(cell, workdir, "gtbob", 4)
    wait_for(lambda: len(_running(cell, bob)) == 3, timeout=8)
    assert len(_running(cell, alice)) == 1
