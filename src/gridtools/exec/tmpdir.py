"""A task's TMPDIR: fresh, private, the cell's own, made and removed without following links.

Layout: ``<queue tmpdir>/gridtools.<cell id>/<job>.<task>.<queue>``. The cell
folder is owned by the daemon's user, mode 0711: other users can reach their
own task's folder inside but can neither list it nor plant anything there.
Its name carries a digest of the cell's root, so two cells on one host never
share a folder. Whatever stands in the way (a link, a file, a folder of
someone else's) is moved aside, never followed. The task's folder is created
new (a leftover of an earlier run is removed first), handed to the job's
owner with mode 0700, and removed when the task ends; every step works on
directory descriptors, so a link planted anywhere on the way is never
followed. When the cell folder cannot be made safe, the task gets a folder
with a random name made by ``mkdtemp`` in the queue's tmpdir instead.
"""

import os
import stat
import time

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
#: mode of the cell's folder of TMPDIRs: passable, not listable
CELL_MODE = 0o711


def cell_folder_name(root):
    """``gridtools.<digest of the cell's root>``."""
    import hashlib
    return "gridtools." + hashlib.sha256(os.fsencode(root)).hexdigest()[:16]


def layout(base, root, job_id, task, queue):
    """The plan's description of a task's TMPDIR: {"base", "cell", "name", "path"}."""
    cell_name = cell_folder_name(root)
    name = f"{job_id}.{task}.{queue}"
    return {"base": base, "cell": cell_name, "name": name,
            "path": os.path.join(base, cell_name, name)}


def _set_aside(base_fd, name):
    os.rename(name, f"{name}.set-aside.{time.time_ns()}", src_dir_fd=base_fd, dst_dir_fd=base_fd)


def _cell_fd(base_fd, name):
    """The cell folder, opened; created, or made safe by moving a planted entry aside."""
    me = os.geteuid()
    for _attempt in range(4):
        try:
            fd = os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=base_fd)
        except FileNotFoundError:
            try:
                os.mkdir(name, CELL_MODE, dir_fd=base_fd)
            except FileExistsError:
                pass
            continue
        except OSError:                       # a link or a file in the way
            _set_aside(base_fd, name)
            continue
        st = os.fstat(fd)
        if st.st_uid == me and not st.st_mode & 0o022:
            if stat.S_IMODE(st.st_mode) != CELL_MODE:
                os.fchmod(fd, CELL_MODE)
            return fd
        os.close(fd)
        _set_aside(base_fd, name)
    raise PermissionError(f"cannot make {name} safe")


def _remove_entry(parent_fd, name):
    """Remove ``name`` in ``parent_fd`` whatever it is, following no link."""
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        import shutil
        shutil.rmtree(name, dir_fd=parent_fd)
    else:
        os.unlink(name, dir_fd=parent_fd)


def _remove_dir(parent_fd, name):
    """Remove the folder ``name``: at once when the job left it empty (rmdir follows no
    link), else whatever it holds."""
    try:
        os.rmdir(name, dir_fd=parent_fd)
    except FileNotFoundError:
        return
    except OSError:
        _remove_entry(parent_fd, name)


def _fresh(parent_fd, name, uid, gid):
    """Create ``name`` new in ``parent_fd`` (mode 0700) and give it to uid:gid."""
    try:
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    except FileExistsError:                   # a leftover of an earlier run
        _remove_entry(parent_fd, name)
        os.mkdir(name, 0o700, dir_fd=parent_fd)
    fd = os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=parent_fd)
    try:
        if os.geteuid() == 0:
            os.fchown(fd, uid, gid)
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def make(spec, uid, gid):
    """Create the TMPDIR ``spec`` (see ``layout``) for uid:gid; returns its path, which
    is a random fallback folder when the cell folder cannot be used."""
    base_fd = os.open(spec["base"], _DIR)
    try:
        try:
            cell_fd = _cell_fd(base_fd, spec["cell"])
        except OSError:
            return _fallback(spec, uid, gid)
        try:
            _fresh(cell_fd, spec["name"], uid, gid)
        finally:
            os.close(cell_fd)
    finally:
        os.close(base_fd)
    return spec["path"]


def _fallback(spec, uid, gid):
    import tempfile
    path = tempfile.mkdtemp(prefix=f"{spec['cell']}.{spec['name']}.", dir=spec["base"])
    if os.geteuid() == 0:
        os.chown(path, uid, gid, follow_symlinks=False)
    return path


def remove(spec, path):
    """Remove the TMPDIR made by ``make`` (``path`` is what it returned), following no link."""
    if path != spec["path"]:
        parent, name = os.path.split(path)
        base_fd = os.open(parent, _DIR)
        try:
            _remove_entry(base_fd, name)
        finally:
            os.close(base_fd)
        return
    base_fd = os.open(spec["base"], _DIR)
    try:
        cell_fd = os.open(spec["cell"], _DIR | os.O_NOFOLLOW, dir_fd=base_fd)
        try:
            if os.fstat(cell_fd).st_uid == os.geteuid():
                _remove_dir(cell_fd, spec["name"])
        finally:
            os.close(cell_fd)
    finally:
        os.close(base_fd)
