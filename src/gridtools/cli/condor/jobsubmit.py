"""Submitting a submit description to the cell: the path condor_submit_dag and the
DAG runner take (``formats.condor.submit`` -> job ads -> ``formats.condor.jobspec``
-> a submit request).

``submit_text(text, cwd, ...)`` parses the description, claims a job id
(the cluster), makes the job ads with the submitter's identity, checks the
job description as the daemon will (``formats.jobcheck``) and sends it
marked as an HTCondor command's request (the WRITE security level applies);
it waits for the daemon's answer and returns ``Submitted(cluster, procs,
ads)``. Nothing is queued when any step fails.
"""

import os
import pwd
import time
from dataclasses import dataclass

from gridtools import cell
from gridtools.errors import GridError, InputError

#: seconds to wait for the daemon to take a submission in
SUBMIT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Submitted:
    cluster: int
    procs: int
    ads: tuple


def identity(cwd):
    """The submitter's fields of a job description."""
    uid = os.getuid()
    try:
        entry = pwd.getpwuid(uid)
        owner, home, shell = entry.pw_name, entry.pw_dir, entry.pw_shell
    except KeyError:
        owner, home, shell = str(uid), os.path.expanduser("~"), "/bin/sh"
    env, host = os.environ, cell.hostname()
    sge_o = {"HOME": env.get("HOME", home), "LOGNAME": env.get("LOGNAME", owner), "PATH": env.get("PATH", ""),
             "SHELL": env.get("SHELL", shell), "WORKDIR": cwd, "HOST": host,
             "MAIL": env.get("MAIL", f"/var/mail/{owner}")}
    return owner, {"gid": os.getgid(), "sge_o": sge_o, "submit_host": host, "submit_time": time.time()}


def make_ads(text, cwd, cluster, owner, source="submit file", variables=None, environ=None):
    from gridtools.formats.condor.fsview import LocalFiles
    from gridtools.formats.condor.jobad import SubmitContext
    from gridtools.formats.condor.submit import parse_submit
    desc = parse_submit(text, source=source)
    ctx = SubmitContext(cwd=cwd, owner=owner, now=int(time.time()), files=LocalFiles(cwd),
                        environ=dict(os.environ if environ is None else environ),
                        variables=dict(variables or {}), filesystem_domain=cell.hostname())
    return desc.job_ads(cluster, ctx)


def submit_text(text, cwd, source="submit file", variables=None, extra=None, name=None, notify=False):
    """Submit one cluster (see the module docstring); ``extra``: attribute name -> value
    laid over every job ad (DAGNodeName, DAGManJobId, ...); ``name``: the job's name;
    ``notify``: warn the job (SIGUSR2) before it is killed when removed (qsub -notify)."""
    from gridtools.formats import jobcheck
    from gridtools.formats.condor.jobspec import spec_from_ads
    from gridtools.spool import ids
    owner, fields = identity(cwd)
    cluster = ids.allocate("job")[0]
    try:
        ads = make_ads(text, cwd, cluster, owner, source, variables)
        for ad in ads:
            for attr, value in (extra or {}).items():
                ad[attr] = value
        spec = spec_from_ads(ads)
        spec.update(fields, id=cluster)
        if name:
            spec["name"] = name
        if notify:
            spec["notify"] = True
        spec = jobcheck.check(spec)
        _send(spec)
    except BaseException:
        ids.release("job", cluster)
        raise
    return Submitted(cluster, len(ads), tuple(ads))


def _send(spec):
    from gridtools.cli.ask import ensure_daemon
    from gridtools.spool import requests, wake
    ensure_daemon()
    name = requests.write("submit", {"job": spec, "dialect": "condor", "host": cell.hostname()}, reply=True)
    wake.poke()
    answer = requests.wait_reply(name, SUBMIT_TIMEOUT)
    if answer is None:
        raise GridError("ERROR: no answer from the gridtools daemon")
    code, _out, err = answer
    if code:
        raise InputError((err or "ERROR: the job was refused").rstrip("\n"))
