"""condor_preen's work: the files of the cell that nothing will use again.

A process killed in the middle of its work (a command, a shepherd, the
daemon itself, by kill -9 or a crash of the machine) can leave behind what
it would have renamed into place or removed. ``stale(state, dispatcher,
now)`` finds those, with the daemon's own knowledge of the queue (it runs
in the daemon, between requests, so nothing it looks at is being made
meanwhile):

- SPOOL: the temporary file of an interrupted write (``.<name>.<pid>.tmp``,
  see ``spool.files.atomic_write``) in the spool, in its shared folders and
  in the folders of the jobs and their tasks, when its writer is gone (and it
  is older than ``WRITE_TIME``) or it is older than ``STALE``; a job folder (``spool/jobs/<id>``) of a job the
  queue no longer holds, older than ``STALE``. The daemon's own sweeps
  (requests, replies, the trash) and the quarantine, which is the
  administrator's, are left to themselves.
- EXECUTE: in each queue's tmpdir on this host, the cell's task folders
  (``exec.tmpdir``) of tasks not running, older than ``STALE``, and the
  folders a spare shepherd kept (``.kept.<pid>``) whose shepherd is gone.
- LOG: the files ``INVALID_LOG_FILES`` names in ``LOG`` (the spool unless
  configured).

Age is the time since a file was last modified. A job folder the queue
holds, or a task folder of a running task, is never stale, whatever its age
(a folder renamed into use, a kept one or a fresh job folder, keeps the time
it had): the daemon marks a task running before its shepherd makes the
folder, and a job held before its folder is made. ``run``
removes or reports each, in condor_preen's words (``<path> - Removed``,
``- Can't Remove``, ``- Not Removed``); with ``verbose`` the files it looked
at are listed too (``<path> - OK`` / ``- BAD``).
"""

import os
import re
import stat

from gridtools import cell
from gridtools.exec import tmpdir
from gridtools.spool import daemonctl
from gridtools.spool import jobs as jobstore

#: seconds a leftover must have aged before it counts as stale (a live writer's, or a job
#: folder's, is always younger)
STALE = 3600.0
#: seconds a temporary file whose writer is gone must have aged: no write takes as long, and
#: a writer on another machine of a shared spool (whose pid means nothing here) is done by then
WRITE_TIME = 60.0
#: the temporary file of ``atomic_write``: ``.<name>.<pid>.tmp``
_TEMPORARY = re.compile(r"\..+\.([0-9]+)\.tmp")
#: the folder a spare shepherd kept: ``.kept.<pid>``
_KEPT = re.compile(r"\.kept\.([0-9]+)")
#: spool folders preen leaves alone: swept by the daemon itself, or the administrator's
_OWN_SWEEPS = frozenset(("requests", "replies", "taken", "trash", "fresh", "quarantine", "jobs"))


class Finding:
    """What preen found: the files it looked at (``seen``: (path, bad)) and the stale
    ones with how to remove each (``bad``: (path, remover))."""

    def __init__(self):
        self.seen, self.bad = [], []

    def look(self, path, bad, remover=None):
        self.seen.append((path, bad))
        if bad:
            self.bad.append((path, remover))


def _age(st, now):
    return now - st.st_mtime


def _lstat(path):
    try:
        return os.lstat(path)
    except OSError:
        return None


def _names(folder):
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _unlink(path):
    os.unlink(path)


def _temporary_stale(name, st, now):
    """True when ``name`` is an interrupted write's temporary file nothing will finish."""
    found = _TEMPORARY.fullmatch(name)
    if found is None or stat.S_ISDIR(st.st_mode):
        return False
    age = _age(st, now)
    return age > STALE or (age > WRITE_TIME and not daemonctl.alive(int(found.group(1))))


def _temporaries(finding, folder, now):
    """The temporary files of ``folder``; its other files are not looked at."""
    for name in _names(folder):
        if name.startswith(".") and name.endswith(".tmp"):
            path = os.path.join(folder, name)
            st = _lstat(path)
            if st is not None:
                finding.look(path, _temporary_stale(name, st, now), _unlink)


def check_spool(finding, state, now):
    spool = cell.spool()
    _temporaries(finding, spool, now)
    for name in _names(spool):
        path = os.path.join(spool, name)
        st = _lstat(path)
        if name in _OWN_SWEEPS or st is None or not stat.S_ISDIR(st.st_mode):
            continue
        _temporaries(finding, path, now)
    known = set(state.jobs) | set(state.purged)
    folder = jobstore.jobs_dir()
    for name in _names(folder):
        path = os.path.join(folder, name)
        st = _lstat(path)
        if st is None or not stat.S_ISDIR(st.st_mode) or not name.isdigit():
            continue
        if int(name) not in known:
            finding.look(path, _age(st, now) > STALE, _job_folder)
            continue
        _temporaries(finding, path, now)
        for task in _names(path):
            if task.isdigit():
                _temporaries(finding, os.path.join(path, task), now)


def _job_folder(path):
    """Put a stale job folder in the trash (emptied off the daemon's path)."""
    if jobstore.remove(int(os.path.basename(path))):
        raise OSError("cannot move it to the trash")


def tmpdirs(state, dispatcher):
    """The cell's task folders' parents on this host: one per queue tmpdir."""
    host = cell.hostname()
    found = set()
    for name in sorted(state.config.objects.get("queue", {})):
        try:
            base = str(dispatcher.queue_values(name, host)("tmpdir") or "/tmp")
        except (KeyError, TypeError, ValueError):
            continue
        found.add(os.path.join(base, tmpdir.cell_folder_name(cell.root())))
    return sorted(found)


def check_execute(finding, state, dispatcher, now):
    running = {f"{job.id}.{task.number}" for job, task in state.running_tasks()}
    for folder in tmpdirs(state, dispatcher):
        st = _lstat(folder)
        if st is None or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            continue                # not the cell's folder: someone else's, left alone
        for name in _names(folder):
            path = os.path.join(folder, name)
            st = _lstat(path)
            if st is None:
                continue
            kept = _KEPT.fullmatch(name)
            if kept is not None:
                finding.look(path, not daemonctl.alive(int(kept.group(1))), _remove_entry)
                continue
            parts = name.split(".", 2)
            if len(parts) != 3 or not (parts[0].isdigit() and parts[1].isdigit()):
                continue            # (a folder set aside, say: not the cell's to judge)
            stale = f"{parts[0]}.{parts[1]}" not in running and _age(st, now) > STALE
            finding.look(path, stale, _remove_entry)


def _remove_entry(path):
    """Remove a file or folder of a tmpdir, following no link."""
    parent, name = os.path.split(path)
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        tmpdir._remove_entry(fd, name)
    finally:
        os.close(fd)


def check_log(finding, state):
    conf = state.condor.conf if state.condor is not None else None
    get = conf.get if conf is not None else (lambda name, default=None: default)
    invalid = [word for word in re.split(r"[\s,]+", get("INVALID_LOG_FILES") or "") if word]
    folder = get("LOG") or cell.spool()
    for name in invalid:
        if "/" in name or name in (".", ".."):
            continue
        path = os.path.join(folder, name)
        st = _lstat(path)
        if st is not None and not stat.S_ISDIR(st.st_mode):
            finding.look(path, True, _unlink)


def stale(state, dispatcher, now):
    """What preen finds now (a ``Finding``)."""
    finding = Finding()
    check_spool(finding, state, now)
    check_execute(finding, state, dispatcher, now)
    check_log(finding, state)
    return finding


def run(state, dispatcher, now, remove=False, verbose=False):
    """(the lines condor_preen reports of each stale file, the verbose listing)."""
    finding = stale(state, dispatcher, now)
    listing = "".join(f"{path} - {'BAD' if bad else 'OK'}\n" for path, bad in finding.seen) if verbose else ""
    lines = []
    for path, remover in finding.bad:
        if not remove:
            lines.append(f"{path} - Not Removed")
            continue
        try:
            remover(path)
            lines.append(f"{path} - Removed")
        except OSError:
            lines.append(f"{path} - Can't Remove")
    if any(remover is _job_folder for _path, remover in finding.bad) and remove:
        dispatcher.execution.order_trash()
    return lines, listing


def interval(state):
    """PREEN_INTERVAL: seconds between the daemon's own preens (0: none)."""
    conf = state.condor.conf if state.condor is not None else None
    text = conf.get("PREEN_INTERVAL") if conf is not None else None
    try:
        return max(0, int(str(text).strip())) if text is not None else DEFAULT_INTERVAL
    except ValueError:
        return DEFAULT_INTERVAL


#: PREEN_INTERVAL's default, as HTCondor's master has it: once a day
DEFAULT_INTERVAL = 86400


def periodic(state, dispatcher, now):
    """The master's preen (``PREEN = condor_preen -m -r``): the stale files are removed
    and what was removed is written to the daemon's messages (in place of the mail)."""
    lines, _listing = run(state, dispatcher, now, remove=True)
    for line in lines:
        state.log(f"I|condor_preen: {line}")
    state.log(f"I|condor_preen: Results: {results(lines)}")


def results(lines):
    return f"{len(lines)} file{'s' if len(lines) > 1 else ''} preened" if lines else "No files preened"
