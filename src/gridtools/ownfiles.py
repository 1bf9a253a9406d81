"""Files a command opens for its user where other users may write (a job's output in
/tmp, a DAG run from a shared folder).

``open_own`` follows a link only where the kernel's protected_symlinks would: a link in
a sticky folder anyone may write is followed when its owner is the caller (its effective
uid) or the folder's owner, so that another user cannot plant one where the caller's file
is going (PermissionError otherwise). A folder anyone may write that is not sticky lets
anyone put a link there or swap one: only the caller's own links there are followed,
and root's. A folder another user made in such a shared folder (its owner neither the
caller, nor root, nor the sticky folder's owner) is theirs to fill: it is "planted",
and so is everything below it until a folder of the caller's or root's; only the
caller's own links and root's are followed in it. The rule holds for every part of
the path, its folders as much as its last name, and whatever fs.protected_symlinks
says: the path is walked a part at a time, each folder held open while the next is
looked at, so that nothing swapped in meanwhile is followed.

A file opened to be written (O_CREAT) that is already there in a folder anyone may
write, or in a planted one, must be the caller's or root's, or (in a sticky folder,
not planted) the folder owner's, as the kernel's protected_regular and
protected_fifos say: a plain file or a FIFO another user left where the caller's
output is going is not written through (PermissionError), never waited on, and not
emptied first.

``resolve_own`` gives the path so walked, ``is_own_dir`` tells whether it leads to a
folder, ``makedirs_own`` makes the folders of a path that are missing, ``chdir_own``
makes it the working folder. ``open_text`` opens such a file as a Python file.
``read_trusted`` reads a file the caller takes what it says from (a DAG's nodes log):
it must be a regular file of the caller's own, reached without a link.
"""

import posix

from gridtools import ospaths

#: the flags of open_text's modes
MODES = {"w": posix.O_WRONLY | posix.O_CREAT | posix.O_TRUNC, "a": posix.O_WRONLY | posix.O_CREAT | posix.O_APPEND}


#: the most links one path may go through (the kernel's MAXSYMLINKS)
MAX_LINKS = 40
#: how a folder of the path is held while the walk goes on (no read right needed)
_FOLDER = posix.O_PATH | posix.O_DIRECTORY | posix.O_NOFOLLOW | posix.O_CLOEXEC


def open_own(path, how, mode=0o644, follow_last=True):
    """A descriptor of ``path`` opened with flags ``how`` (see the module's docstring);
    without ``follow_last`` a link as the path's last part is not followed at all (ELOOP),
    as O_NOFOLLOW would have it, while its folders are walked by the rule."""
    for _ in range(3):
        folder, name, _where, wary = _walk(path, follow_last=follow_last)
        try:
            if how & posix.O_CREAT and name:
                held = posix.fstat(folder)
                if wary or held.st_mode & ospaths.S_IWOTH:
                    return _open_shared(folder, held, name, how, mode, wary, path)
            return posix.open(name or ".", how | posix.O_NOFOLLOW, mode, dir_fd=folder)
        except OSError as exc:
            if exc.errno != _errno("ELOOP"):
                raise _named(exc, path) from None
            # (a link made there since it was looked at: walked again, by the rule)
        finally:
            posix.close(folder)
    raise _error(OSError, "ELOOP", path)


def _open_shared(folder, held, name, how, mode, wary, path):
    """Open ``name`` to write in a ``folder`` others may write (or a ``wary`` one, planted):
    what is there already must be the caller's or root's, or in a sticky folder not
    planted its owner's (PermissionError). The open never waits (a FIFO is looked at
    first) and empties a file only once it is known to be one that may be written."""
    me = posix.geteuid()
    try:
        there = posix.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        there = None
    if there is not None and not ospaths.is_link_mode(there.st_mode) and not _trusted(there.st_uid, held, wary):
        raise _error(PermissionError, "EACCES", path)     # (not even opened)
    quick = posix.O_NONBLOCK
    if there is not None and ospaths.is_fifo_mode(there.st_mode) and there.st_uid == me:
        quick = 0                       # (the caller's own FIFO: waited on, as a qrsh client's)
    fd = posix.open(name, (how & ~posix.O_TRUNC) | posix.O_NOFOLLOW | quick, mode, dir_fd=folder)
    try:
        found = posix.fstat(fd)
        if not _trusted(found.st_uid, held, wary):
            raise _error(PermissionError, "EACCES", path)
        if how & posix.O_TRUNC and ospaths.is_file_mode(found.st_mode):
            posix.ftruncate(fd, 0)
        if quick and not how & posix.O_NONBLOCK:
            import fcntl
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~posix.O_NONBLOCK)
        return fd
    except BaseException:
        posix.close(fd)
        raise


def resolve_own(path):
    """``path`` with every link on it followed as ``open_own`` follows them: a path
    without links (its last name may be missing); PermissionError for a link the rule
    refuses, FileNotFoundError or NotADirectoryError for a folder that is not there."""
    folder, name, where, _wary = _walk(path)
    posix.close(folder)
    return "/" + "/".join(where + [name] if name else where)


def is_own_dir(path):
    """True when ``path``, walked as ``open_own`` walks it, leads to a folder; False when
    it does not, or the walk fails (a link the rule refuses)."""
    try:
        folder, name, _where, _wary = _walk(path)
    except OSError:
        return False
    try:
        return ospaths.is_dir_mode(posix.stat(name or ".", dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False
    finally:
        posix.close(folder)


def chdir_own(path):
    """Make the folder ``path``, walked as ``open_own`` walks it, the working folder
    (entered by its descriptor: nothing swapped in after the walk is followed)."""
    fd = open_own(path, _FOLDER)
    try:
        posix.fchdir(fd)
    finally:
        posix.close(fd)


def move_aside_own(path, new_name):
    """Rename the file ``path`` to ``new_name`` (a name in the same folder), the folder
    walked as ``open_own`` walks it (nothing a planted link leads to is renamed), when
    it is a regular file of the caller's own; False when there is none such."""
    fd = open_own(ospaths.dirname(path) or ".", _FOLDER)
    try:
        name, other = ospaths.basename(path), ospaths.basename(new_name)
        try:
            info = posix.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if not ospaths.is_file_mode(info.st_mode) or info.st_uid != posix.geteuid():
            return False
        posix.replace(name, other, src_dir_fd=fd, dst_dir_fd=fd)
        return True
    finally:
        posix.close(fd)


def remove_planted(path):
    """Remove what ``path`` names when it is not a regular file of the caller's own (a
    file or link of another user's, a FIFO), the folder walked as ``open_own`` walks it
    and the kernel's rules deciding whether the caller may (its own folder, one it may
    write that is not sticky); True when one was removed."""
    try:
        fd = open_own(ospaths.dirname(path) or ".", _FOLDER)
    except OSError:
        return False
    try:
        name = ospaths.basename(path)
        try:
            info = posix.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return False
        if ospaths.is_dir_mode(info.st_mode) or ospaths.is_file_mode(info.st_mode) and info.st_uid == posix.geteuid():
            return False
        try:
            posix.unlink(name, dir_fd=fd)
        except OSError:
            return False
        return True
    finally:
        posix.close(fd)


def makedirs_own(path, mode=0o777):
    """Make the folders of ``path`` that are missing, ``path`` too (``mode``), walking it
    as ``open_own`` does; an OSError when one cannot be made or is not a folder."""
    folder, name, _where, _wary = _walk(path, make=mode)
    try:
        if name and not ospaths.is_dir_mode(posix.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
            raise _error(NotADirectoryError, "ENOTDIR", path)
    finally:
        posix.close(folder)


def _walk(path, make=None, follow_last=True):
    """(descriptor of the folder that holds what ``path`` names, its name there, the
    names of that folder from /, whether that folder is planted): every link met on the
    way followed when the rule allows it. The last name is "" when the path ends at a
    folder ("/", "..") and may be missing; with ``make`` (a mode) the missing folders,
    the last one too, are made."""
    path = posix.fspath(path)
    if not path:
        raise _error(FileNotFoundError, "ENOENT", path)
    folder, where = _start(path)
    warys = [False] * len(where)        # (of each folder of ``where``: planted)
    pending = _parts(path)
    links = 0
    try:
        while pending:
            name = pending.pop(0)
            if name == "..":
                folder = _enter(folder, "..")
                where, warys = where[:-1], warys[:-1]
                continue
            info = _look(folder, name, make, not pending)
            if info is not None and ospaths.is_link_mode(info.st_mode) and not pending and not follow_last:
                raise _error(OSError, "ELOOP", path)
            if info is not None and ospaths.is_link_mode(info.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise _error(OSError, "ELOOP", path)
                _may_follow(folder, info, path, bool(warys and warys[-1]))
                target = posix.readlink(name, dir_fd=folder)
                if target.startswith("/"):
                    fresh, where = _start(target)
                    posix.close(folder)
                    folder, warys = fresh, []
                pending[:0] = _parts(target)
                continue
            if not pending:
                return folder, name, where, bool(warys and warys[-1])
            held = posix.fstat(folder)
            folder = _enter(folder, name)
            where = where + [name]
            warys = warys + [_planted(held, posix.fstat(folder), bool(warys and warys[-1]))]
        return folder, "", where, bool(warys and warys[-1])
    except OSError as exc:
        posix.close(folder)
        raise _named(exc, path) from None
    except BaseException:
        posix.close(folder)
        raise


def _errno(name):
    """The number of error ``name`` (errno is imported only on the way to an error)."""
    import errno
    return getattr(errno, name)


def _error(kind, name, path, words=None):
    """An exception ``kind`` of error ``name`` on ``path``, in ``words`` or the system's."""
    number = _errno(name)
    return kind(number, words or posix.strerror(number), path)


def _named(exc, path):
    """``exc`` naming the whole ``path`` (not the part of it that failed)."""
    if exc.filename == path:
        return exc
    return type(exc)(exc.errno, exc.strerror, path)


def _start(path):
    """(descriptor, names) of where a walk of ``path`` begins: / or the working folder."""
    if path.startswith("/"):
        return posix.open("/", _FOLDER), []
    fd = posix.open(".", _FOLDER)
    return fd, [n for n in posix.getcwd().split("/") if n]


def _parts(path):
    return [n for n in path.split("/") if n and n != "."]


def _look(folder, name, make, last):
    """lstat of ``name`` in ``folder``; when it is missing: made when ``make`` (a mode) is
    given, else None for the ``last`` name of the path, else FileNotFoundError."""
    try:
        return posix.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        if make is None and last:
            return None
        if make is None:
            raise
    try:
        posix.mkdir(name, make, dir_fd=folder)
    except FileExistsError:
        pass
    return posix.stat(name, dir_fd=folder, follow_symlinks=False)


def _enter(folder, name):
    """The descriptor of folder ``name`` of ``folder`` (which is closed then); no link is
    entered (NotADirectoryError: it became one since it was looked at)."""
    entered = posix.open(name, _FOLDER, dir_fd=folder)
    posix.close(folder)
    return entered


def _may_follow(folder, link, path, wary):
    """PermissionError unless the ``link`` (its lstat) in ``folder`` may be followed: in
    a sticky folder anyone may write, only one of the caller's or of the folder's owner;
    in another folder anyone may write, or a planted one (``wary``), only the caller's."""
    held = posix.fstat(folder)
    if (wary or held.st_mode & ospaths.S_IWOTH) and not _trusted(link.st_uid, held, wary):
        raise _error(PermissionError, "EACCES", path)


def _planted(held, entered, wary):
    """True when the folder ``entered`` (its fstat), entered from ``held`` (planted when
    ``wary``), is planted: in a planted folder or one anyone may write, and made by
    someone the rule does not trust there."""
    return bool(wary or held.st_mode & ospaths.S_IWOTH) and not _trusted(entered.st_uid, held, wary)


def _trusted(uid, held, wary):
    """True when what user ``uid`` made in the folder ``held`` (its fstat; planted when
    ``wary``), a folder others may write, may be used: the caller's own, root's, and in
    a sticky folder not planted its owner's."""
    if uid in (posix.geteuid(), 0):
        return True
    return bool(held.st_mode & ospaths.S_ISVTX) and uid == held.st_uid and not wary


def open_text(path, how="w", mode=0o644, binary=False):
    """``path`` opened for writing (``how``: "w" or "a") as ``open_own`` opens it; a text
    file in UTF-8, or a binary one."""
    fd = open_own(path, MODES[how], mode)
    return open(fd, how + "b") if binary else open(fd, how, encoding="utf-8")


def _own(fd, path):
    """PermissionError unless ``fd`` is a regular file of the caller's own."""
    st = posix.fstat(fd)
    if not ospaths.is_file_mode(st.st_mode) or st.st_uid != posix.geteuid():
        raise _error(PermissionError, "EACCES", path, "not a file of your own")


def claim(path):
    """Make ``path`` when it is missing (the caller's, so that no other user makes it
    first); PermissionError when it is there and not a regular file of the caller's own
    reached without a link."""
    fd = posix.open(path, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT | posix.O_NOFOLLOW | posix.O_NONBLOCK, 0o644)
    try:
        _own(fd, path)
    finally:
        posix.close(fd)


def read_trusted(path, binary=False):
    """What ``path`` holds (bytes, or text with undecodable bytes replaced) when it is a
    regular file of the caller's own reached without a link; PermissionError otherwise."""
    fd = posix.open(path, posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK)
    try:
        _own(fd, path)
        with open(fd, "rb") as fh:
            fd = None
            data = fh.read()
    finally:
        if fd is not None:
            posix.close(fd)
    return data if binary else data.decode("utf-8", "replace")


def write_replacing(path, text):
    """Put ``text`` in ``path`` whole: written to a new file beside it (made afresh, so no
    link or file another user planted there is written through), which then takes its
    name."""
    import tempfile
    folder, name = ospaths.dirname(path), ospaths.basename(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        posix.chmod(temporary, 0o644)
        posix.replace(temporary, path)
    except BaseException:
        try:
            posix.unlink(temporary)
        except OSError:
            pass
        raise
