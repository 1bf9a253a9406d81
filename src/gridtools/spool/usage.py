"""The decayed usage of users and projects the share tree weighs: ``spool/usage.json``.

Only the daemon writes it (atomically, after the passes that changed it);
it holds ``accounting.usage.Ledger.to_data()``, so usage survives a daemon
restart. ``qconf -clearusage`` empties it.
"""

import json

from gridtools import cell
from gridtools.spool.files import atomic_write, read_text

FILE = "usage.json"


def path():
    return cell.spool(FILE)


def load():
    """The stored plain data, or None when there is none; a file that is there but not
    JSON (or empty) raises ValueError."""
    text = read_text(path())
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        raise ValueError("it is not JSON") from None


def save(data):
    """Replace the record. Not flushed to disk at once: it is a decayed figure, and it is
    written again after every pass that changed it (a killed daemon loses nothing)."""
    atomic_write(path(), json.dumps(data, separators=(",", ":")), mode=0o644, fsync=False)
