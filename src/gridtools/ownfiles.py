"""Files a command opens for its user where other users may write (a job's output in
/tmp, a DAG run from a shared folder).

``open_own`` follows a link only where the kernel's protected_symlinks would: a link in
a sticky folder anyone may write is followed when its owner is the caller or the
folder's owner, so that another user cannot plant one where the caller's file is
going (PermissionError otherwise). ``open_text`` opens such a file as a Python file.
``read_trusted`` reads a file the caller takes what it says from (a DAG's nodes log):
it must be a regular file of the caller's own, reached without a link.
"""

import errno
import os
import stat

#: the flags of open_text's modes
MODES = {"w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND}


def open_own(path, how, mode=0o644):
    """A descriptor of ``path`` opened with flags ``how`` (see the module's docstring)."""
    try:
        return os.open(path, how | os.O_NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
    link = os.lstat(path)
    folder = os.stat(os.path.dirname(path) or ".")
    shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH
    if shared and link.st_uid not in (os.geteuid(), folder.st_uid):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
    return os.open(path, how, mode)


def open_text(path, how="w", mode=0o644, binary=False):
    """``path`` opened for writing (``how``: "w" or "a") as ``open_own`` opens it; a text
    file in UTF-8, or a binary one."""
    fd = open_own(path, MODES[how], mode)
    return os.fdopen(fd, how + "b") if binary else os.fdopen(fd, how, encoding="utf-8")


def _own(fd, path):
    """PermissionError unless ``fd`` is a regular file of the caller's own."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        raise PermissionError(errno.EACCES, "not a file of your own", path)


def claim(path):
    """Make ``path`` when it is missing (the caller's, so that no other user makes it
    first); PermissionError when it is there and not a regular file of the caller's own
    reached without a link."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    try:
        _own(fd, path)
    finally:
        os.close(fd)


def read_trusted(path, binary=False):
    """What ``path`` holds (bytes, or text with undecodable bytes replaced) when it is a
    regular file of the caller's own reached without a link; PermissionError otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        _own(fd, path)
        with os.fdopen(fd, "rb") as fh:
            fd = None
            data = fh.read()
    finally:
        if fd is not None:
            os.close(fd)
    return data if binary else data.decode("utf-8", "replace")


def write_replacing(path, text):
    """Put ``text`` in ``path`` whole: written to a new file beside it (made afresh, so no
    link or file another user planted there is written through), which then takes its
    name."""
    import tempfile
    folder, name = os.path.split(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
