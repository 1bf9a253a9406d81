"""Reading the cell's configuration tree under ``etc/``.

Layout (each file in Grid Engine's own text format, as ``qconf -s…`` shows it):

    etc/conf/global, etc/conf/<host>     cluster configuration (sge_conf(5))
    etc/sched_conf                       scheduler configuration (sched_conf(5))
    etc/complex                          complex attributes (complex(5))
    etc/queues/<name>                    cluster queues (queue_conf(5))
    etc/hostgroups/@<name>               host groups (hostgroup(5))
    etc/exechosts/<name>                 execution hosts, incl. ``global`` (host_conf(5))
    etc/pe/<name>, etc/ckpt/<name>       parallel and checkpointing environments
    etc/calendars/<name>                 calendars (calendar_conf(5))
    etc/usersets/<name>                  access lists and departments (access_list(5))
    etc/users/<name>, etc/projects/<name>
    etc/rqs/<name>                       resource quota sets
    etc/sharetree                        the share tree
    etc/managers, operators, adminhosts, submithosts   one name per line

``load()`` reads everything into a ``CellConfig`` of typed objects (parsed by
``gridtools.formats.sge``); the daemon reloads it when any file under etc/
changed.
"""

import os

from gridtools import cell
from gridtools.spool.files import read_text

#: kind -> folder under etc/ holding one file per object
FOLDERS = {
    "queue": "queues", "hostgroup": "hostgroups", "exechost": "exechosts", "pe": "pe",
    "ckpt": "ckpt", "calendar": "calendars", "userset": "usersets", "user": "users",
    "project": "projects", "rqs": "rqs", "conf": "conf",
}
#: kind -> single file under etc/
SINGLE = {
    "sched": "sched_conf", "complex": "complex", "sharetree": "sharetree",
    "managers": "managers", "operators": "operators", "adminhosts": "adminhosts",
    "submithosts": "submithosts",
}


def path_of(kind, name=None):
    if kind in SINGLE:
        return cell.etc(SINGLE[kind])
    return cell.etc(FOLDERS[kind], name)


def names(kind):
    """Names of the stored objects of a folder kind, sorted."""
    try:
        return sorted(n for n in os.listdir(cell.etc(FOLDERS[kind])) if not n.startswith("."))
    except FileNotFoundError:
        return []


def read_raw(kind, name=None):
    """The stored text of one object, or None."""
    return read_text(path_of(kind, name))


def read_list(kind):
    """A one-name-per-line list file (managers, operators, ...)."""
    text = read_raw(kind) or ""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def stamp():
    """A value that changes whenever any configuration file changes (the inodes, times and
    sizes of etc/ and its folders' files)."""
    top = cell.etc()
    marks = []
    try:
        with os.scandir(top) as it:
            for entry in it:
                st = entry.stat()
                marks.append((entry.name, st.st_ino, st.st_mtime_ns, st.st_size))
                if entry.is_dir():
                    for sub in os.scandir(entry.path):
                        sst = sub.stat()
                        marks.append((entry.name + "/" + sub.name, sst.st_ino, sst.st_mtime_ns, sst.st_size))
    except FileNotFoundError:
        return ()
    return tuple(sorted(marks))


def parse(kind, text):
    """Typed object from stored text (the Grid Engine formats of gridtools.formats.sge)."""
    from gridtools.formats.sge import objects
    return objects.parse(kind, text)


class CellConfig:
    """All configuration objects of a cell, parsed."""

    def __init__(self):
        self.objects = {kind: {} for kind in FOLDERS}
        self.single = {}
        self.managers = set()
        self.operators = set()

    def get(self, kind, name=None):
        if kind in SINGLE:
            return self.single.get(kind)
        return self.objects[kind].get(name)


def load(on_error=None):
    """Read and parse the whole configuration tree.

    Without ``on_error`` the first file that does not parse raises. With it,
    ``on_error(kind, name, path, exc)`` is called for each such file and
    returns the object to use instead, or None to go without it; the cell's
    own ``sched_conf``, ``complex`` and global configuration then fall back to
    the shipped defaults, which every cell needs.
    """
    conf = CellConfig()
    for kind in FOLDERS:
        for name in names(kind):
            text = read_raw(kind, name)
            if text is not None:
                _store(conf, kind, name, text, on_error)
    for kind in ("sched", "complex", "sharetree"):
        text = read_raw(kind)
        if text is not None:
            _store(conf, kind, None, text, on_error)
    conf.managers = set(read_list("managers"))
    conf.operators = set(read_list("operators"))
    return conf


#: objects a cell cannot do without: (kind, name) -> their file under the shipped etc/
NEEDED = {("sched", None): "sched_conf", ("complex", None): "complex", ("conf", "global"): "conf/global"}


def _store(conf, kind, name, text, on_error):
    try:
        obj = parse(kind, text)
    except Exception as exc:  # noqa: BLE001 - every parse error of every format
        if on_error is None:
            raise
        obj = on_error(kind, name, path_of(kind, name), exc)
        if obj is None and (kind, name) in NEEDED:
            shipped = read_text(os.path.join(cell.shipped_etc(), NEEDED[(kind, name)]))
            obj = parse(kind, shipped) if shipped is not None else None
    if obj is None:
        return
    if kind in SINGLE:
        conf.single[kind] = obj
    else:
        conf.objects[kind][name] = obj
