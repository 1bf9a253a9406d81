"""Array jobs as a weapon: a user must not grow the daemon, the status file or the queue's
use beyond what the global configuration allows (max_aj_tasks, max_aj_instances).
"""

import os
import re

from attack_tools import alive, daemon_pid, forge_submit, rss_kib
from conftest import wait_for


def _set_global(cell, **values):
    """Change attributes of etc/conf/global in place (the daemon looks at etc/ before it
    takes in requests)."""
    path = os.path.join(cell.root, "etc", "conf", "global")
    with open(path) as fh:
        text = fh.read()
    for name, value in values.items():
        text, count = re.subn(rf"^{name}\s+.*$", f"{name:<29}{value}", text, flags=re.M)
        assert count == 1, name
    with open(path, "w") as fh:
        fh.write(text)


def test_qsub_refuses_more_tasks_than_max_aj_tasks(cell, workdir, users):
    alice = users[0]
    pid = daemon_pid(cell)
    before = rss_kib(pid)
    proc = cell.qsub("-t", "1-99999999999", "-b", "y", "true", user=alice, cwd=workdir)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr == ("Unable to run job: job rejected: You try to submit a job with more than "
                           "75000 tasks\nExiting.\n")
    _set_global(cell, max_aj_tasks=10)
    proc = cell.qsub("-t", "1-11", "-b", "y", "true", user=alice, cwd=workdir)
    assert proc.returncode == 1 and "more than 10 tasks" in proc.stderr
    proc = cell.qsub("-terse", "-h", "-t", "1-20:2", "-b", "y", "true", user=alice, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    # hand-written requests get the same answer from the daemon
    jid, name, answer = forge_submit(cell, alice, {"tasks": [1, 11, 1]}, reply=True)
    assert answer[0] != 0 and "more than 10 tasks" in answer[2]
    jid, name, answer = forge_submit(cell, alice, {"tasks": [1, 99999999999, 1]}, reply=True)
    assert answer[0] != 0
    assert alive(pid) and rss_kib(pid) - before < 20_000


def test_max_aj_instances_limits_the_tasks_running_at_once(cell, workdir, users):
    alice = users[0]
    _set_global(cell, max_aj_instances=1)
    log = os.path.join(workdir, "order.log")
    script = f"echo start $SGE_TASK_ID >> {log}\nsleep 0.5\necho end $SGE_TASK_ID >> {log}\n"
    jid = int(cell.qsub("-terse", "-t", "1-3", "-o", "/dev/null", "-j", "y", user=alice, cwd=workdir,
                        input=script).stdout.split(".")[0])
    cell.wait_finished(jid, tasks=(1, 2, 3), timeout=30)
    words = [line.split()[0] for line in open(log).read().splitlines()]
    assert words == ["start", "end"] * 3, "tasks of one array overlapped beyond max_aj_instances"


def test_a_held_array_of_a_million_tasks_costs_little(cell, workdir, users):
    alice = users[0]
    _set_global(cell, max_aj_tasks=0)
    # one job run to its end first, as the jobs below run: the daemon has then loaded
    # what scheduling, starting and reaping a job take (a busy machine slows its start,
    # and what it loads late would otherwise count as the array's cost)
    warm = cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "true", user=alice, cwd=workdir)
    assert warm.returncode == 0, warm.stderr
    wait_for(lambda: not cell.run("qstat", "-u", "*").stdout.strip(), timeout=30)
    pid = daemon_pid(cell)
    before = rss_kib(pid)
    proc = cell.qsub("-terse", "-h", "-t", "1-1000000", "-b", "y", "true", user=alice, cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    jid = int(proc.stdout.split(".")[0])
    wait_for(lambda: re.search(rf"^\s*{jid} .* hqw .* 1-1000000:1\s*$",
                               cell.run("qstat", "-u", "*").stdout, re.M), timeout=30)
    # a few passes of the scheduler over the held array
    for _ in range(3):
        cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "true", user=alice, cwd=workdir)
    wait_for(lambda: "qw " not in cell.run("qstat", "-u", "*").stdout.replace("hqw", ""), timeout=30)
    grown = rss_kib(pid) - before
    assert grown < 20_000, f"the daemon grew by {grown} KiB for a held array"
    assert os.path.getsize(os.path.join(cell.root, "spool", "status")) < 200_000
    proc = cell.run("qdel", str(jid), user=alice)
    assert proc.returncode == 0, proc.stderr
    wait_for(lambda: str(jid) not in cell.run("qstat", "-u", "*").stdout, timeout=20)
    assert rss_kib(pid) - before < 20_000, "deleting the array grew the daemon"
    assert alive(pid)
