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
                  nothing) and, when the task ended, ``result.yaml``

Only the daemon creates, changes and removes job directories; the shepherd
of a task writes inside its own ``tasks/<n>/`` folder only. The folders are
mode 0711 and owned by the daemon's user: others may pass through to what
is theirs (their script, their task's PE host file) but list nothing.
"""

import os

from gridtools import cell
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
WITHDRAWN_PREFIX = "withdrawn."
#: width of the shepherd's record at the start of its lock file (rewritten in place)
LOCK_RECORD = 80
RESERVE_SIZE = 16384        # bytes set aside for a task's result while it runs
#: mode of the job and task folders: passable, not listable, by others
DIR_MODE = 0o711
#: new job descriptions up to this many are flushed to disk one by one, more at once
SYNC_ONE_BY_ONE = 2


def jobs_dir():
    return cell.spool("jobs")


def job_dir(job_id):
    return cell.spool("jobs", str(job_id))


def task_dir(job_id, number):
    return cell.spool("jobs", str(job_id), str(number))


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
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
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
    atomic_write(os.path.join(folder, RESULT_FILE), data)
    if on_visible is not None:
        on_visible()


def withdrawn_name(token):
    """The name of the file in a task folder that says launch ``token`` was taken back."""
    return WITHDRAWN_PREFIX + token


def make_task_dir(job_id, number):
    """Create a task's folder; a folder left by an earlier run is emptied of its results."""
    path = task_dir(job_id, number)
    try:
        os.mkdir(path, DIR_MODE)
    except FileExistsError:
        for name in (RESULT_FILE, SHEPHERD_LOCK, "job_pid", "trace", RESERVE_FILE, LAUNCH_FILE,
                     OBITUARY_FILE):
            try:
                os.unlink(os.path.join(path, name))
            except FileNotFoundError:
                pass
    return path


def remove_task_dir(job_id, number):
    import shutil
    shutil.rmtree(task_dir(job_id, number), ignore_errors=True)


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
    """Delete what ``remove`` put aside (at most ``most`` folders); returns True when
    some are left."""
    import shutil
    trash = cell.spool("trash")
    try:
        names = os.listdir(trash)
    except FileNotFoundError:
        return False
    import shutil
    for name in names[:most]:
        shutil.rmtree(os.path.join(trash, name), ignore_errors=True)
    return most is not None and len(names) > most
