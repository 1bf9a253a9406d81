"""Acceptance, end to end: resource reservation and backfilling with a real daemon.

The seed's license example: five licenses (a global consumable), three 1-slot hosts,
L4_RR (-p 100, 4 licenses), L5_RR (5) and L1_RR (1), all -R y. The seed's priorities;
L4_RR starts, L5_RR is reserved for L4_RR's end and L1_RR, which would fit beside
L4_RR, is not backfilled into L5_RR's reservation; params MONITOR=1 writes the passes
to the schedule file. Then a big -R y parallel job is not starved by a stream of small
jobs, while a short job is backfilled before it and a long one is not."""

import os
import time

from conftest import destroy_cell, make_cell, wait_for
from qtools import add_object, jid_of, set_sched

import pytest


def add_complex(cell, row):
    text = cell.run("qconf", "-sc", check=True).stdout
    path = os.path.join(cell.root, "complex")
    with open(path, "w") as fh:
        fh.write(text + row + "\n")
    cell.run("qconf", "-Mc", path, check=True)


def records(cell, jid):
    return [r for r in cell.accounting() if r[5] == str(jid)]


def times(cell, jid):
    """(start, end) of a finished job from its accounting record."""
    rec = wait_for(lambda: records(cell, jid), timeout=30)[0]
    return int(rec[9]), int(rec[10])


@pytest.fixture
def license_cell():
    cell = make_cell(slots=1, hosts=["bilbur", "carc", "es-ergb01-01"], execds=True)
    try:
        add_complex(cell, "license             lic        INT       <=    YES         YES        0        100")
        cell.run("qconf", "-mattr", "exechost", "complex_values", "license=5", "global", check=True)
        # the guide's example assumes N1 Grid Engine 6's weights (8.1.9's differ)
        set_sched(cell, max_reservation="10", params="MONITOR=1", weight_priority="1",
                  weight_urgency="0.1", weight_ticket="0.01", weight_waiting_time="0")
        yield cell
    finally:
        destroy_cell(cell)


def test_the_license_example(license_cell, workdir):
    cell = license_cell
    spec = [("L4_RR", "h_rt=4,license=4", ["-p", "100"]), ("L5_RR", "h_rt=4,license=5", []),
            ("L1_RR", "h_rt=5,license=1", [])]
    jobs = [jid_of(cell.qsub("-h", "-R", "y", "-N", name, "-l", req, *extra, "-b", "y", "sleep", "3",
                             cwd=workdir)) for name, req, extra in spec]
    cell.run("qrls", *map(str, jobs), check=True)

    def priorities():
        found = {}
        for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
            f = line.split()
            found[int(f[0])] = (f[1], f[4])
        return found if found.get(jobs[0], ("", ""))[1] == "r" else None
    shown = wait_for(priorities)
    # the seed's order; -p normalized over -1024..1024 as Grid Engine 8.1.9 does it
    assert [shown[j][0] for j in jobs] == ["0.62883", "0.60500", "0.50500"]
    wait_for(lambda: all(records(cell, j) for j in jobs), timeout=40)
    l4, l5, l1 = (times(cell, j) for j in jobs)
    assert l5[0] >= l4[1] and l1[0] >= l5[1] - 0       # L1_RR was not backfilled beside L4_RR
    text = open(os.path.join(cell.root, "spool", "schedule")).read()
    first = [b for b in text.split("::::::::\n") if b.strip()][0].splitlines()
    states = [(int(line.split(":")[0]), line.split(":")[2], line.split(":")[7]) for line in first]
    assert states == [(jobs[0], "STARTING", "license"), (jobs[0], "STARTING", "slots"),
                      (jobs[1], "RESERVING", "license"), (jobs[1], "RESERVING", "slots"),
                      (jobs[2], "RESERVING", "license"), (jobs[2], "RESERVING", "slots")]
    start = [int(line.split(":")[3]) for line in first]
    assert start[2] == start[0] + 4 and start[4] == start[2] + 4        # after L4_RR, after L5_RR
    assert first[0].endswith(":G:global:license:4.000000")
    assert any(line.startswith(f"{jobs[2]}:1:STARTING:") for line in text.splitlines())


def mpi_pe():
    return ("pe_name mpi4\nslots 16\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
            "stop_proc_args NONE\nallocation_rule $round_robin\ncontrol_slaves FALSE\n"
            "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")


def test_a_big_reserved_job_is_not_starved_and_only_short_jobs_backfill(workdir):
    cell = make_cell(slots=2, hosts=["h1", "h2"], execds=True)
    try:
        add_object(cell, "-Ap", mpi_pe())
        cell.run("qconf", "-aattr", "queue", "pe_list", "mpi4", "all.q", check=True)
        set_sched(cell, max_reservation="10", default_duration="0:0:30")
        busy = [jid_of(cell.qsub("-l", "h_rt=8", "-b", "y", "sleep", "6", cwd=workdir)) for _ in range(3)]
        wait_for(lambda: len([l for l in cell.run("qstat").stdout.splitlines() if " r " in l]) == 3)
        big = jid_of(cell.qsub("-R", "y", "-pe", "mpi4", "4", "-l", "h_rt=4", "-b", "y", "sleep", "2",
                               cwd=workdir))
        short = jid_of(cell.qsub("-l", "h_rt=2", "-b", "y", "sleep", "1", cwd=workdir))
        long = jid_of(cell.qsub("-l", "h_rt=60", "-b", "y", "sleep", "1", cwd=workdir))
        stream, until = [], time.time() + 8
        while time.time() < until:                       # small jobs keep coming
            stream.append(jid_of(cell.qsub("-l", "h_rt=20", "-b", "y", "sleep", "1", cwd=workdir)))
            time.sleep(0.7)
        big_start, big_end = times(cell, big)
        short_start, _ = times(cell, short)
        long_start, _ = times(cell, long)
        busy_end = max(times(cell, j)[1] for j in busy)
        assert short_start < big_start                   # backfilled before the reservation
        assert long_start >= big_start                   # would have delayed the big job
        assert big_start <= busy_end + 5                 # not starved by the stream
        assert all(times(cell, j)[0] >= big_start for j in stream[2:])
    finally:
        destroy_cell(cell)
