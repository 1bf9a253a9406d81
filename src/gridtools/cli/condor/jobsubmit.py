"""Submitting a submit description to the cell: the path condor_submit_dag and the
DAG runner take (``formats.condor.submit`` -> job ads -> ``formats.condor.spec``
-> a submit request).

``submit_text(text, cwd, ...)`` parses the description, claims a job id
(the cluster), makes the job ads with the submitter's identity, checks the
job description as the daemon will (``formats.jobcheck``) and sends it
marked as an HTCondor command's request (the WRITE security level applies);
it waits for the daemon's answer and returns ``Submitted(cluster, procs,
ads)``. Nothing is queued when any step fails.

With ``late``, a cluster is materialized late (``daemon.factory``) as
HTCondor's DAGMan submits a node's: when its description gives max_materialize
or max_idle, or SUBMIT_FACTORY_JOBS_BY_DEFAULT is true (for every cluster then).
"""

import os
import time
from dataclasses import dataclass

from gridtools import cell
from gridtools.errors import GridError, InputError

#: seconds to wait for the daemon to take a submission in
SUBMIT_TIMEOUT = 60.0


class NotTaken(InputError):
    """The daemon did not take a sound submission in: its rules refused it (a submit
    requirement, the security levels) or it did not answer. DAGMan tries such a node's submission again
    (DAGMAN_MAX_SUBMIT_ATTEMPTS), as it tries again one its schedd did not commit."""


@dataclass(frozen=True)
class Submitted:
    cluster: int
    procs: int
    ads: tuple
    factory: bool = False           # materialized late: done at its ClusterRemove event


def make_ads(text, cwd, cluster, owner, source="submit file", variables=None, environ=None,
             appended=None, factories=None):
    """The job ads of the description; ``factories``: a mapping to collect the clusters
    materialized late in (``SubmitContext``), None for none."""
    from gridtools.formats.condor.fsview import LocalFiles
    from gridtools.formats.condor.jobad import SubmitContext
    from gridtools.formats.condor.submit import parse_submit
    append = [f"{name} = {value}" for name, value in (appended or {}).items()]
    desc = parse_submit(text, append=append, source=source, variables=variables, cwd=cwd)
    from gridtools.cli.condor.submit import knob_on, setting, submit_knobs
    knobs = submit_knobs()
    ctx = SubmitContext(cwd=cwd, owner=owner, now=int(time.time()), files=LocalFiles(cwd),
                        environ=dict(os.environ if environ is None else environ),
                        variables=dict(variables or {}), filesystem_domain=cell.hostname(),
                        setting=setting, admin=knobs)
    if factories is not None:
        ctx.factories = factories
        ctx.factory = 1 if knob_on("SUBMIT_FACTORY_JOBS_BY_DEFAULT", knobs) else 0
    return desc.job_ads(cluster, ctx)


def submit_text(text, cwd, source="submit file", variables=None, extra=None, name=None, notify=False,
                batch_name=None, appended=None, late=False, one_proc=False):
    """Submit one cluster (see the module docstring); ``variables``: NAME -> value read
    before the description (condor_submit's NAME=value arguments); ``appended``: NAME ->
    value read after it, before its first queue statement (condor_submit -append);
    ``extra``: attribute name -> value
    laid over every job ad (DAGNodeName, DAGManJobId, ...); ``name``: the job's name;
    ``notify``: warn the job (SIGUSR2) before it is killed when removed (qsub -notify);
    ``batch_name``: the JobBatchName of the job ads the description gives none, or a
    function of the cluster id that makes it; ``late``: a DAG node's cluster, which may be
    materialized late; ``one_proc``: a description that queues more than one proc (but of
    the parallel universe) is refused, as DAGMAN_PROHIBIT_MULTI_JOBS has DAGMan refuse it."""
    from gridtools.cli.condor.submit import check_spec, submitter
    from gridtools.formats.condor.spec import cluster_spec, custom_requests
    from gridtools.formats.condor.jobattrs import PARALLEL
    from gridtools.spool import ids
    who = submitter(time.time())
    who["sge_o"]["WORKDIR"] = cwd
    cluster = ids.allocate("job")[0]
    factories = {} if late else None
    try:
        ads = make_ads(text, cwd, cluster, who["owner"], source, variables, appended=appended,
                       factories=factories)
        if one_proc and len(ads) > 1 and ads[0].eval("JobUniverse") != PARALLEL:
            raise InputError("Submit generated multiple job procs; disallowed by DAGMAN_PROHIBIT_MULTI_JOBS setting")
        if callable(batch_name):
            batch_name = batch_name(cluster)
        for ad in ads:
            for attr, value in (extra or {}).items():
                ad[attr] = value
            if batch_name and "JobBatchName" not in ad:
                ad["JobBatchName"] = batch_name
        counted = None
        if custom_requests(ads[0]):         # (request_<name> of a consumable: as condor_submit's)
            from gridtools.cli.condor.submit_more import countable_complexes
            counted = countable_complexes()
        spec = cluster_spec(ads, who, counted, factory=(factories or {}).get(cluster))
        if name:
            spec["name"] = name
        if notify:
            spec["notify"] = True
        check_spec(spec, ads)
        _send(spec)
    except BaseException:
        ids.release("job", cluster)
        raise
    return Submitted(cluster, len(ads), tuple(ads), bool(factories))


def _send(spec):
    from gridtools.cli.ask import ensure_daemon
    from gridtools.spool import requests, wake
    ensure_daemon()
    name = requests.write("submit", {"job": spec, "dialect": "condor", "host": cell.hostname()}, reply=True)
    wake.poke()
    try:
        answer = requests.wait_reply(name, SUBMIT_TIMEOUT)
    except GridError as exc:                # in HTCondor's capitals
        raise NotTaken("ERROR: " + str(exc).removeprefix("error: ")) from None
    code, _out, err = answer
    if code:
        text = (err or "ERROR: the job was refused").rstrip("\n")
        # (tried again: a refusal of the cell's rules, security levels or submit requirements,
        # as HTCondor's schedd refuses a commit; not a request the daemon found malformed,
        # nor a queue limit, which HTCondor's schedd says at the new cluster)
        again = text.startswith(("SECMAN:", "Unable to run job: ")) and \
            "Number of submitted jobs would exceed" not in text
        raise (NotTaken if again else InputError)(text)
