"""A job that leaves processes behind: started in a session or process group of their
own (setsid, nohup, a double fork), so that signalling the job's process group misses
them. Whatever way the job ends (its script exits, qdel), they end with it and their
CPU time is in its accounting; suspending the job stops them too."""

import os
import re
import textwrap
import time

from conftest import wait_for
from qtools import jid_of

ESCAPES = textwrap.dedent("""\
    #!/bin/sh
    setsid sh -c 'while :; do :; done' &
    echo $! >> {pids}
    nohup sleep 301 > /dev/null 2>&1 &
    echo $! >> {pids}
    setsid sh -c 'sleep 302 & echo $! >> {pids}; sleep 303' &
    echo $! >> {pids}
    touch {ready}
    {rest}
    """)


def _alive(pid):
    """True while ``pid`` runs (a zombie is not running)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2:data.rfind(b")") + 3] != b"Z"


def _state(pid):
    with open(f"/proc/{pid}/stat", "rb") as fh:
        data = fh.read()
    return data[data.rfind(b")") + 2:data.rfind(b")") + 3].decode()


def _script(workdir, name, rest):
    pids, ready = os.path.join(workdir, f"{name}.pids"), os.path.join(workdir, f"{name}.ready")
    path = os.path.join(workdir, f"{name}.sh")
    with open(path, "w") as fh:
        fh.write(ESCAPES.format(pids=pids, ready=ready, rest=rest))
    os.chmod(path, 0o755)
    return path, pids, ready


def _pids(path):
    wait_for(lambda: os.path.exists(path) and len(open(path).read().split()) == 4)
    return [int(p) for p in open(path).read().split()]


def _cpu(cell, jid):
    text = wait_for(lambda: cell.run("qacct", "-j", str(jid)).stdout, timeout=30)
    return float(re.search(r"^cpu\s+(\S+?)s?$", text, re.M).group(1))


def test_what_a_job_leaves_running_ends_with_it_and_is_accounted(cell, users, workdir):
    alice = users[0]
    path, pids, _ready = _script(workdir, "end", "sleep 2")
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", path, user=alice, cwd=workdir))
    left = _pids(pids)
    assert all(_alive(pid) for pid in left)
    cell.wait_finished(jid, timeout=30)
    assert wait_for(lambda: not any(_alive(pid) for pid in left), timeout=10), [p for p in left if _alive(p)]
    assert _cpu(cell, jid) >= 1.0           # (the busy loop's two seconds or so)


def test_qdel_ends_what_the_job_left_outside_its_process_group(cell, users, workdir):
    alice = users[0]
    path, pids, _ready = _script(workdir, "del", "sleep 300")
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", path, user=alice, cwd=workdir))
    left = _pids(pids)
    cell.run("qdel", str(jid), user=alice, check=True)
    cell.wait_finished(jid, timeout=30)
    assert wait_for(lambda: not any(_alive(pid) for pid in left), timeout=10), [p for p in left if _alive(p)]


def test_suspending_the_job_stops_what_it_left_outside_its_process_group(cell, users, workdir):
    alice = users[0]
    path, pids, _ready = _script(workdir, "sus", "sleep 300")
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", path, user=alice, cwd=workdir))
    loop = _pids(pids)[0]
    cell.run("qmod", "-sj", str(jid), check=True)
    assert wait_for(lambda: _state(loop) == "T", timeout=10)
    time.sleep(0.3)
    assert _state(loop) == "T"              # (stopped, not between two samples)
    cell.run("qmod", "-usj", str(jid), check=True)
    assert wait_for(lambda: _state(loop) in "RS", timeout=10)
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid, timeout=30)
    assert wait_for(lambda: not _alive(loop), timeout=10)
