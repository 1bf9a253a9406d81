"""Appending accounting records to ``spool/accounting`` (accounting(5) format)."""

import os

from gridtools import cell
from gridtools.errors import SpoolError
from gridtools.formats import accounting as acct_format
from gridtools.spool.files import Lock


def path():
    return cell.spool("accounting")


def append(records):
    """Append rendered records under the accounting lock, creating the file with its
    header. All or nothing: a write that fails (a full disk) is cut off again, so no
    torn line is left, and raises SpoolError."""
    if not records:
        return
    target = path()
    with Lock(target + ".lock", mode=0o600):
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise SpoolError(f"cannot write {target}: {exc.strerror}") from None
        try:
            size = os.fstat(fd).st_size
            data = (acct_format.HEADER if size == 0 else "") + "".join(acct_format.render(r) for r in records)
            _write_all(fd, data.encode("utf-8", "surrogateescape"))
            os.fsync(fd)
        except OSError as exc:
            _cut(fd, size)
            raise SpoolError(f"cannot write {target}: {exc.strerror}") from None
        finally:
            os.close(fd)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _cut(fd, size):
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass
