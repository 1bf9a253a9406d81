"""Rotated history files, named as HTCondor's schedd names them.

A history file ``F`` that grows past its limit is renamed ``F.<time>``, the time it
was rotated in ISO 8601's basic form, local time (``history.20261201T101010``), and a
new ``F`` begun; only the newest ``keep`` rotated files are kept. A file rotated in
the same second as the one before is ``F.<time>.1`` (``.2``, ...): it never replaces
it (such a name reads as the same time, and sorts after). ``find`` lists a
history file with its rotations as condor_history's ``-search`` reads them: the
files of the same folder whose names are ``F``'s base name, a dot and such a time
as HTCondor reads one (the extended form, ``2026-12-01T10:10:10``, too, and
whatever follows its seconds; not one in UTC, ending in ``Z``), oldest first by
that time, then ``F`` itself when it exists.
"""

import os
import re
import time

#: HTCondor's reading of such a time (iso8601_to_time): six fields of digits, each after
#: any of ``-``, ``:`` and ``T``; what follows the seconds (and their fraction) does not
#: count, but for a ``Z`` (UTC), which HTCondor's history never writes
_SEP = "[-:T]*"
_TIME = re.compile(r"(\d{4})" + "".join(_SEP + r"(\d\d)" for _ in range(5)) + r"(?:\.\d*)?(.?)")


def when_rotated(name, base):
    """The time (seconds since the epoch) in the name of a rotation of ``base``, or
    None when ``name`` is not one."""
    if not name.startswith(base + "."):
        return None
    found = _TIME.match(name[len(base) + 1:])
    if found is None or found.group(7) in ("Z", "z"):
        return None
    fields = [int(f) for f in found.groups()[:6]]
    if not 1 <= fields[1] <= 12:
        return None
    try:
        return time.mktime((*fields, 0, 0, -1))
    except (OverflowError, ValueError):
        return None


def rotations(path):
    """The rotated files of ``path`` (full paths), oldest first."""
    folder, base = os.path.split(path)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return []
    dated = [(when_rotated(name, base), len(name), name) for name in names]
    return [os.path.join(folder, name) for _w, _n, name in sorted(d for d in dated if d[0] is not None)]


def find(path):
    """``path``'s rotations, oldest first, then ``path`` when it exists (HTCondor's
    findHistoryFiles)."""
    return rotations(path) + ([path] if os.path.lexists(path) else [])


def rotate(path, keep, now=None):
    """Rename ``path`` to its rotated name and remove the oldest rotations past
    ``keep``."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(time.time() if now is None else now))
    # rotated before within the second: after the last of them (never in place of one the
    # pruning removed, which would sort before those kept and go at once)
    prefix = f"{os.path.basename(path)}.{stamp}"
    more = [0 if name == prefix else int(name[len(prefix) + 1:])
            for name in map(os.path.basename, rotations(path))
            if name == prefix or name.startswith(prefix + ".") and name[len(prefix) + 1:].isdigit()]
    count = max(more) + 1 if more else 0
    target = f"{path}.{stamp}.{count}" if count else f"{path}.{stamp}"
    while os.path.lexists(target):
        count += 1
        target = f"{path}.{stamp}.{count}"
    os.rename(path, target)
    for old in rotations(path)[:-keep] if keep > 0 else rotations(path):
        try:
            os.unlink(old)
        except FileNotFoundError:
            pass
