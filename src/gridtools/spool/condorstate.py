"""The HTCondor side's records in the spool, each one JSON file only the daemon writes.

- ``spool/userprio.json``  the accountant's user priorities
                           (``accounting.userprio.Accountant.to_data()``), readable by
                           everybody: condor_userprio reads it
- ``spool/startd.json``    each slot's state and activity, the times it entered them
                           and the task it serves, so a restarted daemon goes on
                           where it stopped

Writes are atomic; a file that cannot be read counts as absent.
"""

import json

from gridtools import cell
from gridtools.spool.files import atomic_write, read_text

USERPRIO = "userprio.json"
STARTD = "startd.json"


def path(name):
    return cell.spool(name)


def load(name, strict=False):
    """The stored plain data, or None when there is none (or it cannot be read); with
    ``strict``, a file that is there but not JSON (or empty) raises ValueError."""
    try:
        text = read_text(path(name))
    except OSError:
        return None
    if text is None or not text and not strict:
        return None
    try:
        return json.loads(text)
    except ValueError:
        if strict:
            raise ValueError("it is not JSON") from None
        return None


def save(name, data, fsync=False):
    atomic_write(path(name), json.dumps(data, separators=(",", ":"), sort_keys=True), mode=0o644,
                 fsync=fsync)
