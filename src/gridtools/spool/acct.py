"""Appending accounting records to ``spool/accounting`` (accounting(5) format)."""

import os

from gridtools import cell
from gridtools.formats import accounting as acct_format
from gridtools.spool.files import Lock


def path():
    return cell.spool("accounting")


def append(records):
    """Append rendered records under the accounting lock, creating the file with its header."""
    if not records:
        return
    target = path()
    with Lock(target + ".lock", mode=0o600):
        new = not os.path.exists(target)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            data = (acct_format.HEADER if new else "") + "".join(acct_format.render(r) for r in records)
            os.write(fd, data.encode("utf-8", "surrogateescape"))
            os.fsync(fd)
        finally:
            os.close(fd)
