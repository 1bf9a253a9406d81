"""An execution layer that runs no process, for whole daemon ticks in the test process.

``FakeExecution`` stands where the daemon's ``LocalExecution`` stands. A
launched task gets its shepherd lock held by this process, as a live
shepherd would hold it, so the daemon sees it running; ``finish`` writes
the task's result the way a shepherd writes it and lets go of the lock.
Signals are recorded, never sent.
"""

import fcntl
import os

import pytest

from gridtools.spool import jobs as jobstore


class FakeExecution:
    def __init__(self):
        self.launched = []           # (job id, task, plan)
        self.signals = []            # (job id, task, signal number)
        self.killed = []             # (job id, task)
        self.niced = []              # (job id, task, nice value)
        self.locks = {}              # (job id, task) -> fd holding the shepherd lock

    def start(self):
        pass

    def stop(self):
        pass

    def order_trash(self):
        jobstore.empty_trash()

    def launch(self, job_id, number, plan, tdir, host):
        fd = os.open(os.path.join(tdir, jobstore.SHEPHERD_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        self.locks[(job_id, number)] = fd
        self.launched.append((job_id, number, plan))

    def run_plan(self, plan, tdir, host=None):
        self.launched.append((plan.get("job_id"), plan.get("task"), plan))

    def signal(self, job_id, number, signum):
        if (job_id, number) not in self.locks:
            return False
        self.signals.append((job_id, number, signum))
        return True

    def kill(self, job_id, number):
        self.killed.append((job_id, number))
        self._release(job_id, number)

    def shepherd(self, job_id, number):
        return 0

    def renice(self, job_id, number, nice):
        self.niced.append((job_id, number, nice))
        return True

    def finish(self, job_id, number, exit_status=0, **extra):
        """The task ends: its result is written and its lock let go."""
        result = {"exit_status": exit_status, "failed": 0, "end_time": extra.pop("end_time", 0.0)
                  or __import__("time").time(), "usage": {"ru_utime": 1.0, "ru_stime": 0.0}}
        result.update(extra)
        jobstore.write_result(job_id, number, result)
        self._release(job_id, number)

    def _release(self, job_id, number):
        fd = self.locks.pop((job_id, number), None)
        if fd is not None:
            os.close(fd)

    def running(self):
        return sorted(self.locks)


@pytest.fixture
def ticking(monkeypatch):
    """A cell whose daemon runs in this process with a FakeExecution: (cell, daemon, fake)."""
    from conftest import make_cell
    cell = make_cell(slots=2, start=False)
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    monkeypatch.setenv("GRIDTOOLS_HOST", cell.host)
    from gridtools.daemon.loop import Daemon
    fake = FakeExecution()
    daemon = Daemon(execution=fake)
    daemon.open()
    try:
        yield cell, daemon, fake
    finally:
        daemon.close()
        import shutil
        shutil.rmtree(cell.root, ignore_errors=True)
