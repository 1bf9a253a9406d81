"""A cell whose directory vanished under its daemon, and queries while the daemon is dead."""

import os
import shutil
import signal
import subprocess
import time

import psutil

from conftest import make_cell, destroy_cell, wait_for
from faulttools import daemon_pid, messages


def _cpu(proc):
    times = proc.cpu_times()
    return times.user + times.system


def _exited(proc, spent):
    """A wait_for predicate: True once ``proc`` ended; notes its CPU time meanwhile."""
    def check():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
            spent[0] = _cpu(proc)
            return False
        except psutil.NoSuchProcess:
            return True
    return check


def test_a_daemon_whose_cell_was_removed_exits_without_spinning(workdir):
    cell = make_cell()
    try:
        cell.qsub("-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "3", cwd=workdir, check=True)
        cell.qsub("-h", "-b", "y", "true", cwd=workdir, check=True)
        proc = psutil.Process(daemon_pid(cell))
        time.sleep(0.5)
        spent = [_cpu(proc)]
        before = spent[0]
        remove_live_tree(cell.root)
        began = time.time()
        wait_for(_exited(proc, spent), timeout=20)
        assert time.time() - began < 12
        assert spent[0] - before < 1.0
    finally:
        os.makedirs(cell.root, exist_ok=True)
        destroy_cell(cell)


def remove_live_tree(path):
    """Remove a cell whose daemons still write into it (they may add a file while the
    tree is removed: try again until it is gone)."""
    for _ in range(100):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} could not be removed")


def test_a_daemon_whose_cell_was_replaced_exits(workdir):
    cell = make_cell()
    try:
        proc = psutil.Process(daemon_pid(cell))
        remove_live_tree(cell.root)
        cell.run("gridtools", "init", "--slots", "1", "--host", "testhost", check=True, cwd="/")
        cell.run("gridtools", "daemon", "start", check=True)
        wait_for(_exited(proc, [0.0]), timeout=20)
        assert cell.run("gridtools", "daemon", "status").returncode == 0
    finally:
        destroy_cell(cell)


def test_the_daemon_of_a_replaced_cell_leaves_the_new_daemons_files_alone(workdir):
    """The old daemon finds its cell replaced only after the new cell's daemon started
    (it was stopped meanwhile): it exits without removing the new daemon's pid file or
    writing its own messages into the new cell."""
    cell = make_cell()
    try:
        proc = psutil.Process(daemon_pid(cell))
        proc.send_signal(signal.SIGSTOP)
        try:
            remove_live_tree(cell.root)
            cell.run("gridtools", "init", "--slots", "1", "--host", "testhost", check=True, cwd="/")
            cell.run("gridtools", "daemon", "start", check=True)
            pid = daemon_pid(cell)
        finally:
            proc.send_signal(signal.SIGCONT)
        wait_for(_exited(proc, [0.0]), timeout=20)
        assert daemon_pid(cell) == pid and psutil.pid_exists(pid)
        assert cell.run("gridtools", "daemon", "status").returncode == 0
        assert not [line for line in messages(cell) if "daemon stopped" in line]
    finally:
        destroy_cell(cell)


def test_an_execution_daemon_whose_cell_was_removed_exits(workdir):
    cell = make_cell(hosts=["testhost", "node2"])
    execd = subprocess.Popen(["gridtools", "execd", "--host", "node2"], env=cell.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: os.path.exists(os.path.join(cell.root, "spool", "execd", "node2", "execd.pid")))
        remove_live_tree(cell.root)
        _, err = execd.communicate(timeout=15)
        assert execd.returncode == 1 and "is gone" in err and "Traceback" not in err
    finally:
        if execd.poll() is None:
            execd.kill()
        os.makedirs(cell.root, exist_ok=True)
        destroy_cell(cell)


def test_qstat_says_the_status_is_stale_and_drops_jobs_gone_from_the_spool(cell, workdir):
    ids = [int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout) for _ in range(3)]
    wait_for(lambda: all(f"{j} " in cell.run("qstat").stdout for j in ids))
    os.kill(daemon_pid(cell), signal.SIGKILL)
    wait_for(lambda: cell.run("gridtools", "daemon", "status").returncode == 1)
    shutil.rmtree(os.path.join(cell.root, "spool", "jobs", str(ids[1])))
    late = int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
    for argv in (["qstat"], ["qstat", "-f"], ["qstat", "-u", "*"]):
        proc = cell.run(*argv)
        assert proc.returncode == 0
        shown = {int(line.split()[0]) for line in proc.stdout.splitlines()
                 if line.split() and line.split()[0].isdigit()}
        assert shown == {ids[0], ids[2], late}, (argv, proc.stdout)
        assert "not running" in proc.stderr and "as of" in proc.stderr, proc.stderr
    assert cell.run("qstat", "-j", str(ids[1])).returncode != 0
    assert "not running" in cell.run("qhost").stderr
    cell.start_daemon()
    proc = cell.run("qstat")
    assert proc.stderr == ""


def test_no_folder_of_a_removed_spool_is_made_again(tmp_path, monkeypatch):
    """A daemon whose cell was removed under it may still be writing: the folders it would
    make in its spool are not made (nor the cell with them), so that a new cell can be
    made in the same place at once."""
    import pytest
    from gridtools import cell as cellmod
    from gridtools.spool import files
    root = tmp_path / "gone"
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(root))
    with pytest.raises(FileNotFoundError):
        files.makedirs(cellmod.spool("status"), 0o755)
    assert not root.exists()
    files.makedirs(cellmod.spool(), 0o755)            # (the spool itself: as gridtools init makes it)
    files.makedirs(cellmod.spool("status"), 0o755)
    assert (root / "spool" / "status").is_dir()
