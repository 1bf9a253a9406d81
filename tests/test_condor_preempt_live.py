"""A negotiator preemption in a running daemon (sched_conf params NEGOTIATOR=1): the slot
its victim leaves goes to the proc that won the match, and the victim waits (it is not
started there again, to be preempted again at every pass); the claim is released when that
proc leaves the queue, and condor_status counts the slot as available again."""

import os
import re
import time

from condortools import negotiated
from conftest import destroy_cell, make_cell, wait_for
from qtools import passes_every_second

PREEMPTION = "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmittorPrio * 1.2\n"


def _cell(slots, extra="", every_second=False):
    cell = make_cell(slots=slots, start=False)
    try:
        negotiated(cell, "UID_DOMAIN = example.org\n" + PREEMPTION + extra)
        if every_second:
            passes_every_second(cell)
        cell.start_daemon()
    except BaseException:
        destroy_cell(cell)
        raise
    return cell


def _submit(cell, workdir, user, count):
    path = os.path.join(workdir, f"{user}.sub")
    with open(path, "w") as fh:
        fh.write(f"executable = /bin/sleep\narguments = 600\naccounting_group = g{user}\n"
                 f"accounting_group_user = {user}\nqueue {count}\n")
    out = cell.run("condor_submit", path, cwd=workdir, check=True).stdout
    return int(re.search(r"submitted to cluster (\d+)", out).group(1))


def _worse_fills(cell, workdir, slots):
    """u2 fills the cell's slots; then u1's priority is made better (10) than u2's (20).
    u2's cluster id."""
    worse = _submit(cell, workdir, "u2", slots)
    wait_for(lambda: len(_running(_queue(cell), worse)) == slots, timeout=30)
    cell.run("condor_userprio", "-setprio", "gu1.u1@example.org", "10", check=True)
    cell.run("condor_userprio", "-setprio", "gu2.u2@example.org", "20", check=True)
    return worse


def _queue(cell):
    """[(proc id, JobStatus, NumJobStarts)] of every job in the queue."""
    rows = []
    for line in cell.run("condor_q", "-af", "ClusterId", "ProcId", "JobStatus", "NumJobStarts").stdout.splitlines():
        cluster, proc, status, starts = line.split()
        rows.append((f"{cluster}.{proc}", int(status), 0 if starts == "undefined" else int(starts)))
    return rows


def _running(rows, cluster):
    return sorted(p for p, status, _starts in rows if status == 2 and p.startswith(f"{cluster}."))


def _preemptions(cell):
    with open(os.path.join(cell.root, "spool", "messages")) as fh:
        return len(re.findall(r"preempted from slot", fh.read()))


def test_the_preempting_procs_run_and_the_victims_wait_without_restarting(workdir):
    """u2 (priority 20) fills the 3 slots, then u1 (priority 10) submits 3 procs, more
    than its share: its procs that preempt run on the slots their victims leave, and
    u2's procs wait, each started once, while the passes go on (they were restarted on
    the freed slot and preempted again at every pass)."""
    cell = _cell(3)
    try:
        worse = _worse_fills(cell, workdir, 3)
        better = _submit(cell, workdir, "u1", 3)

        def settled():
            rows = _queue(cell)
            mine = _running(rows, better)
            return len(mine) >= 2 and len(mine) + len(_running(rows, worse)) == 3 \
                and _preemptions(cell) == len(mine) and rows
        first = wait_for(settled, timeout=30)
        end = time.time() + 4                           # passes go on: nothing changes
        while time.time() < end:
            rows = _queue(cell)
            assert rows == first
        assert all(starts <= 1 for _p, _status, starts in rows), rows
        held_by = cell.run("condor_status", "-af", "AccountingGroup").stdout.split()
        assert held_by.count("gu1.u1@example.org") == len(_running(rows, better))
    finally:
        destroy_cell(cell)


def test_a_slot_claimed_for_a_proc_that_is_removed_is_available_again(workdir):
    """The queue is disabled, so the proc that preempted cannot start on the slot its
    victim left: the slot is Claimed/Idle, held by the proc's user. condor_rm -all: the
    claim is released, and once the queue is enabled again condor_status -avail and
    -total count both slots as Unclaimed (the slot does not stay Claimed/Idle)."""
    cell = _cell(2)
    try:
        _worse_fills(cell, workdir, 2)
        cell.run("qmod", "-d", "all.q", check=True)
        better = _submit(cell, workdir, "u1", 1)
        wait_for(lambda: "Claimed Idle gu1.u1@example.org" in
                 cell.run("condor_status", "-af", "State", "Activity", "AccountingGroup").stdout, timeout=30)
        assert _running(_queue(cell), better) == []
        cell.run("condor_rm", "-all", check=True)
        wait_for(lambda: _queue(cell) == [], timeout=30)
        cell.run("qmod", "-e", "all.q", check=True)
        wait_for(lambda: cell.run("condor_status", "-af", "State", "Activity").stdout == "Unclaimed Idle\n" * 2,
                 timeout=30)
        assert cell.run("condor_status", "-avail", "-af", "Name").stdout.count("@") == 2
        total = cell.run("condor_status", "-total").stdout.splitlines()[-1].split()
        assert total[:5] == ["Total", "2", "0", "0", "2"]      # Total Owner Claimed Unclaimed
        with open(os.path.join(cell.root, "spool", "messages")) as fh:
            assert f"for job {better}.1 is released (job left the queue)" in fh.read()
    finally:
        destroy_cell(cell)


def test_three_submitters_preempt_at_most_once_per_negotiator_interval(workdir):
    """Priorities 10/20/30 on 6 slots with PREEMPTION_REQUIREMENTS = True: the shares
    are fractions rounded up, so every cycle could take one more slot from another
    submitter. With NEGOTIATOR_INTERVAL = 5, u1, which submits while the cycle that
    preempted for u2 is recent, gets its slots from the next cycle, which the daemon
    runs by itself; the procs are not started over and over (they were at every pass,
    hundreds of starts in 30 s)."""
    cell = _cell(6, "PREEMPTION_REQUIREMENTS = True\nNEGOTIATOR_INTERVAL = 5\n")
    try:
        worst = _submit(cell, workdir, "u3", 6)
        wait_for(lambda: len(_running(_queue(cell), worst)) == 6, timeout=30)
        for user, prio in (("u1", 10), ("u2", 20), ("u3", 30)):
            cell.run("condor_userprio", "-setprio", f"g{user}.{user}@example.org", str(prio), check=True)
        began = time.time()
        _submit(cell, workdir, "u2", 6)
        best = _submit(cell, workdir, "u1", 6)
        wait_for(lambda: _running(_queue(cell), best), timeout=30)
        end = time.time() + 6                   # passes go on: a cycle preempts every 5 s at most
        while time.time() < end:
            rows = _queue(cell)
            cycles = int((time.time() - began) / 5) + 1
            assert max(starts for _p, _status, starts in rows) <= cycles + 1, rows
            assert _preemptions(cell) <= 6 * cycles
        assert sum(1 for _p, status, _s in rows if status == 2) == 6
    finally:
        destroy_cell(cell)


def test_a_job_preempted_by_rank_retires_for_max_job_retirement_time_then_leaves(workdir):
    """RANK prefers a job that comes later: the running one retires for
    MAXJOBRETIREMENTTIME seconds (a constant policy, the shipped kind), then is vacated
    and the preferred one runs (it waited for the running job's whole run)."""
    cell = _cell(1, "RANK = (TARGET.Preferred =?= True) * 10\nMAXJOBRETIREMENTTIME = 2\n", every_second=True)
    try:
        first = _submit(cell, workdir, "u1", 1)
        wait_for(lambda: _running(_queue(cell), first) == [f"{first}.0"], timeout=30)
        path = os.path.join(workdir, "preferred.sub")
        with open(path, "w") as fh:
            fh.write("executable = /bin/sleep\narguments = 600\n+Preferred = True\nqueue\n")
        out = cell.run("condor_submit", path, cwd=workdir, check=True).stdout
        preferred = int(re.search(r"submitted to cluster (\d+)", out).group(1))
        wait_for(lambda: "Retiring" in cell.run("condor_status", "-af", "Activity").stdout, timeout=30)
        began = time.time()
        wait_for(lambda: _running(_queue(cell), preferred) == [f"{preferred}.0"], timeout=30)
        assert time.time() - began < 20
        assert _running(_queue(cell), first) == []
    finally:
        destroy_cell(cell)
