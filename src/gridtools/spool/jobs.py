"""The job store: one directory per job under ``spool/jobs/<id>/``.

- ``job.yaml``    the job description (written once at intake, rewritten by
                  qalter); readable by the daemon only
- ``owner.yaml``  the same description, readable by the job's owner only (qstat -j)
- ``script``      the job script as submitted (absent for ``-b y`` jobs), owned
                  by the job's owner and readable by nobody else
- ``state.yaml``  the state of the job's tasks; written only by the daemon
                  (absent until the first task left the pending state)
- ``ended.yaml``  an array job's finished tasks, appended as they finish (a later
                  record of a task replaces an earlier one; a record in state.yaml
                  replaces both)
- ``<n>/``        per task that ran: its plan (private), the shepherd's lock (its
                  pid and the process group it runs), the control lock (held
                  while the task is signalled), the PE host file,
                  ``result.reserve`` (space set aside for the result),
                  ``shepherd.exit`` (written by the shepherd's parent when it ended
                  without a result), ``withdrawn.<launch>`` (a launch the daemon took
                  back before its shepherd started: a late shepherd of it does
                  nothing), ``usage`` (what the job has used so far, rewritten by
                  the shepherd as it runs), ``transfers`` (when an HTCondor job's
                  files began and ended to be copied in and back, rewritten by the
                  shepherd at each) and, when the task ended, ``result.yaml``

Only the daemon creates, changes and removes job directories; the shepherd
of a task writes inside its own ``tasks/<n>/`` folder only. The folders are
mode 0711 and owned by the daemon's user: others may pass through to what
is theirs (their script, their task's PE host file) but list nothing.

Folders are used again: emptying the trash (``empty_trash``) leaves the
emptied job and task folders in ``spool/fresh`` (at most FRESH_MOST), and a
new job or task folder is one of them renamed into place when there is one
(``take_fresh``). On some file systems creating a folder costs ten times
what renaming one does (ext4 looks for a place for it among its block
groups): a third of a millisecond, twice for every task that runs. Only
empty folders of mode 0711 owned by the daemon's user enter ``fresh``.
"""

import os

from gridtools import cell
from gridtools.errors import SpoolError
from gridtools.formats import spoolyaml
from gridtools.spool import files
from gridtools.spool.files import atomic_write, makedirs, read_text, write_new

JOB_FILE = "job.yaml"
OWNER_FILE = "owner.yaml"
STATE_FILE = "state.yaml"
ENDED_FILE = "ended.yaml"
SCRIPT_FILE = "script"
RESULT_FILE = "result.yaml"
SHEPHERD_LOCK = "shepherd.lock"
CONTROL_LOCK = "control.lock"     # held while a task is signalled, or its shepherd lets go of it
RESERVE_FILE = "result.reserve"
LAUNCH_FILE = "launch"             # (written by earlier versions; removed with a task's files)
OBITUARY_FILE = "shepherd.exit"
USAGE_FILE = "usage"
TRANSFERS_FILE = "transfers"
#: the stages of a run's file copying its shepherd notes in ``transfers``, in their order
TRANSFER_STAGES = ("in_started", "in_finished", "out_started", "out_finished")
WITHDRAWN_PREFIX = "withdrawn."
#: width of the shepherd's record at the start of its lock file (rewritten in place)
LOCK_RECORD = 80
RESERVE_SIZE = 16384        # bytes set aside for a task's result while it runs
#: mode of the job and task folders: passable, not listable, by others
DIR_MODE = 0o711
#: mode of a task's result (its exit, usage and failure, the paths of its files): the
#: daemon's and its shepherd's alone (qstat -j shows others what they may see of it)
RESULT_MODE = 0o600
#: mode a task folder shows once its job's owner may list it too (``let_owner_list``)
LISTED_MODE = 0o751
#: new job descriptions up to this many are flushed to disk one by one, more at once
SYNC_ONE_BY_ONE = 2
#: the folder of emptied folders kept for new jobs and tasks, and how many it keeps
FRESH = "fresh"
FRESH_MOST = 256
#: seconds after finding ``fresh`` empty before looking in it again
FRESH_LOOK_EVERY = 1.0


def jobs_dir():
    return cell.spool("jobs")


def job_dir(job_id):
    return cell.spool("jobs", str(job_id))


def task_dir(job_id, number):
    return cell.spool("jobs", str(job_id), str(number))


def executing_since(job_id, number):
    """When a running task's job began to execute (its shepherd writes ``job_pid`` once
    the input files are copied in and the prolog is done: HTCondor's
    JobCurrentStartExecutingDate), or None while it has not (a new run's folder has none)."""
    try:
        return int(os.stat(os.path.join(task_dir(job_id, number), "job_pid")).st_mtime)
    except OSError:
        return None


def list_ids():
    """Ids of all jobs in the store, ascending (none for users who may not list it)."""
    try:
        return sorted(int(n) for n in os.listdir(jobs_dir()) if n.isdigit())
    except (FileNotFoundError, PermissionError):
        return []


def _owner(spec):
    return spec["uid"], spec["gid"]


def create(spec, script):
    """Store a new job. The description is written last: a folder without it
    (left by a crash) is incomplete and is written again from the request. It is not
    flushed to disk here: ``sync_specs`` flushes the descriptions of a whole intake."""
    folder = job_dir(spec["id"])
    if not take_fresh(folder):
        try:
            os.mkdir(folder, DIR_MODE)
        except FileExistsError:
            pass
    os.chmod(folder, DIR_MODE)
    if script is not None:
        atomic_write(os.path.join(folder, SCRIPT_FILE), script, mode=0o500, fsync=False,
                     owner=_owner(spec))
    write_spec(spec, fresh=True, fsync=False)


def sync_specs(job_ids):
    """Flush the descriptions of new jobs to disk (one intake's worth at a time): one by
    one when they are few, else with one flush of the spool's file system (syncfs(2)),
    which costs about what a single fsync does."""
    job_ids = list(job_ids)
    if len(job_ids) > SYNC_ONE_BY_ONE and files.sync_file_system(jobs_dir()):
        return
    for job_id in job_ids:
        try:
            fd = os.open(spec_path(job_id), os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def spec_path(job_id):
    return os.path.join(job_dir(job_id), JOB_FILE)


def read_spec(job_id):
    """The job description (the daemon's copy, else the owner's); None when the job
    does not exist. PermissionError for another user's job."""
    try:
        text = read_text(os.path.join(job_dir(job_id), JOB_FILE))
    except PermissionError:
        text = read_text(os.path.join(job_dir(job_id), OWNER_FILE))
    return spoolyaml.load(text) if text is not None else None


def write_spec(spec, fresh=False, fsync=True):
    """Write the description (the daemon's copy last); ``fresh``: the job is new, so the
    owner's copy can be written in place (no reader looks before job.yaml exists)."""
    text = spoolyaml.dump(dict(spec))
    folder = job_dir(spec["id"])
    mine = os.path.join(folder, OWNER_FILE)
    if fresh:
        write_new(mine, text, 0o400, _owner(spec))
    else:
        atomic_write(mine, text, mode=0o400, fsync=False, owner=_owner(spec))
    atomic_write(os.path.join(folder, JOB_FILE), text, mode=0o600, fsync=fsync)


def read_state(job_id):
    """The job's state (None when nothing happened to it yet): state.yaml with the
    records of ended.yaml joined in; ``ended`` names the task numbers (as strings) whose
    record came from ended.yaml."""
    folder = job_dir(job_id)
    text = read_text(os.path.join(folder, STATE_FILE))
    ended_text = read_text(os.path.join(folder, ENDED_FILE))
    if ended_text is None:
        return spoolyaml.load(text) if text is not None else None
    state = spoolyaml.load(text) if text is not None else {"hold": "", "deleted": False, "tasks": {}}
    ended = spoolyaml.load(ended_text)
    if isinstance(state, dict) and isinstance(state.get("tasks"), dict) and isinstance(ended, dict):
        own = state["tasks"]
        state["ended"] = [n for n in ended if n not in own]
        ended.update(own)
        state["tasks"] = ended
    return state


def write_state(job_id, state, ended=None):
    """Write the job's state file, after appending the records ``ended`` (task number
    as a string -> record) to its ended-tasks file."""
    # no fsync: the state is rebuilt from task results and the accounting
    # file after a machine crash (see gridtools_spool(5))
    folder = job_dir(job_id)
    if ended:
        files.append_text(os.path.join(folder, ENDED_FILE), spoolyaml.dump(ended))
    atomic_write(os.path.join(folder, STATE_FILE), spoolyaml.dump(state), fsync=False)


def script_path(job_id):
    return os.path.join(job_dir(job_id), SCRIPT_FILE)


def read_result(job_id, number):
    """The result a task's shepherd wrote, or None while it runs."""
    text = read_text(os.path.join(task_dir(job_id, number), RESULT_FILE))
    if text is None:
        return None
    try:
        return spoolyaml.load(text)
    except spoolyaml.SpoolFormatError:
        return None


def reserve_result(job_id, number):
    """Shepherd side, at the start of a task: set aside disk space for its result, so
    that the result can be written even when the disk has filled up meanwhile."""
    try:
        fd = os.open(os.path.join(task_dir(job_id, number), RESERVE_FILE),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, RESULT_MODE)
    except OSError:
        return False
    try:
        # a write takes the space at once (delayed allocation reserves it too): no fsync
        os.write(fd, bytes(RESERVE_SIZE))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def write_result(job_id, number, result, on_visible=None):
    """Write a task's result: into the space reserved for it when there is some (no new
    space needed), else atomically as any spool file. The result is put in place before
    it is flushed to disk, and ``on_visible`` is called in between: the daemon may take
    the result while the flush goes on (the lasting record of the end is the daemon's
    accounting record, written to disk before any job state shows the end)."""
    folder = task_dir(job_id, number)
    data = spoolyaml.dump(result).encode()
    reserved = os.path.join(folder, RESERVE_FILE)
    if len(data) <= RESERVE_SIZE:
        try:
            fd = os.open(reserved, os.O_WRONLY)
        except OSError:
            fd = None
        if fd is not None:
            try:
                os.pwrite(fd, data, 0)
                os.ftruncate(fd, len(data))
                os.rename(reserved, os.path.join(folder, RESULT_FILE))
            except OSError:
                pass
            else:
                if on_visible is not None:
                    on_visible()
                try:
                    os.fsync(fd)
                except OSError:
                    pass
                return
            finally:
                os.close(fd)
    atomic_write(os.path.join(folder, RESULT_FILE), data, mode=RESULT_MODE)
    if on_visible is not None:
        on_visible()


#: what a running task's ``usage`` file holds (numbers; the time it was written)
USAGE_KEYS = ("cpu", "mem", "io", "vmem", "maxvmem", "maxrss", "disk", "files")


def write_usage(folder, usage):
    """Shepherd side: note what the job in task folder ``folder`` has used so far."""
    import time
    data = {key: usage.get(key, 0) for key in USAGE_KEYS}
    data["time"] = time.time()
    try:
        atomic_write(os.path.join(folder, USAGE_FILE), spoolyaml.dump(data), fsync=False)
    except SpoolError:
        pass


def read_usage(job_id, number):
    """What a running task has used so far ({key: number, "time": when}); None when its
    shepherd has not said (or what it wrote does not read)."""
    try:
        text = read_text(os.path.join(task_dir(job_id, number), USAGE_FILE))
        data = spoolyaml.load(text) if text is not None else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    found = {}
    for key in USAGE_KEYS + ("time",):
        value = data.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
            return None
        found[key] = float(value)
    return found


def write_transfers(folder, stages):
    """Shepherd side: note when the run in task folder ``folder`` began and ended to copy
    its files (``stages``: stage name -> whole seconds, see TRANSFER_STAGES)."""
    text = "".join(f"{name} {int(stages[name])}\n" for name in TRANSFER_STAGES if name in stages)
    try:
        atomic_write(os.path.join(folder, TRANSFERS_FILE), text, fsync=False)
    except SpoolError:
        pass


def read_transfers(job_id, number):
    """When a running task's run began and ended to copy its files ({stage: seconds} of
    the stages it reached, see TRANSFER_STAGES); None when its shepherd has noted none
    (its job moves no files, or has not begun to) or what it wrote does not read."""
    try:
        text = read_text(os.path.join(task_dir(job_id, number), TRANSFERS_FILE))
    except OSError:
        return None
    if not text:
        return None
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name not in TRANSFER_STAGES or not (value.isascii() and value.isdigit()):
            return None
        found[name] = int(value)
    return found


def withdrawn_name(token):
    """The name of the file in a task folder that says launch ``token`` was taken back."""
    return WITHDRAWN_PREFIX + token


#: what a running task's shepherd notes of its checkpoints (count, time, committed seconds)
CHECKPOINTS_FILE = "checkpoints"


#: the folder of a task that keeps an evicted ON_EXIT_OR_EVICT job's output sandbox
#: until its next run (exec.transfer); the job's owner's, mode 0700
EVICTED_SANDBOX = "evicted_sandbox"


def drop_spooled_sandbox(folder):
    """Remove the spooled sandbox (``EVICTED_SANDBOX``) of the task folder ``folder``,
    following no link the job's owner left in it (the daemon runs as root); True when
    none is left."""
    from gridtools import fstree
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        return fstree.remove_at(fd, EVICTED_SANDBOX)
    finally:
        os.close(fd)


def make_task_dir(job_id, number):
    """Create a task's folder; a folder left by an earlier run is emptied of its results."""
    path = task_dir(job_id, number)
    if take_fresh(path):
        return path
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        for name in (RESULT_FILE, SHEPHERD_LOCK, "job_pid", "pid", "trace", "error", RESERVE_FILE,
                     LAUNCH_FILE, OBITUARY_FILE, USAGE_FILE, TRANSFERS_FILE, CHECKPOINTS_FILE):
            try:
                os.unlink(os.path.join(path, name))
            except FileNotFoundError:
                pass
    return path


def let_owner_list(path, uid):
    """Let user ``uid`` (the job's owner) list and read the task folder ``path``
    ($SGE_JOB_SPOOL_DIR) as well as the folder's owner, every other user still only
    passing through: one POSIX ACL entry (user ``uid``: r-x). True when the folder
    is the user's or the entry was set; False where the file system has no ACLs."""
    if uid == os.geteuid():
        return True
    from gridtools.spool.files import grant
    return grant(path, uid, 5, others=1)       # (owner rwx, user uid r-x, group and others --x)


def _unlisted(fd):
    """Take back what ``let_owner_list`` gave on a folder open at ``fd``; True when it
    has DIR_MODE again."""
    try:
        os.removexattr(fd, "system.posix_acl_access")
    except OSError:
        pass
    try:
        os.fchmod(fd, DIR_MODE)
    except OSError:
        return False
    return os.fstat(fd).st_mode & 0o7777 == DIR_MODE


def remove(*job_ids):
    """Take jobs' directories out of the store (after they ended and left qstat -s z).

    Each directory is renamed into ``spool/trash`` at once; ``empty_trash``
    deletes the contents later, off the dispatcher's path. Returns the ids whose
    directories could not be moved (those gone already count as moved).
    """
    trash = cell.spool("trash")
    left = []
    try:
        if not os.path.isdir(trash):
            makedirs(trash, 0o700)
    except OSError:
        return list(job_ids)
    import time
    jobs, tag = jobs_dir() + "/", f".{os.getpid()}.{time.monotonic_ns()}"
    trash += "/"
    rename = os.rename
    for job_id in job_ids:
        name = str(job_id)
        try:
            rename(jobs + name, trash + name + tag)
        except FileNotFoundError:
            continue
        except OSError:
            left.append(job_id)
    return left


def empty_trash(most=None):
    """Delete what ``remove`` put aside (at most ``most`` folders), keeping emptied
    folders in ``fresh`` while it holds fewer than FRESH_MOST; returns True when some
    are left."""
    trash = cell.spool("trash")
    try:
        names = os.listdir(trash)
    except FileNotFoundError:
        return False
    if names:
        pool = _Recycler(cell.spool(FRESH))
        for name in names[:most]:
            pool.empty(trash, name)
    return most is not None and len(names) > most


class _Recycler:
    """Empties trashed folders, keeping the emptied folders in ``fresh`` (see the
    module's docstring) while there is room."""

    def __init__(self, fresh):
        self.fresh = fresh
        try:
            self.room = FRESH_MOST - len(os.listdir(fresh))
        except FileNotFoundError:
            try:
                makedirs(fresh, 0o700)
                self.room = FRESH_MOST
            except OSError:
                self.room = 0
        except OSError:
            self.room = 0
        import time
        self.me, self.serial = os.geteuid(), 0
        self.tag = f"{os.getpid()}.{time.monotonic_ns()}"     # (names never met before)

    def empty(self, parent, name):
        """Empty folder ``name`` of ``parent`` (a job's: its task folders are emptied the
        same way) and keep it, or remove it when it cannot be kept. Folders inside may be
        the job owner's (a checkpoint store), who may change them meanwhile: every step
        goes from an open folder to a name in it, and no link is ever followed."""
        try:
            parent_fd = os.open(parent, _FOLDER)
        except OSError:
            return
        try:
            self._empty_at(parent_fd, name, 0)
        finally:
            os.close(parent_fd)

    def _empty_at(self, parent_fd, name, depth):
        try:
            fd = os.open(name, _FOLDER, dir_fd=parent_fd)
        except FileNotFoundError:
            return
        except OSError:                 # (a link, a file, a folder that cannot be opened)
            _remove_at(parent_fd, name)
            return
        try:
            st = os.fstat(fd)
            keep = st.st_uid == self.me and (st.st_mode & 0o7777 == DIR_MODE or
                                             st.st_mode & 0o7777 == LISTED_MODE and _unlisted(fd))
            if st.st_uid != self.me and self.me == 0:
                _take_over(fd)          # (its owner can add nothing to it while it is emptied)
            with os.scandir(fd) as entries:
                inside = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
            for entry, is_dir in inside:
                if is_dir and depth < KEPT_DEPTH:
                    self._empty_at(fd, entry, depth + 1)
                else:
                    _remove_at(fd, entry)
            if keep:                    # (what could not be removed stays: then it is not kept)
                keep = not os.listdir(fd)
        except OSError:
            keep = False
        finally:
            os.close(fd)
        if keep and self.room > 0:
            self.serial += 1
            try:
                os.rename(name, f"{self.fresh}/{self.tag}.{self.serial}", src_dir_fd=parent_fd)
                self.room -= 1
                return
            except OSError:
                pass
        _remove_at(parent_fd, name)


def _take_over(fd):
    """Make the open folder ``fd`` (another user's) root's and private to it, so that a
    process of its owner's working in it can no longer add to it."""
    try:
        os.fchown(fd, 0, 0)
        os.fchmod(fd, 0o700)
    except OSError:
        pass


#: the depth of the folders the recycler may keep (a job's, its tasks', their parallel
#: tasks'); deeper ones are removed
KEPT_DEPTH = 2
#: how the recycler opens a folder: never through a link
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _remove_at(dir_fd, name):
    """``fstree.remove_at``, loaded only where the trash is emptied."""
    from gridtools import fstree
    fstree.remove_at(dir_fd, name)


class _FreshFolders:
    """The daemon's view of ``fresh``: names listed there not taken yet."""

    def __init__(self):
        self.names = []
        self.looked = None          # (the folder, when it was last found empty)

    def take(self, target):
        """Rename a kept folder to ``target``; False when there is none (or ``target``
        is not an empty folder or a free name)."""
        fresh = cell.spool(FRESH)
        if not self.names:
            import time
            now = time.monotonic()
            if self.looked is not None and self.looked[0] == fresh and now - self.looked[1] < FRESH_LOOK_EVERY:
                return False
            try:
                self.names = os.listdir(fresh)
            except OSError:
                self.names = []
            if not self.names:
                self.looked = (fresh, now)
                return False
            self.looked = None
        while self.names:
            name = self.names.pop()
            try:
                os.rename(f"{fresh}/{name}", target)
                return True
            except FileNotFoundError:
                if os.path.lexists(f"{fresh}/{name}"):
                    self.names.append(name)     # (it is the target's folder that is missing)
                    return False
                continue            # gone meanwhile (another cell root, a cleaner)
            except OSError:
                self.names.append(name)
                return False
        return False


_FRESH = _FreshFolders()


def take_fresh(target):
    """Make ``target`` (a new job or task folder) from a kept empty folder; False when
    none is kept (the caller creates it)."""
    return _FRESH.take(target)
