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

A shepherd that serves another task next (a spare, see ``exec.launch``)
keeps its task's folder for that task when the job left it empty
(``remove(..., keep=True)``): it takes the folder back from the job's owner
first (owner and mode 0700: nothing the job left running can add to it
from then on), looks that it is empty, and renames it ``.kept.<pid>`` in
the cell folder; its next task's folder is that one renamed (creating a
folder costs ten times what renaming one does on some file systems) when
that task's owner is the same user. A folder never passes from one user to
another: what its owner did to it while it was theirs stays with it (a
default ACL that later files would inherit, a descriptor open on it, an
inotify watch), so another user's task gets a new one. A spare that leaves
removes what it kept (``drop_kept``).
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
    """Remove ``name`` in ``parent_fd`` whatever it is, following no link (a folder at any
    depth: ``fstree``); OSError when some of it stays."""
    from gridtools import fstree
    if not fstree.remove_at(parent_fd, name):
        raise OSError(f"cannot remove {name}")


def _remove_dir(parent_fd, name):
    """Remove the folder ``name``: at once when the job left it empty (rmdir follows no
    link), else whatever it holds."""
    try:
        os.rmdir(name, dir_fd=parent_fd)
    except FileNotFoundError:
        return
    except OSError:
        _remove_entry(parent_fd, name)


def _kept_name():
    return f".kept.{os.getpid()}"


#: (base, cell folder) -> the user whose folder this process keeps for its next task
_KEPT = {}


def _keep(parent_fd, name):
    """Keep the folder ``name`` for this process's next task (see the module's
    docstring); its owner's uid, or None when it is not empty or cannot be kept."""
    try:
        fd = os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=parent_fd)
    except OSError:
        return None
    try:
        owner = os.fstat(fd).st_uid
        if os.geteuid() == 0:
            os.fchown(fd, 0, os.getegid())
        os.fchmod(fd, 0o700)
        if os.listdir(fd):
            return None
        os.rename(name, _kept_name(), src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
        return owner
    except OSError:
        return None
    finally:
        os.close(fd)


def _take_kept(parent_fd, name, mine=True):
    """Rename the folder this process kept to ``name``; False when that fails or the
    folder is not ``mine`` (its next owner's), which is then removed."""
    if mine:
        try:
            os.rename(_kept_name(), name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
            return True
        except OSError:
            pass
    try:
        os.rmdir(_kept_name(), dir_fd=parent_fd)
    except OSError:
        pass
    return False


def drop_kept():
    """Remove the folders this process kept (it serves no further task)."""
    for base, cell_name in _KEPT:
        try:
            base_fd = os.open(base, _DIR)
        except OSError:
            continue
        try:
            cell_fd = os.open(cell_name, _DIR | os.O_NOFOLLOW, dir_fd=base_fd)
            try:
                os.rmdir(_kept_name(), dir_fd=cell_fd)
            finally:
                os.close(cell_fd)
        except OSError:
            pass
        finally:
            os.close(base_fd)
    _KEPT.clear()


def _fresh(parent_fd, name, uid, gid, kept=None):
    """Create ``name`` new in ``parent_fd`` (mode 0700), or make it of the folder this
    process kept for the user ``kept`` when that is ``uid``, and give it to uid:gid."""
    if kept is None or not _take_kept(parent_fd, name, mine=kept == uid):
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
        key = (spec["base"], spec["cell"])
        kept = _KEPT.pop(key, None)
        try:
            _fresh(cell_fd, spec["name"], uid, gid, kept)
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


def remove(spec, path, keep=False):
    """Remove the TMPDIR made by ``make`` (``path`` is what it returned), following no link;
    with ``keep``, keep it for this process's next task when the job left it empty."""
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
                key = (spec["base"], spec["cell"])
                owner = _keep(cell_fd, spec["name"]) if keep and key not in _KEPT else None
                if owner is None:
                    _remove_dir(cell_fd, spec["name"])
                else:
                    _KEPT[key] = owner
        finally:
            os.close(cell_fd)
    finally:
        os.close(base_fd)


def write_files(path, files, uid, gid):
    """Write ``files`` ([name, variable, text] each: an HTCondor job's ad files) into the
    task's folder ``path``, owned by uid:gid, mode 0600, each made new: nothing there is
    followed or overwritten. Returns ({variable: the file's path} of those written, the
    faults met, one sentence each)."""
    written, faults = {}, []
    try:
        folder = os.open(path, _DIR | os.O_NOFOLLOW)
    except OSError as exc:
        return written, [f"cannot write files in {path}: {exc}"]
    try:
        for name, variable, text in files:
            name = os.path.basename(name)
            try:
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                             0o600, dir_fd=folder)
            except OSError as exc:
                faults.append(f"cannot write {name} in {path}: {exc}")
                continue
            try:
                if os.geteuid() == 0 and uid != 0:
                    os.fchown(fd, uid, gid)
                data = text.encode("utf-8", "replace")
                while data:                     # (a short write: the rest next)
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)
            written[variable] = os.path.join(path, name)
    finally:
        os.close(folder)
    return written, faults


def remove_files(path, files):
    """Remove what ``write_files`` wrote (entries of those names) from folder ``path``,
    opened as ``write_files`` opens it (a link put in its place is not followed)."""
    try:
        folder = os.open(path, _DIR | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        for name, _variable, _text in files or ():
            try:
                os.unlink(os.path.basename(name), dir_fd=folder)
            except OSError:
                pass
    finally:
        os.close(folder)


#: the most entries ``folder_usage`` looks at (a folder of more is counted that far)
MOST_ENTRIES = 1000000


def folder_usage(path):
    """(KiB, entries) of the folder at ``path``, as HTCondor's starter measures a job's
    scratch folder: the sizes of the files in it and its folders, at any depth (to
    ``fstree.MOST_DEPTH``), in KiB rounded up (a symbolic link is an entry, never
    followed, and counts no bytes), and how many entries they all have; (0, 0) when it
    cannot be read. Walked by open folders, so that a job that swaps a folder for a link
    meanwhile sends it nowhere else."""
    from gridtools import fstree
    size, count = fstree.usage(path, MOST_ENTRIES)
    return (size + 1023) // 1024, count
