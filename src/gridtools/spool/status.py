"""The status snapshot: what queries read instead of parsing every job file.

After each pass that changed something, the daemon writes one compact file,
``spool/status``, with every job task row, every queue instance and every
host, ready for qstat, qhost, condor_q and condor_status. It is a cache, not
the record (that is the job store), so it uses Python's ``marshal`` format:
loading it needs no import and takes a few milliseconds for 10,000 jobs.
"""

import marshal
import os

from gridtools import cell
from gridtools.spool.files import atomic_write

VERSION = 1


def path():
    return cell.spool("status")


def publish(snapshot):
    """Write the snapshot (a dict of plain values) atomically."""
    snapshot = dict(snapshot)
    snapshot["version"] = VERSION
    atomic_write(path(), marshal.dumps(snapshot), mode=0o644, fsync=False)


def read():
    """The last published snapshot, or None when there is none or it is unreadable."""
    try:
        with open(path(), "rb") as fh:
            data = fh.read()
        snap = marshal.loads(data)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(snap, dict) or snap.get("version") != VERSION:
        return None
    return snap


def mtime():
    try:
        return os.stat(path()).st_mtime
    except OSError:
        return 0.0
