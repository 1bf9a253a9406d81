"""Creating a cell: ``etc/`` from the shipped defaults and an empty ``spool/``.

Initialising is idempotent: files that exist are left alone, so running it
again on a cell only adds what is missing. A directory that is not empty and
is not a cell is refused. Permissions let every user of the machine submit
into a cell run by root, and nothing more: the folders of requests, replies
and job id claims are world-writable with the sticky bit (like /tmp), the
wake-up FIFO is writable by all; everything else belongs to the daemon's
user, and job folders can be passed through but not listed
(gridtools_spool(5)). ``default/common/`` holds Grid Engine's common files
(``spool.cellcommon``). ``secure`` applies these rules again to a cell made
by an older version; the daemon calls it when it starts.

The cell's own folder, ``etc/`` and ``spool/`` must belong to the user who
initialises the cell and runs its daemon, and be writable by nobody else
(``check_owned``): a user who owned the folder of a cell root runs could put
a configuration of his own in place of ``etc/``, managers and root
procedures included.
"""

import os
import shutil
import stat

from gridtools import cell
from gridtools.errors import ConfigError
from gridtools.spool.files import atomic_write, makedirs

MARKER = "cell"          # etc/cell: marks a directory as a gridtools cell


def is_cell(root):
    return os.path.exists(os.path.join(root, "etc", MARKER))


def check_owned(root):
    """Refuse (ConfigError) a cell whose folder, etc/ or spool/ is not a folder of this
    process's user that nobody else may write to."""
    import pwd
    me = os.geteuid()
    for path in (root, os.path.join(root, "etc"), os.path.join(root, "spool")):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"refusing the cell {root}: {path} is not a folder")
        if st.st_uid != me:
            try:
                owner = pwd.getpwuid(st.st_uid).pw_name
            except KeyError:
                owner = str(st.st_uid)
            raise ConfigError(f"refusing the cell {root}: {path} belongs to {owner}, "
                              "not to the user of its daemon")
        if st.st_mode & 0o022:
            raise ConfigError(f"refusing the cell {root}: others may write to {path}")


def _copy_defaults(src, dst):
    for base, dirs, files in os.walk(src):
        rel = os.path.relpath(base, src)
        target_dir = os.path.normpath(os.path.join(dst, rel))
        makedirs(target_dir, 0o755)
        for name in files:
            target = os.path.join(target_dir, name)
            if not os.path.exists(target):
                shutil.copyfile(os.path.join(base, name), target)
                os.chmod(target, 0o644)


def _substitute_root(etc_dir, root):
    for base, _dirs, files in os.walk(etc_dir):
        for name in files:
            path = os.path.join(base, name)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            if "$GRIDTOOLS_ROOT" in text:
                atomic_write(path, text.replace("$GRIDTOOLS_ROOT", root))


#: spool folders and their modes (1777: anyone may add, only owners remove; 1733 the same,
#: but only the daemon's user may list it: nobody learns the name of another's request
#: from its reply folder before it is queued)
SPOOL_DIRS = {"jobs": 0o711, "ars": 0o755, "replies": 0o1733, "requests": 0o1777,
              "taken": 0o755, "jobids": 0o1777, "arids": 0o1777}


#: lock files of the spool (readable by the daemon's user only: whoever can open one can hold it)
LOCKS = ("daemon.lock", "config.lock", "accounting.lock")


def _make_spool(root):
    spool = os.path.join(root, "spool")
    makedirs(spool, 0o755)
    secure(root)
    fifo = os.path.join(spool, "wakeup")
    if not os.path.exists(fifo):
        os.mkfifo(fifo, 0o622)
    os.chmod(fifo, 0o622)
    if not stat.S_ISFIFO(os.stat(fifo).st_mode):
        raise ConfigError(f"{fifo} exists and is not a FIFO")


def secure(root):
    """Give the spool's folders and files the modes of the security model (idempotent)."""
    spool = os.path.join(root, "spool")
    for name, mode in SPOOL_DIRS.items():
        path = os.path.join(spool, name)
        if os.path.islink(path) or (os.path.exists(path) and not os.path.isdir(path)):
            raise ConfigError(f"{path} is not a directory")
        makedirs(path, mode)
        os.chmod(path, mode)
    me = os.geteuid()
    for name in ("jobseqnum", "arseqnum"):
        path = os.path.join(spool, name)
        st = os.lstat(path) if os.path.lexists(path) else None
        if st is None or st.st_uid != me or not stat.S_ISREG(st.st_mode):
            keep = _number_in(path) if st is not None and stat.S_ISREG(st.st_mode) else 0
            atomic_write(path, f"{keep}\n", mode=0o644)
        os.chmod(path, 0o644)
    for name in LOCKS:
        path = os.path.join(spool, name)
        if os.path.isfile(path) and not os.path.islink(path):
            os.chmod(path, 0o600)
    _secure_jobs(os.path.join(spool, "jobs"))


def _secure_jobs(folder):
    """Job folders of an older spool: passable only, their descriptions private."""
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name.isdigit() and not os.path.islink(path) and os.path.isdir(path):
            os.chmod(path, 0o711)
            job_file = os.path.join(path, "job.yaml")
            if os.path.isfile(job_file) and not os.path.islink(job_file):
                os.chmod(job_file, 0o600)


def _number_in(path):
    try:
        with open(path, "rb") as fh:
            raw = fh.read(32).strip()
    except OSError:
        return 0
    return int(raw) if raw.isdigit() and len(raw) <= 7 else 0


def initialise(root, hosts, slots, manager, gpus=0, personal=False):
    """Create (or complete) the cell at ``root``. Returns the list of files created.

    ``gpus``: what each host offers as the ``gpu`` consumable; ``personal``: the
    user's own cell (see ``default_cell_objects``)."""

    root = os.path.abspath(root)
    check_owned(root)
    if os.path.isdir(root) and os.listdir(root) and not is_cell(root):
        raise ConfigError(f"refusing to initialise {root}: the directory is not empty "
                          "and is not a gridtools cell")
    makedirs(root, 0o755)
    etc_dir = os.path.join(root, "etc")
    before = _listing(etc_dir)
    _copy_defaults(cell.shipped_etc(), etc_dir)
    from gridtools.formats.sge.defaults import default_cell_objects
    for rel, text in default_cell_objects(hosts, slots, manager, gpus, personal).items():
        path = os.path.join(etc_dir, rel)
        makedirs(os.path.dirname(path), 0o755)
        if rel not in before:
            atomic_write(path, text)
    _substitute_root(etc_dir, root)
    atomic_write(os.path.join(etc_dir, MARKER), "gridtools cell\n")
    _make_spool(root)
    from gridtools.spool import cellcommon
    cellcommon.ensure_here(root)
    return sorted(_listing(etc_dir) - before)


def _listing(top):
    found = set()
    for base, _dirs, files in os.walk(top):
        for name in files:
            found.add(os.path.relpath(os.path.join(base, name), top))
    return found
