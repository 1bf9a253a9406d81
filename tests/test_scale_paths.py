"""Queries stay fast while many submissions wait to be taken in: the jobs of waiting
submit requests are laid over the published status with one pass over its jobs, not
one per request, and show as the daemon will show them."""

import os
import re
import signal

from conftest import unanswered, wait_for
from faulttools import daemon_pid

from gridtools.cli import status


class CountedRows(list):
    """A status's rows that count the passes made over them."""
    passes = 0

    def __iter__(self):
        self.passes += 1
        return super().__iter__()


def _snapshot(jobs):
    rows = CountedRows({"id": i, "state": "hqw", "tasks": None} for i in range(1, jobs + 1))
    info = {i: {"name": f"job{i % 50}", "owner": "gtalice"} for i in range(1, jobs + 1)}
    return {"rows": rows, "jobs": info}


def _requests(count, first, hold_every=0):
    found = []
    for k in range(count):
        spec = {"id": first + k, "submit_time": 1.0, "name": f"req{k}", "gid": 0}
        if hold_every and k % hold_every == 0:
            spec["hold_jid"] = ["job7"] if k % (2 * hold_every) == 0 else [f"req{k - 1}" if k else "job3"]
        found.append((spec, os.getuid()))
    return found


def _merged(jobs, requests):
    snap = _snapshot(jobs)
    status._merge_requests(snap, requests)
    return snap


def test_waiting_requests_are_laid_over_the_status_with_one_pass_over_its_jobs(monkeypatch):
    monkeypatch.setattr(status, "as_taken_in", lambda spec, uid, *_: dict(spec, uid=uid, owner="gtalice"))
    snap = _merged(2000, _requests(500, 10001, hold_every=10))
    assert snap["rows"].passes <= 1
    jobs = snap["jobs"]
    assert len(jobs) == 2500
    named_job7 = sorted(i for i in range(1, 2001) if i % 50 == 7)
    assert jobs[10001]["predecessors"] == named_job7            # a listed job's name
    assert jobs[10011]["predecessors"] == [10010]               # another waiting request's job
    assert jobs[10002]["predecessors"] == []
    states = {row["id"]: row["state"] for row in snap["rows"] if row["id"] > 10000}
    assert states[10001] == states[10011] == "hqw" and states[10002] == "qw"


def _rows(cell):
    return {fields[0]: fields[4] for fields in
            (line.split() for line in cell.run("qstat", check=True).stdout.splitlines()[2:]) if fields}


def _predecessors(cell, jid):
    out = cell.run("qstat", "-j", str(jid), check=True).stdout
    return re.findall(r"^(jid_predecessor_list(?: \(req\))?|hold_list|jid_ad_predecessor_list.*?): +(.*)$",
                      out, re.M)


def test_qstat_shows_waiting_submissions_as_the_daemon_then_shows_them(cell, workdir):
    first = int(cell.qsub("-terse", "-h", "-N", "first", "-b", "y", "true", cwd=workdir, check=True).stdout)
    wait_for(lambda: str(first) in _rows(cell))
    pid = daemon_pid(cell)
    os.kill(pid, signal.SIGSTOP)
    try:
        chain = int(cell.qsub("-terse", "-h", "-N", "chain", "-b", "y", "true", cwd=workdir, check=True).stdout)
        after_chain = int(cell.qsub("-terse", "-hold_jid", "chain", "-b", "y", "true", cwd=workdir,
                                    check=True).stdout)
        after_first = int(cell.qsub("-terse", "-hold_jid", "first", "-b", "y", "true", cwd=workdir,
                                    check=True).stdout)
        free = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
        before = _rows(cell)
        deps = {jid: _predecessors(cell, jid) for jid in (after_chain, after_first)}
    finally:
        os.kill(pid, signal.SIGCONT)
    assert {k: before.get(str(k)) for k in (chain, after_chain, after_first, free)} == \
        {chain: "hqw", after_chain: "hqw", after_first: "hqw", free: "hqw"}
    assert ("jid_predecessor_list", str(chain)) in deps[after_chain]
    assert ("jid_predecessor_list", str(first)) in deps[after_first]
    wait_for(lambda: unanswered(cell.root) == [])
    assert _rows(cell) == before
    assert {jid: _predecessors(cell, jid) for jid in deps} == deps
