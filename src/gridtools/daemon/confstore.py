"""The configuration objects under etc/ as the qconf requests see them.

Reading parses the stored text with ``gridtools.formats.sge``; writing
renders an object and replaces its file atomically while holding the
cell's configuration lock (``spool/config.lock``), then makes the daemon
reload its configuration so the change is obeyed from this very pass.
Grid Engine's names for each kind (used in every answer) live here too.
"""

import os

from gridtools import cell
from gridtools.errors import ConfigError
from gridtools.formats.sge import objects
from gridtools.spool import config as spool_config
from gridtools.spool.files import atomic_write, makedirs, off_path_lock

#: kind -> the object name Grid Engine's answers use ("added ... to <label> list")
LABELS = {
    "queue": "cluster queue", "exechost": "exechost", "hostgroup": "host group",
    "conf": "configuration", "sched": "scheduler configuration", "complex": "complex entry",
    "pe": "parallel environment", "ckpt": "checkpoint interface", "calendar": "calendar",
    "userset": "userset", "user": "user", "project": "project", "rqs": "resource quota set",
    "sharetree": "sharetree", "managers": "manager", "operators": "operator",
    "adminhosts": "adminhost", "submithosts": "submithost",
}

#: kind -> the name Grid Engine's answers to a deletion use instead ("removed ... from
#: execution host list", "denied: administrative host ... does not exist")
DELETE_LABELS = {"exechost": "execution host", "adminhosts": "administrative host",
                 "submithosts": "submit host"}

#: the longest object name (it is a file name under etc/)
MAX_NAME_BYTES = 255

#: kinds whose objects are one name per line of a list file
LIST_KINDS = ("managers", "operators", "adminhosts", "submithosts")


def lock():
    """The lock held while a configuration file is replaced: an flock on
    ``spool/config.lock`` (private to the daemon's user), taken through filelock, off
    any command's path (only the daemon writes etc/ for qconf)."""
    return off_path_lock(cell.spool("config.lock"))


def _safe(name):
    """Refuse names that would leave their folder when used as a file name."""
    if not isinstance(name, str) or not name or "/" in name or name.startswith(".") or "\0" in name:
        raise ConfigError(f'invalid object name "{name}"')
    try:
        too_long = len(os.fsencode(name)) > MAX_NAME_BYTES
    except UnicodeError:
        raise ConfigError(f'invalid object name "{name}"') from None
    if too_long:
        raise ConfigError(f'invalid object name "{name[:40]}...": longer than {MAX_NAME_BYTES} bytes')
    return name


def names(kind):
    """Names of the stored objects of a folder kind, sorted."""
    return spool_config.names(kind)


def exists(kind, name=None):
    return os.path.exists(spool_config.path_of(kind, None if kind in spool_config.SINGLE else _safe(name)))


def text(kind, name=None):
    """The stored text of an object, or None."""
    if kind not in spool_config.SINGLE:
        _safe(name)
    return spool_config.read_raw(kind, name)


def load(kind, name=None):
    """The stored object parsed, or None when it does not exist."""
    stored = text(kind, name)
    if stored is None:
        return None
    return objects.parse(kind, stored)


def load_all(kind):
    """``{name: object}`` of every stored object of a folder kind."""
    found = {}
    for name in names(kind):
        obj = load(kind, name)
        if obj is not None:
            found[name] = obj
    return found


def storable(kind, name, obj):
    """The text ``obj`` is stored as; ConfigError when it would not read back as the same
    object (a value that the file's syntax cannot carry)."""
    body = objects.render(kind, obj)
    try:
        again = objects.render(kind, objects.parse(kind, body))
    except ConfigError as exc:
        again = exc
    if again != body:
        raise ConfigError(f'error: {LABELS.get(kind, kind)} "{name or kind}" cannot be stored: '
                          "a value would not read back as it was given")
    return body


def write(state, kind, name, obj):
    """Render ``obj`` and store it as ``kind``/``name``; reload the daemon's view.

    Text that would not read back as the same object is refused (``storable``), and the
    stored object is left as it was.
    """
    body = storable(kind, name, obj)
    path = spool_config.path_of(kind, None if kind in spool_config.SINGLE else _safe(name))
    with lock():
        makedirs(os.path.dirname(path), 0o755)
        atomic_write(path, body, mode=0o644)
    _reload(state)


def remove(state, kind, name=None):
    """Delete a stored object (a single file kind: its file)."""
    path = spool_config.path_of(kind, None if kind in spool_config.SINGLE else _safe(name))
    with lock():
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    _reload(state)


def _reload(state):
    if state is not None:
        state.reload_config(force=True)


def known():
    """Existing names of every kind an object may refer to (for ``validate``)."""
    found = {kind: set(names(kind)) for kind in
             ("queue", "hostgroup", "exechost", "pe", "ckpt", "calendar", "userset", "project", "user")}
    found["complex"] = load("complex") or {}
    return found
