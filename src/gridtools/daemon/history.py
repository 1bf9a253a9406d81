"""The job history file (``spool/history``) that condor_history reads.

When a task leaves the queue (it ended, or was removed) its final job ad is
appended: every job's, whichever dialect submitted it, in the long form,
followed by HTCondor's banner line::

    *** ProcId = 0 ClusterId = 23 Owner = "alice" CompletionDate = 1700000000

The ads of one pass are made and appended together once the pass has
published its status (the history follows the queue; it is not the record
of what ran, which is the accounting file), at most SLICE of them per pass:
after a bulk removal the rest follow in the next passes, so that requests
are not kept waiting behind thousands of ads.

A task that ran names the slot its last run left (``LastRemoteHost``, as
HTCondor's schedd sets it; a job that held no slot of its own: the queue
instance it ran in). The file is readable by everyone (as HTCondor's is),
and holds what every user may see of a job: its private attributes
(``jobads.PRIVATE_ATTRS``: command path, arguments, files; not the
``Environment``, kept nowhere) are appended instead, with the job's
ClusterId, ProcId and GlobalJobId, to ``history.private/<uid>``, readable by
the job's owner only, which condor_history joins to the job's ad for its
owner and root. When a file passes MAX_HISTORY bytes it is renamed to
``.old`` (the one rotation kept) and a new one begun.
"""

import os

from gridtools import ads, cell
from gridtools.errors import SpoolError
from gridtools.spool import files

#: bytes after which the history file is rotated (HTCondor's MAX_HISTORY_LOG)
MAX_HISTORY = 20 * 1024 * 1024
#: attributes not written to the history at all (private to the job's owner)
PRIVATE = ("Environment", "Env")
#: what a private record names its job by
_KEYS = ("ClusterId", "ProcId", "GlobalJobId")
#: most ads one pass makes and appends
SLICE = 500


def path():
    return cell.spool("history")


def _usage(ad, task):
    usage = (task.usage if task is not None else None) or {}
    user, system = float(usage.get("ru_utime", 0.0)), float(usage.get("ru_stime", 0.0))
    ad["RemoteUserCpu"] = ad["CumulativeRemoteUserCpu"] = user
    ad["RemoteSysCpu"] = ad["CumulativeRemoteSysCpu"] = system
    if usage.get("maxvmem"):
        ad["ImageSize"] = int(usage["maxvmem"]) // 1024
        ad["MemoryUsage"] = -(-int(usage["maxvmem"]) // (1024 * 1024))


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
    if "CompletionDate" not in ad:
        ad["CompletionDate"] = int(task.end_time) if task is not None and task.end_time else \
            int(job.deleted_at or 0)
    return ad


def banner(ad):
    owner = ad.eval("Owner")
    return (f"*** ProcId = {ad.eval('ProcId')} ClusterId = {ad.eval('ClusterId')} "
            f"Owner = \"{owner if isinstance(owner, str) else ''}\" "
            f"CompletionDate = {ad.eval('CompletionDate')}\n")


def record(state, job, number):
    """Note that task ``number`` left the queue; its final ad is made and appended by
    ``write`` at the end of the pass, after the status shows the change."""
    state.history.append((job, number))


def write(state, most=None):
    """Append the final ads of the tasks noted (the first ``most`` of them), in one write."""
    if state.history:
        noted, state.history = state.history[:most], state.history[len(state.history[:most]):]
        append(state, [final_ad(job, number) for job, number in noted], [job.spec for job, _n in noted])
        for job, number in noted:
            _forget_slot(job, number)


def _forget_slot(job, number):
    """A task whose final ad is written keeps no note of its last slot (the note of a
    finished task kept in the queue stays: its ad shows it)."""
    tasks = job.condor.get("tasks") if job.condor else None
    mine = tasks.get(str(number)) if tasks else None
    if mine and mine.pop("last", None) is not None and not mine:
        del tasks[str(number)]


def private_dir():
    return cell.spool("history.private")


def _split(ad, spec, private):
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
    entry[1].append(f"{record}{banner(ad)}")


def _append(target, text, mode=0o644, owner=None):
    if os.path.exists(target) and os.path.getsize(target) > MAX_HISTORY:
        os.replace(target, target + ".old")
    files.append_text(target, text.encode("utf-8", "backslashreplace"), mode=mode, owner=owner)


def append(state, final_ads, specs=None):
    if not final_ads:
        return
    private = {}
    for ad, spec in zip(final_ads, specs or ()):
        _split(ad, spec, private)
    text = "".join(f"{ad}{banner(ad)}" for ad in final_ads)
    try:
        _append(path(), text)
        if private:
            files.makedirs(private_dir(), 0o711)
        for uid, (gid, texts) in private.items():
            _append(os.path.join(private_dir(), str(uid)), "".join(texts), mode=0o400, owner=(uid, gid))
    except OSError as exc:
        state.log(f"E|cannot append to the job history: {exc.strerror}")
    except SpoolError as exc:
        state.log(f"E|cannot append to the job history: {exc}")
