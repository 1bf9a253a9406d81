"""Quarantine: where the daemon sets aside a file or job it cannot read.

A job folder whose ``job.yaml`` or ``state.yaml`` is empty or garbled, a
configuration file under ``etc/`` that does not parse at daemon start, or a
garbled ``qstates.yaml`` is moved (renamed, so nothing is copied and nothing
needs space) to ``spool/quarantine/<its path under the cell>``, e.g.
``spool/quarantine/spool/jobs/17`` or ``spool/quarantine/etc/queues/all.q``.
Beside it, ``<name>.why`` holds the one line saying what was wrong. The
daemon lists the quarantine at start-up and publishes what it holds; the
objects stay there until an administrator repairs or removes them.
"""

import os
import time

from gridtools import cell
from gridtools.spool.files import atomic_write, makedirs

WHY = ".why"


def folder():
    return cell.spool("quarantine")


def relative(path):
    """``path`` as written in messages: relative to the cell's top directory."""
    return os.path.relpath(path, cell.root())


def set_aside_said(path, what, why, then, log):
    """Set the file ``path`` aside that could not be read (``why``) and say so through
    ``log``: "<what> <path> not read: <why>; <then> (the file is kept in ...)"."""
    kept = set_aside(path, f"not read: {why}")
    log(f"E|{what} {path} not read: {why}; {then}"
        + (f" (the file is kept in {relative(kept)})" if kept else ""))


def set_aside(path, reason):
    """Move ``path`` (a file or folder) into quarantine; returns its new place, or
    None when it could not be moved (then it is left where it is)."""
    rel = relative(path)
    target = os.path.join(folder(), rel)
    if os.path.lexists(target):
        target = f"{target}.{time.strftime('%Y%m%d-%H%M%S')}.{os.getpid()}"
    try:
        makedirs(os.path.dirname(target), 0o700)
        os.chmod(folder(), 0o700)
        os.rename(path, target)
    except OSError:
        return None
    try:
        atomic_write(target + WHY, f"{rel}: {reason}\n", mode=0o600, fsync=False)
    except OSError:
        pass
    return target


def listing():
    """One line per quarantined object: ``<path under the cell>: <what was wrong>``."""
    lines = []
    for top, _dirs, names in os.walk(folder()):
        for name in sorted(names):
            if not name.endswith(WHY):
                continue
            try:
                with open(os.path.join(top, name), encoding="utf-8", errors="replace") as fh:
                    lines.append(fh.read().strip())
            except OSError:
                continue
    return sorted(lines)
