"""Creating a cell: ``etc/`` from the shipped defaults and an empty ``spool/``.

Initialising is idempotent: files that exist are left alone, so running it
again on a cell only adds what is missing. A directory that is not empty and
is not a cell is refused. Permissions let every user of the machine submit
into a cell run by root: the request folder is world-writable with the
sticky bit (like /tmp), the job id sequence is writable by all, and the
wake-up FIFO by all.
"""

import os
import shutil
import stat

from gridtools import cell
from gridtools.errors import ConfigError
from gridtools.spool.files import atomic_write, makedirs

MARKER = "cell"          # etc/cell: marks a directory as a gridtools cell


def is_cell(root):
    return os.path.exists(os.path.join(root, "etc", MARKER))


def _copy_defaults(src, dst):
    for base, dirs, files in os.walk(src):
        rel = os.path.relpath(base, src)
        target_dir = os.path.normpath(os.path.join(dst, rel))
        makedirs(target_dir, 0o755)
        for name in files:
            target = os.path.join(target_dir, name)
            if not os.path.exists(target):
                shutil.copyfile(os.path.join(base, name), target)
                os.chmod(target, 0o644)


def _substitute_root(etc_dir, root):
    for base, _dirs, files in os.walk(etc_dir):
        for name in files:
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            if "$GRIDTOOLS_ROOT" in text:
                atomic_write(path, text.replace("$GRIDTOOLS_ROOT", root))


def _make_spool(root):
    spool = os.path.join(root, "spool")
    makedirs(spool, 0o755)
    makedirs(os.path.join(spool, "jobs"), 0o755)
    makedirs(os.path.join(spool, "ars"), 0o755)
    replies = os.path.join(spool, "replies")
    makedirs(replies, 0o1777)
    os.chmod(replies, 0o1777)
    requests = os.path.join(spool, "requests")
    makedirs(requests, 0o1777)
    os.chmod(requests, 0o1777)
    for name in ("jobseqnum", "arseqnum"):
        path = os.path.join(spool, name)
        if not os.path.exists(path):
            atomic_write(path, "0\n", mode=0o666)
        os.chmod(path, 0o666)
    fifo = os.path.join(spool, "wakeup")
    if not os.path.exists(fifo):
        os.mkfifo(fifo, 0o622)
    os.chmod(fifo, 0o622)
    if not stat.S_ISFIFO(os.stat(fifo).st_mode):
        raise ConfigError(f"{fifo} exists and is not a FIFO")


def initialise(root, hosts, slots, manager, gpus=0):
    """Create (or complete) the cell at ``root`` (``gpus``: what each host offers as the
    ``gpu`` consumable). Returns the list of files created."""
    root = os.path.abspath(root)
    if os.path.isdir(root) and os.listdir(root) and not is_cell(root):
        raise ConfigError(f"refusing to initialise {root}: the directory is not empty "
                          "and is not a gridtools cell")
    makedirs(root, 0o755)
    etc_dir = os.path.join(root, "etc")
    before = _listing(etc_dir)
    _copy_defaults(cell.shipped_etc(), etc_dir)
    from gridtools.formats.sge.defaults import default_cell_objects
    for rel, text in default_cell_objects(hosts, slots, manager, gpus).items():
        path = os.path.join(etc_dir, rel)
        makedirs(os.path.dirname(path), 0o755)
        if rel not in before:
            atomic_write(path, text)
    _substitute_root(etc_dir, root)
    atomic_write(os.path.join(etc_dir, MARKER), "gridtools cell\n")
    _make_spool(root)
    return sorted(_listing(etc_dir) - before)


def _listing(top):
    found = set()
    for base, _dirs, files in os.walk(top):
        for name in files:
            found.add(os.path.relpath(os.path.join(base, name), top))
    return found
