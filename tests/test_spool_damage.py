"""What a crash or a full disk leaves damaged in the spool costs no job its identity
or its record: a job id hint that says nothing hands out no id again, and an
accounting or history file whose last record was cut short does not swallow the next
one."""

import os
import shutil

from conftest import wait_for
from qtools import jid_of


def _messages(cell):
    with open(os.path.join(cell.root, "spool", "messages")) as fh:
        return fh.read()


def test_a_damaged_job_id_hint_hands_out_no_id_of_an_ended_job(cell, workdir):
    jobs = [jid_of(cell.qsub("-b", "y", "true", cwd=workdir)) for _ in range(3)]
    for jid in jobs:
        cell.wait_finished(jid)
    cell.stop_daemon()
    for jid in jobs:                            # (purged: only the accounting file knows them)
        shutil.rmtree(os.path.join(cell.root, "spool", "jobs", str(jid)), ignore_errors=True)
    seen = set(jobs)
    for damage in (b"", b"garbage\n"):
        with open(os.path.join(cell.root, "spool", "jobseqnum"), "wb") as fh:
            fh.write(damage)
        jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))    # (no daemon: queued)
        assert jid > max(seen), (damage, jid, seen)
        seen.add(jid)
    cell.start_daemon()
    wait_for(lambda: "says no job id: job ids go on after" in _messages(cell))
    later = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    assert later > max(seen)
    wait_for(lambda: int(open(os.path.join(cell.root, "spool", "jobseqnum")).read()) >= later)


def test_a_record_cut_short_does_not_swallow_the_next_one(cell, workdir):
    first = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.wait_finished(first)
    cell.stop_daemon()
    for name in ("accounting", "history"):
        with open(os.path.join(cell.root, "spool", name), "ab") as fh:
            fh.write(b"all.q:testhost:root:root:cut:99999:sge:0" if name == "accounting" else b"ClusterId = 99")
    cell.start_daemon()
    second = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.wait_finished(second)
    proc = cell.run("qacct", "-j", str(second))
    assert proc.returncode == 0 and f"jobnumber    {second}" in proc.stdout, proc.stdout + proc.stderr
    condor = cell.run("condor_submit", "-terse", "-", input="executable = /bin/true\nqueue\n", cwd=workdir)
    cluster = int(condor.stdout.split(".")[0])
    wait_for(lambda: cell.run("condor_history", str(cluster), "-af", "ClusterId").stdout == f"{cluster}\n")
    with open(os.path.join(cell.root, "spool", "history"), "rb") as fh:
        assert b"ClusterId = 99\n" in fh.read()          # (the cut record stays apart)


def test_damaged_usage_and_user_priorities_are_set_aside_and_said(cell, workdir):
    """A usage record or user priority file that is not JSON is not taken silently for
    none: the daemon logs it, keeps the file aside in the quarantine and goes on."""
    cell.stop_daemon()
    spool = os.path.join(cell.root, "spool")
    with open(os.path.join(spool, "usage.json"), "w") as fh:
        fh.write("xx")
    open(os.path.join(spool, "userprio.json"), "w").close()
    cell.start_daemon()
    wait_for(lambda: "usage record" in _messages(cell) and "user priorities" in _messages(cell))
    said = _messages(cell)
    assert "not read: it is not JSON; share-tree usage starts afresh (the file is kept in " in said
    assert "not read: it is not JSON; every user starts afresh (the file is kept in " in said
    kept = os.path.join(spool, "quarantine", "spool")
    assert "xx" == open(os.path.join(kept, "usage.json")).read()
    assert cell.run("qstat", "-u", "*").returncode == 0


def test_a_submit_applied_again_after_a_crash_is_not_logged_as_refused(cell, workdir):
    """The daemon stored a job, then was killed before it answered the request (intake's
    second crash point: the batch written): the next daemon applies the request again,
    finds the job taken in, and says so, not that a submit was refused; the job runs once."""
    import subprocess
    from attack_tools import daemon_pid
    cell.stop_daemon()
    cell.run("gridtools", "daemon", "start", env={"GRIDTOOLS_CRASH_AT": "intake:2"}, check=True)
    pid = daemon_pid(cell)
    qsub = subprocess.Popen(["qsub", "-terse", "-b", "y", "echo", "ran"], env=cell.env, cwd=workdir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z")
    cell.start_daemon()
    out, _err = qsub.communicate(timeout=60)
    jid = int(out.split()[0])
    cell.wait_finished(jid)
    said = _messages(cell)
    assert f"I|job {jid} of request " in said and "was taken in before the daemon restarted" in said
    assert "refused invalid submit request" not in said
    assert [rec[5] for rec in cell.accounting()].count(str(jid)) == 1


def test_many_objects_set_aside_make_one_warning_line(cell, workdir):
    """Every command warns of what the daemon set aside in spool/quarantine: several
    objects make one line naming them, not a line each on every command."""
    jobs = [jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir)) for _ in range(5)]
    cell.stop_daemon()
    for jid in jobs:
        with open(os.path.join(cell.root, "spool", "jobs", str(jid), "job.yaml"), "w") as fh:
            fh.write("{{{ not yaml")
    cell.start_daemon()
    proc = wait_for(lambda: (lambda p: p if "quarantine" in p.stderr else None)(cell.run("qstat", "-u", "*")))
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("warning: 5 files or folders are set aside in spool/quarantine: spool/jobs/")
    assert lines[0].endswith(" and 2 more (spool/messages says why)")
