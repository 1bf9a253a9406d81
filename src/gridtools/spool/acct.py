"""Appending accounting records to ``spool/accounting`` (accounting(5) format).

``append`` writes records and flushes them to disk before it returns. The
dispatcher may instead let the flush run beside its pass (``later=True``):
the records are in the file at once (in order, under the lock), and
``settle`` waits until they are on disk. The dispatcher settles before it
writes any job state that shows those ends and before it removes any job
folder, so the record of an end is on disk before anything says the task
ended, and before its result could be gone.

A process forked while records were being flushed (a daemon forked by a test
harness, a shepherd forked by the daemon) starts with no flush of its own to
wait for: the orders it inherited are its parent's. A flush thread that is
gone is no reason to wait for ever: ``settle`` then flushes the file itself.
"""

import os
import queue
import threading

from gridtools import cell
from gridtools.errors import SpoolError
from gridtools.formats import accounting as acct_format
from gridtools.spool.files import Lock, line_break_owed


def path():
    return cell.spool("accounting")


def tail_lines(most_bytes):
    """The lines in the last ``most_bytes`` bytes of the accounting file (the first
    dropped when it was cut there), decoded; none when the file cannot be read."""
    try:
        with open(path(), "rb") as fh:
            start = max(0, fh.seek(0, os.SEEK_END) - most_bytes)
            fh.seek(start)
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    return lines[1:] if start else lines


def append(records, later=False):
    """Append rendered records under the accounting lock, creating the file with its
    header. All or nothing: a write that fails (a full disk) is cut off again, so no
    torn line is left, and raises SpoolError. With ``later``, the flush to disk runs
    in the background until ``settle``."""
    if not records:
        return
    target = path()
    with Lock(target + ".lock", mode=0o600):
        try:
            fd = os.open(target, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise SpoolError(f"cannot write {target}: {exc.strerror}") from None
        try:
            size = os.fstat(fd).st_size
            data = (acct_format.HEADER if size == 0 else "") + "".join(acct_format.render(r) for r in records)
            _write_all(fd, line_break_owed(fd) + _encoded(data))   # (a record cut short stays apart)
            if not later:
                os.fsync(fd)
        except OSError as exc:
            _cut(fd, size)
            os.close(fd)
            raise SpoolError(f"cannot write {target}: {exc.strerror}") from None
    if later:
        _FLUSHER.start(fd)
    else:
        os.close(fd)


def _encoded(text):
    """The bytes of records: a byte that was not UTF-8 as it came; any other lone
    surrogate (no request may bring one) as an escape, so that a record is never lost."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def settle():
    """Wait until every record appended with ``later`` is on disk; raises SpoolError
    when the flush failed (it is tried again at the next call)."""
    _FLUSHER.wait()


class _Flusher:
    """fsync(2) of descriptors in a thread of its own, in the order they were handed over."""

    def __init__(self):
        self.forget()
        self.failed = False          # a flush failed: the next wait flushes the file again

    def forget(self):
        """Begin with no order and no thread (also in a forked child: what it inherited
        are its parent's orders, and their thread is not in it)."""
        self.orders = queue.SimpleQueue()
        self.thread = None
        self.last = None             # [done event, error] of the newest order

    def start(self, fd):
        if self.thread is None or not self.thread.is_alive():
            self.thread = threading.Thread(target=self._serve, name="accounting-flush", daemon=True)
            self.thread.start()
        self.last = [threading.Event(), None]
        self.orders.put((fd, self.last))

    def _serve(self):
        while True:
            fd, outcome = self.orders.get()
            try:
                os.fsync(fd)
            except OSError as exc:
                outcome[1] = exc
            try:
                os.close(fd)
            except OSError:
                pass
            outcome[0].set()

    def wait(self):
        last, self.last = self.last, None
        if last is not None:
            while not last[0].wait(1.0):
                if self.thread is None or not self.thread.is_alive():
                    last[1] = last[1] or OSError("the flush thread is gone")
                    break
            if last[1] is not None:
                self.failed = True
        if self.failed:
            self._again()

    def _again(self):
        target = path()
        try:
            fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise SpoolError(f"cannot write {target}: {exc.strerror}") from None
        self.failed = False


_FLUSHER = _Flusher()
os.register_at_fork(after_in_child=_FLUSHER.forget)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _cut(fd, size):
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass
