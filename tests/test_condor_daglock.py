"""The lock file of a running DAG (cli.condor.daglock): one manager at a time, taken
atomically by one of several that start together, removed when let go, taken over when
the process it names is gone."""

import os
import subprocess
import sys

from conftest import REPO, wait_for

from gridtools.cli.condor import daglock


def record(path):
    with open(path, "rb") as fh:
        return daglock.parse_record(fh.read())


def test_a_held_lock_refuses_the_next_manager_and_goes_with_its_holder(tmp_path):
    path = str(tmp_path / "d.dag.lock")
    lock, stale = daglock.take(path, job=7)
    assert lock is not None and stale is None
    mine = record(path)
    assert (mine.pid, mine.job, mine.node) == (os.getpid(), 7, os.uname().nodename) and mine.alive()
    second, holder = daglock.take(path, job=8)
    assert second is None and holder == mine
    lock.release()
    assert not os.path.exists(path)
    third, stale = daglock.take(path, job=9)
    assert third is not None and stale is None and record(path).job == 9
    third.release()
    assert not os.path.exists(path)


def test_a_lock_whose_process_is_gone_is_taken_over(tmp_path):
    path = str(tmp_path / "d.dag.lock")
    gone = subprocess.Popen(["true"])
    gone.wait()
    ticks = daglock.myself(0).ticks
    # a process that ended, and this very pid started at another time (a pid used again)
    for dead in (daglock.Holder(gone.pid, ticks, os.uname().nodename, 3),
                 daglock.Holder(os.getpid(), ticks + 1, os.uname().nodename, 4)):
        with open(path, "wb") as fh:
            fh.write(daglock.render_record(dead))
        lock, stale = daglock.take(path, job=5)
        assert lock is not None and stale == dead
        assert record(path).pid == os.getpid() and record(path).job == 5
        lock.release()


def test_a_lock_naming_a_live_process_is_not_taken(tmp_path):
    """A lock file its writer holds no flock on (a manager of an older kind) still counts
    while the process it names lives."""
    path = str(tmp_path / "d.dag.lock")
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        from gridtools.exec.jobproc import start_ticks
        live = daglock.Holder(sleeper.pid, wait_for(lambda: start_ticks(sleeper.pid)), os.uname().nodename, 3)
        with open(path, "wb") as fh:
            fh.write(daglock.render_record(live))
        lock, holder = daglock.take(path, job=5)
        assert lock is None and holder == live
        assert record(path) == live
    finally:
        sleeper.kill()
        sleeper.wait()
    lock, stale = daglock.take(path, job=5)
    assert lock is not None and stale == live
    lock.release()


def test_a_lock_file_held_before_its_record_is_written_counts_as_held(tmp_path):
    """The moment between a manager's locking of a new lock file and its writing who it
    is: the file is empty, and still nobody else may take it."""
    from gridtools.spool.files import Lock
    path = str(tmp_path / "d.dag.lock")
    other = Lock(path, blocking=False)
    assert other.acquire()
    try:
        lock, holder = daglock.take(path, job=5)
        assert lock is None and holder is None
    finally:
        other.release()
    lock, stale = daglock.take(path, job=5)
    assert lock is not None and stale is None
    lock.release()


CONTENDER = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from gridtools.cli.condor import daglock
path, folder = sys.argv[2], sys.argv[3]
while not os.path.exists(os.path.join(folder, "start")):
    pass
lock, _ = daglock.take(path, job=os.getpid())
print("held" if lock else "refused", flush=True)
if lock:
    while not os.path.exists(os.path.join(folder, "end")):
        time.sleep(0.01)
    lock.release()
"""


def test_of_managers_that_start_together_exactly_one_holds_the_lock(tmp_path):
    path = str(tmp_path / "d.dag.lock")
    for _round in range(3):
        procs = [subprocess.Popen([sys.executable, "-c", CONTENDER, os.path.join(REPO, "src"), path,
                                   str(tmp_path)], stdout=subprocess.PIPE, text=True) for _ in range(6)]
        (tmp_path / "start").write_text("")
        answers = [p.stdout.readline().strip() for p in procs]
        assert sorted(answers) == ["held"] + ["refused"] * 5
        (tmp_path / "end").write_text("")
        for p in procs:
            assert p.wait(timeout=30) == 0
        assert not os.path.exists(path)
        os.unlink(tmp_path / "start")
        os.unlink(tmp_path / "end")
