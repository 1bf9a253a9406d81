"""Job ads rebuilt from a job event log: what ``condor_q -userlog`` and
``condor_history -userlog`` show instead of the queue or the history file.

As HTCondor's tools rebuild them, one ad per job the log saw submitted
(events of a job whose submit event the log lacks are passed over), in job
id order, whatever became of the job: the submit event (000) makes an idle
job with the attributes every job ad has (``ClusterId``, ``ProcId``,
``QDate``, ``EnteredCurrentStatus``, ``GlobalJobId``, ``SubmitHost``,
``UserLog``; the caller as ``Owner``, ``Cmd`` ``"???"``: the log does not say
them; zero usage and counts), and each later event changes it: execute (001)
running on ``RemoteHost`` (the execute host), evicted (004) or a shadow exception (007) idle
again, terminated (005) completed with ``ExitCode`` (or ``ExitSignal``),
``CompletionDate`` and the run's usage, aborted (009) removed with
``RemoveReason``, held (012) with ``HoldReason`` and its codes, released (013)
idle, suspended and unsuspended (010, 011), image size (006), and the
attributes a job ad information event (028) carries. Every change of
``JobStatus`` keeps the one before as ``LastJobStatus`` and stamps
``EnteredCurrentStatus``.

The file is read with the caller's own rights; a log that cannot be read
from some event on yields the jobs of the events before it.
"""

import time

from gridtools.classad import ClassAd

IDLE, RUNNING, REMOVED, COMPLETED, HELD, SUSPENDED = 1, 2, 3, 4, 5, 7

#: what a job ad information event holds that is the event's, not the job's
_EVENT_ATTRS = ("MyType", "Cluster", "Proc", "Subproc", "EventTypeNumber", "EventTime",
                "TriggerEventTypeNumber", "TriggerEventTypeName")


def read(path, owner, now=None):
    """The ads of the jobs of the log at ``path`` (OSError when it cannot be opened)."""
    from gridtools.formats.condor.userlog import parse_events
    with open(path, encoding="utf-8", errors="replace") as fh:
        text = fh.read()
    return job_ads(parse_events(text, strict=False), path, owner, time.time() if now is None else now)


def job_ads(events, path, owner, now):
    """The job ads the events make, by job id."""
    jobs, last = {}, {}
    for event in events:
        key = (event.cluster, event.proc, event.subproc)
        kind = int(event.type)
        when = int(event.timestamp)
        if kind == 0:
            jobs[key] = _submitted(event, path, owner, when, int(now))
        elif key in jobs:
            change = _CHANGES.get(kind)
            if change is not None:
                change(jobs[key], event.info, when, last.get(key))
        else:
            continue
        last[key] = event
    return [ClassAd(sorted(jobs[key].items(), key=lambda item: item[0].lower())) for key in sorted(jobs)]


def _submitted(event, path, owner, when, now):
    return {"MyType": "Job", "TargetType": "Machine", "ClusterId": event.cluster, "ProcId": event.proc,
            "UserLog": path, "QDate": when, "EnteredCurrentStatus": when,
            "GlobalJobId": f"localhost#{event.cluster}.{event.proc}#{when}", "ServerTime": now,
            "SubmitHost": event.info.get("SubmitHost") or "", "JobStatus": IDLE, "LastJobStatus": 0,
            "Owner": owner, "JobPrio": 0, "ImageSize": 0, "Cmd": "???", "LastSuspensionTime": 0,
            "CompletionDate": 0, "NumJobStarts": 0, "TotalSuspensions": 0, "NumSystemHolds": 0,
            "LocalUserCpu": 0.0, "RemoteUserCpu": 0.0, "LocalSysCpu": 0.0, "RemoteSysCpu": 0.0,
            "RemoteWallClockTime": 0.0}


def _status(ad, status, when):
    ad["LastJobStatus"] = ad.get("JobStatus", 0)
    ad["JobStatus"] = status
    ad["EnteredCurrentStatus"] = when


def _executed(ad, info, when, _last):
    _status(ad, RUNNING, when)
    ad["JobCurrentStartDate"] = when
    ad["NumJobStarts"] = ad.get("NumJobStarts", 0) + 1
    # the execute host (a sinful string): the best the log says of where it runs,
    # RemoteHost as well (the event's SlotName is not taken)
    host = info.get("ExecuteHost") or ""
    ad["StartdIpAddr"] = ad["RemoteHost"] = host


def _terminated(ad, info, when, _last):
    _status(ad, COMPLETED, when)
    if "RemoteHost" in ad:
        ad["LastRemoteHost"] = ad.pop("RemoteHost")
    ad["CompletionDate"] = when
    if info.get("TerminatedNormally", True):
        ad["ExitBySignal"], ad["ExitCode"] = False, int(info.get("ReturnValue", 0))
    else:
        ad["ExitBySignal"], ad["ExitSignal"] = True, int(info.get("TerminatedBySignal", 0))
    ad["LastLocalUserCpu"] = ad["LastLocalSysCpu"] = 0.0
    ad["LastRemoteUserCpu"] = float(info.get("RunRemoteUserCpu") or 0)
    ad["LastRemoteSysCpu"] = float(info.get("RunRemoteSysCpu") or 0)
    if "JobCurrentStartDate" in ad:
        ad["LastRemoteWallClockTime"] = float(when - ad["JobCurrentStartDate"])
        ad["RemoteWallClockTime"] = ad.get("RemoteWallClockTime", 0.0) + ad["LastRemoteWallClockTime"]
    ad["LocalUserCpu"] = ad["LocalSysCpu"] = 0.0
    ad["RemoteUserCpu"] = float(info.get("TotalRemoteUserCpu") or 0)
    ad["RemoteSysCpu"] = float(info.get("TotalRemoteSysCpu") or 0)


def _suspended(ad, _info, when, _last):
    _status(ad, SUSPENDED, when)
    ad["LastSuspensionTime"] = when
    ad["TotalSuspensions"] = ad.get("TotalSuspensions", 0) + 1


def _unsuspended(ad, _info, when, _last):
    _status(ad, RUNNING, when)


def _evicted(ad, info, when, _last):
    _status(ad, IDLE, when)
    ad["LastVacateTime"] = when
    if info.get("Reason"):
        ad["LastVacateReason"] = info["Reason"]


def _shadow_exception(ad, info, when, _last):
    ran = ad.get("JobStatus") == RUNNING
    _status(ad, IDLE, when)
    if ran:
        ad["LastVacateTime"] = when
    lines = [line.strip() for line in (info.get("Text") or "").splitlines()[1:] if line.strip()]
    ad["LastVacateReason"] = lines[0] if lines else ""


def _held(ad, info, when, _last):
    before = ad.get("JobStatus", IDLE)
    _status(ad, HELD, when)
    reason = info.get("HoldReason")
    if before != IDLE:
        ad["LastVacateTime"] = when
        if reason is not None:
            ad["LastVacateReason"] = reason
    if reason is not None:
        ad["HoldReason"] = reason
    code = int(info.get("HoldReasonCode", 0))
    ad["HoldReasonCode"], ad["HoldReasonSubCode"] = code, int(info.get("HoldReasonSubCode", 0))
    if code != 1:
        ad["NumSystemHolds"] = ad.get("NumSystemHolds", 0) + 1


def _released(ad, info, when, _last):
    _status(ad, IDLE, when)
    if info.get("Reason"):
        ad["ReleaseReason"] = info["Reason"]


def _aborted(ad, info, when, _last):
    _status(ad, REMOVED, when)
    if info.get("Reason"):
        ad["RemoveReason"] = info["Reason"]


def _image_size(ad, info, _when, _last):
    ad["ImageSize"] = int(info.get("Size", 0))
    ad["ResidentSetSize"] = int(info.get("ResidentSetSize", 0))
    ad["ProportionalSetSize"] = int(info.get("ProportionalSetSize", 0))


def _job_ad_information(ad, info, _when, last):
    """The job's attributes the event carries: not those of the event it follows, nor
    its own."""
    theirs = {name.lower() for name in (last.info if last is not None else ())}
    theirs.update(name.lower() for name in _EVENT_ATTRS)
    for name, value in info.items():
        if name.lower() not in theirs and isinstance(value, (bool, int, float, str)):
            for known in [k for k in ad if k.lower() == name.lower()]:     # (names know no case)
                del ad[known]
            ad[name] = value


#: event number -> how it changes the job's ad (the executable error (002) is always
#: followed by an abort, and the node, DAG and generic events say nothing of the job)
_CHANGES = {1: _executed, 4: _evicted, 5: _terminated, 6: _image_size, 7: _shadow_exception,
            9: _aborted, 10: _suspended, 11: _unsuspended, 12: _held, 13: _released,
            28: _job_ad_information}
