"""Forced deletion (qdel -f) in a root cell shared by users who do not trust each other.

A forced deletion ends a running task at once, whether or not its shepherd
answers, and accounts it as Grid Engine's qmaster does (no usage): it is a
manager's alone unless the global configuration's qmaster_params hold
ENABLE_FORCED_QDEL, and the daemon refuses it to anyone else, also when the
request is written by hand. When a task is ended so, every process of it
ends: those that left the job's process group or session too.
"""

import os
import uuid

from attack_tools import forge_request
from conftest import wait_for
from qtools import set_qmaster_params


def _running_job(cell, user, workdir, script):
    proc = cell.qsub("-terse", user=user, cwd=workdir, input=script)
    assert proc.returncode == 0, proc.stderr
    jid = int(proc.stdout)
    wait_for(lambda: cell.task_states(jid).get(1) == "running", timeout=30)
    return jid


def _allow_forced_qdel(cell):
    set_qmaster_params(cell, "ENABLE_FORCED_QDEL")


def _marked(marker):
    """Pids of the live processes whose command line holds ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                line = fh.read()
            with open(f"/proc/{name}/stat", "rb") as fh:
                state = fh.read().rpartition(b")")[2].split()[0]
        except OSError:
            continue
        if marker.encode() in line and state != b"Z":
            found.append(int(name))
    return found


def test_an_owner_may_not_force_the_deletion_of_a_job(cell, workdir, users):
    alice = users[0]
    jid = _running_job(cell, alice, workdir, "#!/bin/sh\nsleep 600\n")
    proc = cell.run("qdel", "-f", str(jid), user=alice)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, f'"{alice}" - forcing a job deletion requires manager privileges\n', "")
    _name, answer = forge_request(cell, alice, "delete", {"targets": [{"id": jid, "tasks": None}],
                                                           "force": True})
    assert answer[0] == 1 and "requires manager privileges" in answer[1]
    assert cell.task_states(jid) == {1: "running"}
    assert cell.job_state(jid)["deleted"] is False
    proc = cell.run("qdel", "-f", str(jid))
    assert (proc.returncode, proc.stdout) == (0, f"root forced the deletion of job {jid}\n")
    wait_for(lambda: cell.finished(jid), timeout=30)


def test_enable_forced_qdel_lets_owners_force_their_own_jobs_only(cell, workdir, users):
    alice, bob = users[0], users[1]
    jid = _running_job(cell, alice, workdir, "#!/bin/sh\nsleep 600\n")
    assert cell.run("qdel", "-f", str(jid), user=alice).returncode == 1
    _allow_forced_qdel(cell)
    proc = cell.run("qdel", "-f", str(jid), user=bob)
    assert proc.returncode == 1
    assert proc.stdout == f'{bob} - you do not have the necessary privileges to delete the job "{jid}"\n'
    _name, answer = forge_request(cell, bob, "delete", {"targets": [{"id": jid, "tasks": None}], "force": True})
    assert cell.task_states(jid) == {1: "running"}
    proc = cell.run("qdel", "-f", str(jid), user=alice)
    assert (proc.returncode, proc.stdout) == (0, f"{alice} forced the deletion of job {jid}\n")
    wait_for(lambda: cell.finished(jid), timeout=30)


def test_a_forced_end_kills_the_processes_that_left_the_jobs_group(cell, workdir, users):
    """GNU timeout puts itself in a process group of its own, setsid in a session of its
    own: a forced end kills them too, not only the job's process group."""
    alice = users[0]
    marker = f"gtforced-{uuid.uuid4().hex[:12]}"
    script = ("#!/bin/sh\n"
              f"timeout 120 sh -c 'while :; do sleep 1; done # {marker}-timeout' &\n"
              f"setsid sh -c 'while :; do sleep 1; done # {marker}-setsid' &\n"
              "wait\n")
    jid = _running_job(cell, alice, workdir, script)
    try:
        wait_for(lambda: len(_marked(marker)) >= 2, timeout=30)
        proc = cell.run("qdel", "-f", str(jid))
        assert (proc.returncode, proc.stdout) == (0, f"root forced the deletion of job {jid}\n")
        wait_for(lambda: cell.finished(jid), timeout=30)
        wait_for(lambda: not _marked(marker), timeout=20)
    finally:
        for pid in _marked(marker):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def test_without_a_cgroup_a_forced_end_kills_every_process_below_the_shepherd(tmp_path):
    """A cell not run by root has no cgroup for its tasks: the shepherd is the subreaper
    of the job's processes, and a forced end kills whatever is below it, in whatever
    group or session, before the shepherd."""
    import signal
    import subprocess
    import sys
    from gridtools.daemon import dispatch
    marker = f"gtforced-{uuid.uuid4().hex[:12]}"
    job = (f"timeout 120 sh -c 'while :; do sleep 1; done # {marker}' & "
           f"setsid sh -c 'while :; do sleep 1; done # {marker}' & wait")
    code = ("import ctypes, subprocess, sys, time\n"
            "ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)\n"
            "subprocess.Popen(['sh', '-c', sys.argv[1]], start_new_session=True)\n"
            "time.sleep(600)\n")
    shepherd = subprocess.Popen([sys.executable, "-c", code, job])
    try:
        wait_for(lambda: len(_marked(marker)) >= 2, timeout=30)
        dispatch._end_task(10 ** 9, 1, shepherd.pid)      # (a task that has no cgroup)
        assert shepherd.wait(timeout=10) == -signal.SIGKILL
        wait_for(lambda: not _marked(marker), timeout=20)
    finally:
        shepherd.kill()
        shepherd.wait()
        for pid in _marked(marker):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
