"""What another user may see of a job in the spool: the folders of the tasks a
parallel job starts with qrsh -inherit are passable but not listable, as its own
task folder is, and a task's result (its exit, usage and failure, with the paths of
its files) is the daemon's alone."""

import os

from attack_tools import user_py
from conftest import wait_for
from qtools import jid_of

JOB = """#!/bin/sh
qrsh -inherit $(head -1 $PE_HOSTFILE | cut -d' ' -f1) 'exit 3'
echo "inherit status $?" > {flag}.inherit
while [ ! -e {flag} ]; do sleep 0.2; done
"""


def test_another_user_neither_lists_a_parallel_task_s_folder_nor_reads_a_result(cell, workdir, users):
    alice, bob = users[0], users[1]
    flag = os.path.join(workdir, "go")
    jid = jid_of(cell.qsub("-pe", "make", "2", "-j", "y", "-o", workdir, input=JOB.format(flag=flag),
                           user=alice, cwd=workdir))
    wait_for(lambda: os.path.exists(flag + ".inherit"), timeout=30)
    try:
        task = os.path.join(cell.root, "spool", "jobs", str(jid), "1")
        folder = os.path.join(task, "pe.1")
        result = os.path.join(folder, "result.yaml")
        wait_for(lambda: os.path.exists(result), timeout=20)
        assert os.stat(folder).st_mode & 0o777 == 0o711
        assert os.stat(result).st_mode & 0o007 == 0
        probe = user_py(cell, bob, f"""
import os
for what, call in (("list", lambda: os.listdir({folder!r})), ("read", lambda: open({result!r}).read())):
    try:
        call()
        print(what, "ok")
    except PermissionError:
        print(what, "denied")
""", check=True)
        assert probe.stdout == "list denied\nread denied\n"
    finally:
        open(flag, "w").close()
    cell.wait_finished(jid, timeout=30)
    assert open(flag + ".inherit").read() == "inherit status 3\n"
