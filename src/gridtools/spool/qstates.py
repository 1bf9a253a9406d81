"""Queue instance and host states that must survive a daemon restart.

``spool/qstates.yaml`` holds what administrators set and the daemon cannot
derive again: the state letters qmod set on queue instances (``d`` disabled,
``s`` suspended, ``E`` error) with the messages explaining an error, the
drain/flush/suspend state of each execution host, and the queue instances
the daemon has seen (so ``initial_state`` applies to new ones only). Only
the daemon writes it; it is small and written whole, atomically.
"""

from gridtools import cell
from gridtools.formats import spoolyaml
from gridtools.spool.files import atomic_write, read_text

FILE = "qstates.yaml"


def path():
    return cell.spool(FILE)


def empty():
    return {"queues": {}, "hosts": {}, "known": [], "messages": {}}


def load(strict=False):
    """The stored states (empty ones when the file is missing or unreadable; with
    ``strict``, an unreadable file raises SpoolFormatError)."""
    text = read_text(path())
    data = empty()
    if text is None:
        return data
    try:
        stored = spoolyaml.load(text) if text.strip() else None
        if not isinstance(stored, dict):
            raise spoolyaml.SpoolFormatError("empty, or not a mapping of queue states")
    except spoolyaml.SpoolFormatError:
        if strict:
            raise
        return data
    for key, default in data.items():
        value = stored.get(key)
        if isinstance(value, type(default)):
            data[key] = value
    return data


def save(data):
    """Write the states atomically (the caller passes plain dicts, lists and text)."""
    atomic_write(path(), spoolyaml.dump(data), mode=0o644, fsync=True)
