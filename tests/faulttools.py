"""Helpers for the fault tests: a spool on a small (or read-only) file system, the
daemon's pid and messages, what was put into quarantine."""

import contextlib
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import _kill_cell_processes


def daemon_pid(cell):
    with open(os.path.join(cell.root, "spool", "daemon.pid")) as fh:
        return int(fh.read())


def messages(cell):
    try:
        with open(os.path.join(cell.root, "spool", "messages"), encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except FileNotFoundError:
        return []


def quarantined(cell):
    """Paths (relative to spool/quarantine) of everything set aside."""
    top = os.path.join(cell.root, "spool", "quarantine")
    found = []
    for folder, dirs, names in os.walk(top):
        for name in dirs + names:
            found.append(os.path.relpath(os.path.join(folder, name), top))
    return found


def _mount(args):
    return subprocess.run(["mount"] + args, capture_output=True, text=True)


@contextlib.contextmanager
def small_spool(cell, size_kb, read_only=False):
    """Put the cell's spool on a tmpfs of ``size_kb`` KiB (its contents copied over)
    for the duration; skips the test when mounting is not permitted. The daemon
    must not run when this is entered; it is stopped when this is left."""
    spool = os.path.join(cell.root, "spool")
    saved = tempfile.mkdtemp(prefix="gtspool-", dir="/tmp")
    subprocess.run(["cp", "-a", spool + "/.", saved], check=True)
    proc = _mount(["-t", "tmpfs", "-o", f"size={size_kb}k,mode=0755", "tmpfs", spool])
    if proc.returncode != 0:
        shutil.rmtree(saved, ignore_errors=True)
        pytest.skip(f"cannot mount a small file system: {proc.stderr.strip()}")
    try:
        subprocess.run(["cp", "-a", saved + "/.", spool], check=True)
        if read_only:
            assert _mount(["-o", "remount,ro", spool]).returncode == 0
        yield spool
    finally:
        cell.stop_daemon()
        _kill_cell_processes(cell.root)
        if _mount(["-o", "remount,rw", spool]).returncode != 0 or \
                subprocess.run(["umount", spool], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", spool], capture_output=True)
        shutil.rmtree(saved, ignore_errors=True)


def fill(path, leave_kb=0):
    """Fill the file system holding ``path`` with the file ``path``, leaving about
    ``leave_kb`` KiB free; returns the path (remove the file to free the space)."""
    st = os.statvfs(os.path.dirname(path))
    left = st.f_bavail * st.f_frsize - leave_kb * 1024
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    chunk = b"\0" * 4096
    try:
        while left > 0:
            left -= os.write(fd, chunk[:min(4096, left)])
    except OSError:
        pass
    finally:
        os.close(fd)
    return path
