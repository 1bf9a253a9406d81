"""The job description the spool keeps for a cluster of HTCondor job ads.

``spec_from_ads(ads)`` turns the ads of one cluster (``SubmitDescription.
job_ads``) into the fields of a gridtools job description
(gridtools_spool(5)): proc N of the cluster is task N+1 of the job, the
command runs without a shell (``Cmd`` with ``Arguments``/``Args``), in
``Iwd``, with ``Out``/``Err``/``In`` made absolute against it and the
``Environment`` as the job's own variables; the ads travel as
``condor_ad`` (one long-form text per proc), which ``ads.job_ad`` lays the
job's state over. Scheduler and local universe jobs run without a slot
(``universe``). Identity fields (owner, uid, ids, times) are the
submitter's to add.

The arguments and streams of every proc must be the same (Grid Engine
names one command line and one set of paths per job); a cluster whose procs
differ there is refused.
"""

import os
import posixpath
import re

from gridtools.errors import InputError
from gridtools.formats.condor import argsenv

#: JobUniverse numbers -> the universe a job description names (only those that run slot-less)
SLOTLESS = {7: "scheduler", 12: "local"}
_NAME_BAD = re.compile(r"[/:@\\*?\x00-\x1f\x7f]")


def _absolute(iwd, path):
    if not path:
        return None
    return path if path.startswith("/") else posixpath.normpath(posixpath.join(iwd, path))


def _text(ad, attr, default=""):
    value = ad.eval(attr)
    return value if isinstance(value, str) else default


def arguments(ad):
    """The argument list of a job ad (V2 ``Arguments`` or V1 ``Args``)."""
    if ad.lookup("Arguments") is not None:
        text = _text(ad, "Arguments")
        return argsenv.split_v2_args(text) if text else []
    text = _text(ad, "Args")
    return argsenv.split_old_args(text) if text else []


def environment(ad):
    text = _text(ad, "Environment")
    return argsenv.parse_environment_v2(text) if text else {}


def _streams(ad, iwd):
    found = {}
    for attr, key in (("Out", "stdout"), ("Err", "stderr"), ("In", "stdin")):
        path = _absolute(iwd, _text(ad, attr, "/dev/null"))
        found[key] = [[None, path or "/dev/null"]]
    return found


def job_name(ad):
    """A job name Grid Engine accepts: the batch name, else the command's base name."""
    name = _text(ad, "JobBatchName") or os.path.basename(_text(ad, "Cmd")) or "condor_job"
    return _NAME_BAD.sub("_", name)[:512]


def spec_from_ads(ads):
    """The job description fields of one cluster's ads (see the module docstring)."""
    if not ads:
        raise InputError("ERROR: no jobs to submit")
    first = ads[0]
    clusters = {ad.eval("ClusterId") for ad in ads}
    if len(clusters) > 1:
        raise InputError("ERROR: the jobs of one submission must form one cluster (one executable)")
    iwd = _text(first, "Iwd", "/")
    streams = _streams(first, iwd)
    for ad in ads[1:]:
        if _streams(ad, _text(ad, "Iwd", "/")) != streams or arguments(ad) != arguments(first):
            raise InputError("ERROR: every job of a cluster must use the same arguments and the same "
                             "input, output and error files")
    spec = {"name": job_name(first), "binary": True, "shell_wrap": False,
            "command": _absolute(iwd, _text(first, "Cmd")), "args": arguments(first), "cwd": iwd,
            "join": False, "env": environment(first), "priority": 0,
            "condor_ad": [str(ad) for ad in ads] if len(ads) > 1 else str(first)}
    spec.update(streams)
    if len(ads) > 1:
        spec["tasks"] = [1, len(ads), 1]
    universe = SLOTLESS.get(first.eval("JobUniverse"))
    if universe:
        spec["universe"] = universe
    if first.eval("JobStatus") == 5:
        spec["user_hold"] = True
    return spec
