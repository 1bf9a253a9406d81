"""A task's shepherd lock as the daemon reads it, and launches it takes back.

The shepherd of a task holds ``shepherd.lock`` in the task's folder for its
whole life and keeps a record at its start (``exec.tasklife.write_pid``):
its pid and start time, the process group it runs with its leader's start
time, and the machine. The daemon signals a shepherd only after checking
that record. A launch the daemon takes back before its shepherd started
(``withdraw``, under the lock) leaves ``withdrawn.<launch>`` in the folder:
a shepherd that starts late for it finds the file and leaves at once.
The shepherd itself does not import this module (it keeps its start-up lean).
"""

import os
from dataclasses import dataclass

from gridtools.spool import jobs as jobstore
from gridtools.spool.files import write_new


@dataclass(frozen=True)
class LockRecord:
    """What a task's lock file says about its shepherd."""
    pid: int
    ticks: int
    group: int = 0
    group_ticks: int = 0
    node: str = ""

    def here(self):
        """True when the shepherd runs on this machine (its pids mean something here)."""
        return not self.node or self.node == os.uname().nodename


def read_lock(task_dir):
    """The LockRecord of a task's lock file, or None when no shepherd ever wrote it."""
    try:
        with open(os.path.join(task_dir, jobstore.SHEPHERD_LOCK), "rb") as fh:
            fields = fh.read(jobstore.LOCK_RECORD).decode(errors="replace").split()
        numbers = [int(f) for f in fields[:4]]
    except (OSError, ValueError):
        return None
    if len(numbers) < 2:
        return None
    return LockRecord(*numbers, *fields[4:5])


def launch_token(start_time):
    """The token of the launch of a task dispatched at ``start_time`` (its plan carries
    it; the daemon finds it again in the task's state after a restart)."""
    return repr(float(start_time))


def withdraw(task_dir, token):
    """Daemon side, holding the task's lock: launch ``token`` is off; a shepherd that
    starts late for it leaves without running anything."""
    if token:
        write_new(os.path.join(task_dir, jobstore.withdrawn_name(token)), b"", 0o600)
    try:                                # what an earlier version said was current
        os.unlink(os.path.join(task_dir, jobstore.LAUNCH_FILE))
    except FileNotFoundError:
        pass
