"""The job history file (``spool/history``) that condor_history reads.

When a task leaves the queue (it ended, or was removed) its final job ad is
appended: every job's, whichever dialect submitted it, in the long form,
followed by HTCondor's banner line::

    *** ProcId = 0 ClusterId = 23 Owner = "alice" CompletionDate = 1700000000

The ads of one pass are made and appended together before the pass writes
the jobs' states and publishes its status, as HTCondor's schedd appends a
job's ad to its history before the job leaves the queue: a client that no
longer finds a job in condor_q finds it in condor_history (the history follows
the queue; it is not the record of what ran, which is the accounting file),
and a daemon killed in between writes the ad again when it reaps the task
again after its restart (twice in the history, never lost). At most SLICE of
them are made in one pass: after a bulk removal the rest follow in the next
passes (shown gone from the queue a moment before they are in the history),
so that requests are not kept waiting behind thousands of ads. Those still to
be made are named in ``spool/history.pending`` (a line ``<job id> <task>``
each), written before the pass writes the jobs' states and removed once none
is left; their jobs are not purged until their ads are written. A daemon
started after a crash notes again the tasks the file names and those the
journal's replay removed again (``daemon.journal``), leaving out the ones
whose ads the history file holds already (by their banners): after a bulk
removal a crash loses none of the ads and writes none twice.

A task that ran names the slot its last run left (``LastRemoteHost``, as
HTCondor's schedd sets it; a job that held no slot of its own: the queue
instance it ran in). The file is readable by everyone (as HTCondor's is),
and holds what every user may see of a job: its private attributes
(``jobads.PRIVATE_ATTRS``: command path, arguments, files; not the
``Environment``, kept nowhere) are appended instead, with the job's
ClusterId, ProcId and GlobalJobId, to ``history.private/<uid>``, readable by
the job's owner only, which condor_history joins to the job's ad for its
owner and root. When an append would take the file past condor_config's
MAX_HISTORY_LOG bytes (20 MB by default) it is first rotated as
HTCondor's schedd rotates its history (``spool.rotation``): renamed to
``history.<time>`` (``history.20261201T101010``, local time) and a new one begun;
the newest MAX_HISTORY_ROTATIONS rotated files are kept (2 by default, at least 1).
With ROTATE_HISTORY_DAILY (ROTATE_HISTORY_MONTHLY) it is also rotated before an
append on a later day (month) than it was last written, in local time.
ENABLE_HISTORY_ROTATION = false lets the history grow without end. A knob that
cannot be read leaves its default, noted in the daemon's messages. (Each owner's
private file rotates by the same knobs, by its own size.)

Every run of a job (an execution attempt: its task started and its run ended,
whatever ended it: an exit, an eviction, a hold, a removal, a failure to start)
also leaves an ad in the job epoch history (``spool/epoch_history``, HTCondor's
JOB_EPOCH_HISTORY, which it writes by default), which ``condor_history -epochs``
reads: the job's ad as the run saw it (JobStatus, RemoteHost, JobCurrentStartDate,
NumShadowStarts and NumJobStarts of that run), its RunInstanceID (0 for the first
run: JobRunCount less one), its exit
(ExitCode, or ExitBySignal and ExitSignal) when the job exited, the usage and
RemoteWallClockTime of the runs up to its end, EpochAdType "EPOCH" and
EpochWriteDate, followed by HTCondor's epoch banner::

    *** EPOCH ClusterId=23 ProcId=0 RunInstanceId=0 Owner="alice" CurrentTime=1700000000

The epoch ads are made when the runs end; every one noted in a pass is appended
at its end, before the pass writes the tasks' states (none waits for a later
pass, where a crash could lose it). Its private attributes go to
``epoch_history.private/<uid>`` as the history's do; it is rotated by
MAX_EPOCH_HISTORY_LOG and MAX_EPOCH_HISTORY_ROTATIONS (the same defaults), whatever ENABLE_HISTORY_ROTATION says, as HTCondor's is.
"""

import os
import time

from gridtools import ads, cell, jobads
from gridtools.errors import ConfigError, SpoolError
from gridtools.spool import files, rotation

#: bytes an append may not take the history file past (MAX_HISTORY_LOG's default)
MAX_HISTORY = 20 * 1024 * 1024
#: rotated history files kept (MAX_HISTORY_ROTATIONS's default)
MAX_HISTORY_ROTATIONS = 2
#: the same of the epoch history (MAX_EPOCH_HISTORY_LOG's default)
MAX_EPOCH_HISTORY = 20 * 1024 * 1024
#: rotated epoch history files kept (MAX_EPOCH_HISTORY_ROTATIONS's default)
MAX_EPOCH_HISTORY_ROTATIONS = 2
#: attributes not written to the history at all (private to the job's owner)
PRIVATE = ("Environment", "Env")
#: what a private record names its job by
_KEYS = ("ClusterId", "ProcId", "GlobalJobId")
#: most ads one pass makes and appends
SLICE = 500


def path():
    return cell.spool("history")


def epoch_path():
    return cell.spool("epoch_history")


def epoch_private_dir():
    return cell.spool("epoch_history.private")


def _usage(ad, task):
    usage = (task.usage if task is not None else None) or {}
    user, system = float(usage.get("ru_utime", 0.0)), float(usage.get("ru_stime", 0.0))
    ad["RemoteUserCpu"] = ad["CumulativeRemoteUserCpu"] = user
    ad["RemoteSysCpu"] = ad["CumulativeRemoteSysCpu"] = system
    ran = task.end_time - task.start_time if task is not None and task.start_time and task.end_time else None
    jobads.run_usage(ad, usage, ran)


def final_ad(job, number):
    """The ad a task leaves the queue with."""
    task = job.tasks.get(number)
    ad = ads.job_ad(job.spec, task, number, job.hold, job.deleted, job.condor)
    for name in PRIVATE:
        if name in ad:
            del ad[name]
    _usage(ad, task)
    if "LastRemoteHost" not in ad and task is not None and task.host and task.start_time:
        ad["LastRemoteHost"] = f"{task.queue}@{task.host}"      # (a job that held no slot)
    completed = ad.eval("JobStatus") == jobads.JobStatus.COMPLETED
    if "CompletionDate" not in ad:          # (set only as a proc completes: 0 for one removed)
        ad["CompletionDate"] = int(task.end_time) if completed and task is not None and task.end_time else 0
    if task is None and job.deleted_at and not completed:
        ad["EnteredCurrentStatus"] = int(job.deleted_at)     # (removed before it had a record)
    return ad


def banner(ad):
    owner = ad.eval("Owner")
    return (f"*** ProcId = {ad.eval('ProcId')} ClusterId = {ad.eval('ClusterId')} "
            f"Owner = \"{owner if isinstance(owner, str) else ''}\" "
            f"CompletionDate = {ad.eval('CompletionDate')}\n")


def record(state, job, number):
    """Note that task ``number`` left the queue; its final ad is made and appended by
    ``write`` at the end of the pass, before the status shows the change."""
    state.history.append((job, number))


def write(state, most=None):
    """Append the final ads of the tasks noted (the first ``most`` of them), in one write,
    and the epoch ads of all the runs that ended (made already); True when there were
    any. The tasks left for later passes are written down (``history.pending``)."""
    wrote = bool(state.epochs or state.history)
    if state.epochs:
        noted, state.epochs = state.epochs, []
        append(state, [ad for ad, _spec in noted], [spec for _ad, spec in noted], epochs=True)
    if state.history:
        noted, state.history = _take(state.history, most)
        append(state, [final_ad(job, number) for job, number in noted], [job.spec for job, _n in noted])
        for job, number in noted:
            _forget_slot(job, number)
    if state.history or state.history_kept:
        _keep_pending(state)
    return wrote


def pending_path():
    return cell.spool("history.pending")


def _keep_pending(state):
    """Name the tasks whose ads are still to be appended in ``history.pending`` (the
    file goes once none is left)."""
    try:
        if state.history:
            files.atomic_write(pending_path(), "".join(f"{job.id} {number}\n" for job, number in state.history),
                               mode=0o600)
            state.history_kept = True
            return
        os.unlink(pending_path())
    except FileNotFoundError:
        pass
    except (OSError, SpoolError) as exc:
        state.log(f"E|cannot write {pending_path()}: {exc}")
        return
    state.history_kept = False


def pending_jobs(state):
    """Ids of the jobs some of whose tasks' ads the pass about to end leaves to later
    passes (past the SLICE it appends): not to be purged before they are appended."""
    return {job.id for job, _number in state.history[SLICE:]}


def recover(state):
    """Daemon start, after the journal's replay: note again the tasks ``history.pending``
    names whose jobs the spool holds, then leave out of every task noted (the replay's
    too) those whose ads the history file holds already."""
    try:
        with open(pending_path(), "rb") as fh:
            text = fh.read().decode("ascii", "replace")
        state.history_kept = True
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        state.log(f"E|cannot read {pending_path()}: {exc}")
        text = ""
    noted = {(job.id, number) for job, number in state.history}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) != 2 or not all(f.isdigit() for f in fields):
            continue
        key = (int(fields[0]), int(fields[1]))
        job = state.jobs.get(key[0])
        if job is not None and key not in noted:
            state.history.append((job, key[1]))
            noted.add(key)
    if not state.history:
        return
    written = _written(path())
    state.history = [(job, number) for job, number in state.history if (job.id, number - 1) not in written]
    state.log(f"I|job history: {len(state.history)} ads still to write")


def _written(target):
    """(ClusterId, ProcId) of the ads the history file ``target`` holds, by their banners."""
    found = set()
    try:
        with open(target, "rb") as fh:
            for line in fh:
                if line.startswith(b"*** ProcId = "):
                    fields = line.split()
                    if len(fields) > 6 and fields[3].isdigit() and fields[6].isdigit():
                        found.add((int(fields[6]), int(fields[3])))
    except OSError:
        pass
    return found


def _take(pending, most):
    """(the first ``most`` of ``pending``, the rest); all of them when ``most`` is None."""
    noted = pending[:most]
    return noted, pending[len(noted):]


def _forget_slot(job, number):
    """A task whose final ad is written keeps no note of its last slot (the note of a
    finished task kept in the queue stays: its ad shows it)."""
    tasks = job.condor.get("tasks") if job.condor else None
    mine = tasks.get(str(number)) if tasks else None
    if mine and mine.pop("last", None) is not None and not mine:
        del tasks[str(number)]


def private_dir():
    return cell.spool("history.private")


def _split(ad, spec, private, mark=banner):
    """Move the private attributes of ``ad`` to the text of its owner's record in
    ``private`` (uid -> (gid, [texts]))."""
    from gridtools.classad import ClassAd
    from gridtools.jobads import PRIVATE_ATTRS
    mine = [(name, ad.lookup(name)) for name in PRIVATE_ATTRS if name in ad]
    for name, _expr in mine:
        del ad[name]
    if not mine or spec.get("uid") is None:
        return
    record = ClassAd([(name, ad.lookup(name)) for name in _KEYS if name in ad] + mine)
    entry = private.setdefault(int(spec["uid"]), (int(spec.get("gid") or 0), []))
    entry[1].append(f"{record}{mark(ad)}")


def limits(state):
    """How the two files rotate, from condor_config as it was last read:
    {False: the history's, True: the epoch history's}, each (bytes an append may not
    take the file past, or None when it is never rotated; rotated files kept; whether
    it is rotated when the day, and the month, changed since it was last written). A
    knob that cannot be read is noted in the daemon's messages (once for each reading
    of the configuration) and its default stands."""
    keeper = getattr(state, "condor", None)
    conf = keeper.conf if keeper is not None else None
    if conf is None or conf.main is None:
        return DEFAULT_LIMITS
    return conf.derived("history_limits", lambda: _limits(conf.main, state.log))


#: the limits when no configuration is read: HTCondor's defaults
DEFAULT_LIMITS = {False: (MAX_HISTORY, MAX_HISTORY_ROTATIONS, False, False),
                  True: (MAX_EPOCH_HISTORY, MAX_EPOCH_HISTORY_ROTATIONS, False, False)}
#: the knobs of each file: its size past which it is rotated, the rotated files kept
KNOBS = {False: ("MAX_HISTORY_LOG", "MAX_HISTORY_ROTATIONS"),
         True: ("MAX_EPOCH_HISTORY_LOG", "MAX_EPOCH_HISTORY_ROTATIONS")}


def _limits(config, log):
    from gridtools.formats.condor_config import boolean, integer

    def knob(read, name, default, *more):
        try:
            return read(config, name, default, *more)
        except ConfigError as exc:
            log(f"E|{exc} The default, {default}, is used.")
            return default
    found = {epochs: (knob(integer, size, DEFAULT_LIMITS[epochs][0]), knob(integer, kept, DEFAULT_LIMITS[epochs][1], 1),
                      False, False) for epochs, (size, kept) in KNOBS.items()}
    if not knob(boolean, "ENABLE_HISTORY_ROTATION", True):
        found[False] = (None,) + found[False][1:]      # (the epoch history rotates all the same)
    else:
        found[False] = found[False][:2] + (knob(boolean, "ROTATE_HISTORY_DAILY", False),
                                           knob(boolean, "ROTATE_HISTORY_MONTHLY", False))
    return found


def _append(target, text, limit, mode=0o644, owner=None):
    """Append ``text`` to the file ``target``, rotated first (as HTCondor's
    MaybeRotateHistory does) when it exists, even empty, and the text would take it
    past ``limit``'s size (``limits``), or it was last written on an earlier day
    (month) when the limit rotates it daily (monthly), in local time."""
    data = text.encode("utf-8", "backslashreplace")
    most, keep, daily, monthly = limit
    try:
        st = os.stat(target) if most is not None else None
    except FileNotFoundError:
        st = None
    if st is not None:
        due = st.st_size + len(data) > most
        if (daily or monthly) and not due:
            was, today = time.localtime(st.st_mtime), time.localtime()
            due = today.tm_year > was.tm_year or (daily and today.tm_yday > was.tm_yday) or \
                (monthly and today.tm_mon > was.tm_mon)
        if due:
            rotation.rotate(target, keep)
    files.append_text(target, data, mode=mode, owner=owner)


def _keep_writable(path):
    """Make the private history file of the daemon's own user writable to it again, when an
    older daemon made it read-only."""
    try:
        if not os.stat(path, follow_symlinks=False).st_mode & 0o200:
            os.chmod(path, 0o600)
    except FileNotFoundError:
        pass


def _private_mode(uid):
    """The mode of a user's private history file: read-only to its owner, who may not
    write the record of a job (the daemon, root, writes it anyway); a daemon that runs as
    that very user (a personal cell) keeps it writable to itself."""
    return 0o600 if uid == os.geteuid() else 0o400


def append(state, final_ads, specs=None, epochs=False):
    if not final_ads:
        return
    private = {}
    mark = epoch_banner if epochs else banner
    for ad, spec in zip(final_ads, specs or ()):
        _split(ad, spec, private, mark)
    text = "".join(f"{ad}{mark(ad)}" for ad in final_ads)
    folder = epoch_private_dir() if epochs else private_dir()
    what = "job epoch history" if epochs else "job history"
    limit = limits(state)[epochs]
    try:
        _append(epoch_path() if epochs else path(), text, limit)
        if private:
            files.makedirs(folder, 0o711)
        for uid, (gid, texts) in private.items():
            target = os.path.join(folder, str(uid))
            if uid == os.geteuid():
                _keep_writable(target)
            _append(target, "".join(texts), limit, mode=_private_mode(uid), owner=(uid, gid))
    except OSError as exc:
        state.log(f"E|cannot append to the {what}: {exc.strerror}")
    except SpoolError as exc:
        state.log(f"E|cannot append to the {what}: {exc}")


# ---------------------------------------------------------------- job epochs

def run_ended(state, job, task, result, now):
    """Note the epoch ad of the run of ``task`` that ended with ``result``, made from
    the job's ad as the run left it (before its end is applied); ``write`` appends
    it at the end of the pass."""
    if task is None or not task.start_time or result.get("never_started"):
        return
    number = task.number
    ad = ads.job_ad(job.spec, task, number, job.hold, job.deleted, job.condor)
    for name in PRIVATE:
        if name in ad:
            del ad[name]
    end = result.get("end_time")
    end = float(end) if isinstance(end, (int, float)) and end > 0 else float(now)
    wall = ad.eval("RemoteWallClockTime")
    ad["RemoteWallClockTime"] = (float(wall) if type(wall) in (int, float) else 0.0) + \
        max(0.0, end - float(task.start_time))
    usage = result.get("usage") or {}
    ad["RemoteUserCpu"] = float(usage.get("ru_utime", 0.0))
    ad["RemoteSysCpu"] = float(usage.get("ru_stime", 0.0))
    jobads.run_usage(ad, usage, end - float(task.start_time))
    exited = not (result.get("requeue") or result.get("error_state") or result.get("deleted")
                  or task.deleting) and result.get("exit_status") is not None
    if exited:
        signal = int(result.get("signal") or 0)
        status = int(result.get("exit_status") or 0)
        ad["ExitBySignal"] = bool(signal)
        if signal:
            ad["ExitSignal"] = signal
        else:
            ad["ExitCode"] = status
    starts = ad.eval("JobRunCount")         # (the runs begun: NumShadowStarts but in the scheduler universe)
    ad["RunInstanceID"] = max(0, starts - 1) if type(starts) is int else int(task.restarted)
    ad["EpochAdType"] = "EPOCH"
    ad["EpochWriteDate"] = int(now)
    state.epochs.append((ad, job.spec))


def epoch_banner(ad):
    owner = ad.eval("Owner")
    return (f"*** EPOCH ClusterId={ad.eval('ClusterId')} ProcId={ad.eval('ProcId')} "
            f"RunInstanceId={ad.eval('RunInstanceID')} Owner=\"{owner if isinstance(owner, str) else '?'}\" "
            f"CurrentTime={ad.eval('EpochWriteDate')}\n")
