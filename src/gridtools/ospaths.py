"""Paths and environment variables for the modules on the commands' start-up path,
written over the ``posix`` module instead of ``os``.

Importing ``os`` (with the ``_collections_abc`` it builds its environment
mapping on) takes longer than everything else a ``qsub`` does after the
interpreter started, so the modules a hot command imports (``cell``, the
option parsing, the spool's request writing) call ``posix`` directly and
take the few path and environment helpers they need from here. Each helper
behaves as its namesake in ``os`` or ``os.path`` for the paths the cell
uses. Once anything has imported ``os``, environment lookups go through
``os.environ``, which a program may have changed since it started.
"""

import posix
import sys

#: the file system's encoding and error handler, as os.fsencode/os.fsdecode use them
_ENCODING, _ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


def getenv(name, default=None):
    """The value of environment variable ``name`` (``default`` when unset)."""
    env = sys.modules.get("os")
    if env is not None:
        return env.environ.get(name, default)
    value = posix.environ.get(name.encode(_ENCODING, _ERRORS))
    return default if value is None else value.decode(_ENCODING, _ERRORS)


def environ():
    """The whole environment as a str dict (os.environ, imported: rarely needed)."""
    import os
    return os.environ


def environment():
    """A copy of the whole environment as a dict of str, as ``dict(os.environ)`` makes
    it, without importing ``os`` when nothing has."""
    env = sys.modules.get("os")
    if env is not None:
        return dict(env.environ)
    return {key.decode(_ENCODING, _ERRORS): value.decode(_ENCODING, _ERRORS)
            for key, value in posix.environ.items()}


def join(first, *rest):
    """``os.path.join`` for str paths."""
    path = first
    for part in rest:
        if part.startswith("/") or not path:
            path = part
        elif path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def dirname(path):
    head = path[:path.rfind("/") + 1]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head


def basename(path):
    return path.rpartition("/")[2]


def normpath(path):
    """``os.path.normpath``: no empty, ``.`` or ``..`` steps (a leading ``..`` of a
    relative path stays)."""
    if not path:
        return "."
    lead = len(path) - len(path.lstrip("/"))
    lead = 2 if lead == 2 else min(lead, 1)
    parts = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part != ".." or (not lead and (not parts or parts[-1] == "..")):
            parts.append(part)
        elif parts:
            parts.pop()
    return "/" * lead + "/".join(parts) or "."


def abspath(path):
    return normpath(path if path.startswith("/") else join(posix.getcwd(), path))


def home():
    """``os.path.expanduser("~")``: $HOME, else the password database's home."""
    found = getenv("HOME")
    if found is None:
        import pwd
        try:
            found = pwd.getpwuid(posix.getuid()).pw_dir
        except KeyError:
            return "~"
    return found.rstrip("/") or "/"


#: uid -> its password database entry (None when it has none), looked up once per process
_PASSWD = {}


def passwd_entry(uid):
    """The password database's entry of ``uid`` (None when it has none)."""
    if uid not in _PASSWD:
        import pwd
        try:
            _PASSWD[uid] = pwd.getpwuid(uid)
        except KeyError:
            _PASSWD[uid] = None
    return _PASSWD[uid]


def user_home():
    """The calling user's home folder from the password database (as Grid Engine finds
    the per-user files ``~/.sge_request``, ``~/.sge_qstat`` ...), whatever $HOME says;
    ``home()`` for a uid the database does not know."""
    entry = passwd_entry(posix.getuid())
    if entry is None:
        return home()
    return entry.pw_dir.rstrip("/") or "/"


#: the file type bits of a mode and the types, as the ``stat`` module names them (which
#: costs a command that imports it a tenth of a millisecond)
S_IFMT, S_IFDIR, S_IFREG, S_IFLNK, S_IFIFO = 0o170000, 0o040000, 0o100000, 0o120000, 0o010000
#: the mode bits of a sticky folder and of one anyone may write
S_ISVTX, S_IWOTH = 0o1000, 0o002


def is_dir_mode(mode):
    return mode & S_IFMT == S_IFDIR


def is_file_mode(mode):
    return mode & S_IFMT == S_IFREG


def is_link_mode(mode):
    return mode & S_IFMT == S_IFLNK


def is_fifo_mode(mode):
    return mode & S_IFMT == S_IFIFO


def _mode(path, follow=True):
    try:
        return (posix.stat(path) if follow else posix.lstat(path)).st_mode & 0o170000
    except (OSError, ValueError):
        return None


def isdir(path):
    return _mode(path) == 0o040000


def isfile(path):
    return _mode(path) == 0o100000


def exists(path):
    return _mode(path) is not None


def lexists(path):
    return _mode(path, follow=False) is not None


class NotRegular(OSError):
    """A path that is not a plain file (a FIFO, device, directory or link)."""


def open_plain(path):
    """A read-only descriptor of the plain file at ``path`` (a link to one is followed),
    opened without blocking, so that a FIFO is never waited on: NotRegular for
    anything but a plain file, OSError when it cannot be opened."""
    fd = posix.open(path, posix.O_RDONLY | posix.O_NONBLOCK | posix.O_CLOEXEC)
    try:
        if posix.fstat(fd).st_mode & 0o170000 != 0o100000:
            raise NotRegular(22, "not a regular file", path)     # (EINVAL)
    except BaseException:
        posix.close(fd)
        raise
    return fd
