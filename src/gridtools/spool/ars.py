"""The advance reservation store: one file per reservation, ``spool/ars/<id>``.

Each file is a spool-YAML mapping written atomically by the daemon alone
(clients only allocate the id, see ``ids``): the reservation's request and
owner, its window, the granted queue instances and parallel environment,
and its state (``granted``, ``error``; a deleted or ended reservation's
file is removed). Its existence also keeps the id from being handed out
again while the reservation lives.
"""

import os

from gridtools import cell
from gridtools.formats import spoolyaml
from gridtools.spool.files import atomic_write, makedirs, read_text


def folder():
    return cell.spool("ars")


def path(ar_id):
    return cell.spool("ars", str(int(ar_id)))


def list_ids():
    """Ids of the stored reservations, ascending."""
    try:
        return sorted(int(n) for n in os.listdir(folder()) if n.isdigit())
    except FileNotFoundError:
        return []


def read(ar_id):
    """The stored mapping of one reservation, or None (absent or unreadable)."""
    text = read_text(path(ar_id))
    if text is None:
        return None
    try:
        data = spoolyaml.load(text)
    except spoolyaml.SpoolFormatError:
        return None
    return data if isinstance(data, dict) else None


def read_all():
    """id -> mapping of every readable stored reservation."""
    found = {}
    for ar_id in list_ids():
        data = read(ar_id)
        if data is not None:
            found[ar_id] = data
    return found


def write(data):
    """Store (or rewrite) a reservation; readable by everyone, as qrstat shows it to all."""
    if not os.path.isdir(folder()):
        makedirs(folder(), 0o755)
    atomic_write(path(data["id"]), spoolyaml.dump(data), mode=0o644)


def remove(ar_id):
    try:
        os.unlink(path(ar_id))
    except FileNotFoundError:
        pass
