"""The life of a shepherd process around its task, as the daemon sees it: the lock
it holds on ``shepherd.lock`` in the task's folder with its record (pid, start time, the
process group it runs), the checks that the task is still its own, the delivery of
the task's result, and the control signals it holds back while it changes tasks
(``exec.shepherd`` carries out the task; ``exec.tasklock`` is the daemon's side)."""

import os
import signal
import time

from gridtools.errors import SpoolError
from gridtools.exec import ckpt, jobproc
from gridtools.spool import jobs as jobstore
from gridtools.spool import wake
from gridtools.spool.files import Lock

#: width of the record in the lock file (rewritten in place, so it never needs new space)
_RECORD = jobstore.LOCK_RECORD
_ticks = []                 # this process's start time, read once


def ready():
    """A spare shepherd waiting for its task: learn what every record of it repeats."""
    pid = os.getpid()
    _ticks[:] = [pid, jobproc.start_ticks(pid), os.uname().nodename]


def write_pid(lock, group=0):
    """Record in the shepherd's (held) lock file its pid and start time, the process
    group it runs now with its leader's start time, and the machine: the daemon
    checks all of them before it signals either."""
    pid = os.getpid()
    if not _ticks or _ticks[0] != pid:
        ready()
    ticks = jobproc.start_ticks(group) if group else 0
    text = f"{pid} {_ticks[1]} {group} {ticks} {_ticks[2]}"
    os.pwrite(lock.fd, (text[:_RECORD - 1].ljust(_RECORD - 1) + "\n").encode(), 0)


def current(plan, task_dir):
    """True when ``plan`` is a launch of the task that was not withdrawn (see
    ``exec.tasklock``) and the task has no result yet."""
    token = str(plan.get("launch", ""))
    return bool(token) and not os.path.exists(os.path.join(task_dir, jobstore.withdrawn_name(token))) \
        and not os.path.exists(os.path.join(task_dir, jobstore.RESULT_FILE))


def still_mine(lock, task_dir):
    """True while the task is this shepherd's: the lock file in its folder is the one it
    holds, and the folder holds no result it did not write. The dispatcher ends a run
    without its shepherd when the run's host was lost (reschedule_unknown) or with
    ``qdel -f``, writing the result itself; a run started again since has a new lock
    file. A shepherd whose task was taken away ends its job and writes nothing more
    there (a shepherd on a host the dispatcher cannot reach notices this way)."""
    try:
        held = os.fstat(lock.fd)
        there = os.stat(lock.path)
    except (OSError, TypeError):
        return False
    if (held.st_dev, held.st_ino) != (there.st_dev, there.st_ino):
        return False
    return not os.path.exists(os.path.join(task_dir, jobstore.RESULT_FILE))


def take_lock(task_dir, tries=50):
    """The task's lock, taken without waiting for long: a held lock means another
    shepherd runs the task (or the daemon is withdrawing it)."""
    lock = Lock(os.path.join(task_dir, jobstore.SHEPHERD_LOCK), mode=0o600, blocking=False)
    for _ in range(tries):
        if lock.acquire():
            return lock
        time.sleep(0.01)
    return None


def deliver(plan, task_dir, result):
    """Write the task's result, retrying while the spool is full (the lock stays held,
    so the daemon knows the task is still being finished). False if the folder is gone."""
    delay = 0.1
    while True:
        try:
            jobstore.write_result(plan["job_id"], plan["task"], result, on_visible=wake.poke)
            return True
        except SpoolError:
            if not os.path.isdir(task_dir):
                return False
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


#: the signals by which the daemon controls a task (see the module's docstring)
CONTROL = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT,
           ckpt.CHECKPOINT_NOW)


def let_go(lock, task_dir, reuse):
    """Release the task's lock; before another task, with the control signals held
    back and under the task's control lock (no signal for it is on its way)."""
    if not reuse:
        lock.release()
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, CONTROL)
    control = Lock(os.path.join(task_dir, jobstore.CONTROL_LOCK), mode=0o600)
    try:
        control.acquire()
    except SpoolError:
        control = None
    lock.release()
    if control is not None:
        control.release()


def drop_pending():
    """Take away control signals that came before this task (they were for another)."""
    pending = signal.sigpending() & set(CONTROL)
    while pending:
        signal.sigtimedwait(pending, 0)
        pending = signal.sigpending() & set(CONTROL)
