"""Faults: what the daemon set aside, and what it cannot do right now.

Each fault is one line for users, kept in ``state.faults`` under a key and
published with the status snapshot (``faults``), so qstat, qconf and
``qsub -sync`` can say it; it is logged to spool/messages when it first
appears and when it is over. Kinds:

- ``quarantine``  a job folder or file the daemon could not read, set aside
                  into spool/quarantine (see ``spool.quarantine``)
- ``config``      a configuration file that stopped parsing while the daemon
                  ran; the daemon keeps the version it read before
- ``store``       a submitted job the daemon cannot store yet (its request
                  is kept and taken in again later)
- ``write``       a part of the spool the daemon cannot write (full or
                  read-only file system); it retries
"""

from gridtools import cell
from gridtools.spool import quarantine

QUARANTINE, CONFIG, STORE, WRITE = "quarantine", "config", "store", "write"


def note(state, key, kind, text, job=None, path=None, level="E"):
    """Record a fault (logged when it is new or its text changed); ``job`` and ``path``
    (under the cell) say what it concerns."""
    entry = {"kind": kind, "text": text}
    if job is not None:
        entry["job"] = job
    if path is not None:
        entry["path"] = path
    if state.faults.get(key) == entry:
        return
    state.faults[key] = entry
    state.need_publish = True
    state.log(f"{level}|{text}")


def clear(state, key, text=None):
    """A fault is over (``text``: what to log about it)."""
    if state.faults.pop(key, None) is not None:
        state.need_publish = True
        if text:
            state.log(f"I|{text}")


def published(state):
    """The faults as the status snapshot carries them."""
    return [dict(entry) for _key, entry in sorted(state.faults.items(), key=lambda kv: str(kv[0]))]


def set_aside(state, path, what, reason, job=None):
    """Quarantine ``path`` (``what``: how users know it, e.g. ``job 17``); True when moved."""
    target = quarantine.set_aside(path, reason)
    rel = quarantine.relative(path)
    if target is None:
        note(state, (QUARANTINE, rel), QUARANTINE, f"{what} cannot be read: {reason}", job, rel)
        return False
    note(state, (QUARANTINE, rel), QUARANTINE,
         f"{what} set aside into {quarantine.relative(target)}: {reason}", job, rel)
    return True


def settle(state):
    """Quarantine faults that are over: the object is no longer in quarantine (an
    administrator removed it or took it back), or a configuration file set aside is in
    its place again and reads (``state.unreadable`` does not name it)."""
    import os
    for key, fault in list(state.faults.items()):
        if fault["kind"] != QUARANTINE:
            continue
        rel = fault.get("path") or key[1]
        if not os.path.lexists(os.path.join(quarantine.folder(), rel)):
            clear(state, key, f"{rel} is no longer in spool/quarantine")
        elif rel.startswith("etc/") and os.path.isfile(os.path.join(cell.root(), rel)) and \
                (CONFIG, rel) not in state.unreadable:
            clear(state, key, f"{rel} is in its place again and reads")


def restore(state):
    """Daemon start: what earlier daemons set aside is still in quarantine."""
    for line in quarantine.listing():
        rel, _, reason = line.partition(": ")
        state.faults[(QUARANTINE, rel)] = {"kind": QUARANTINE, "path": rel,
                                           "text": f"{rel} is in spool/quarantine: {reason}"}


def describe(exc, path=None):
    """One line for an exception met reading or writing ``path``."""
    if isinstance(exc, OSError) and exc.strerror:
        where = path or exc.filename
        return f"{quarantine.relative(where) if where else 'spool'}: {exc.strerror}"
    text = str(exc) or type(exc).__name__
    if path:
        text = f"{quarantine.relative(path)}: {text}"
    return " ".join(text.split())


def job_what(job_id):
    return f"job {job_id}"


