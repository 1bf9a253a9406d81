"""What each proc of an HTCondor cluster asks for, read from its own ad: shared by the
daemon (``daemon.procasks``, ``daemon.view``) and the queries that show a job the
daemon has not taken in, or shows while no daemon runs (``cli/status``).

A cluster is one job whose description holds proc 0's requests
(``formats.condor.spec.cluster_spec``). A proc asks otherwise when its stored ad
changes what the requests read, or when a request reads what differs in every proc
(``PER_PROC``: ``request_cpus = ProcId % 7 + 1``, which a plain ``queue N`` stores as
one text); ``task_requests`` gives those procs' requests, ``settled`` the
description of a job whose submitter left proc 0's to be read from its ad
(``requests_pending``), and ``task_asks`` what each row of qstat shows of them.
"""

from gridtools import jobads
from gridtools.sched.autocluster import ad_references

#: the attributes (lower case) that differ in every proc of a cluster stored as one text
#: (``jobads.job_ad`` sets them)
PER_PROC = ("procid", "globaljobid")


def reads_per_proc(text):
    """True when ``text`` (a stored ad) may read a ``PER_PROC`` attribute: it names one
    other than where the ad defines it. A look at the text, without parsing it."""
    low = text.lower()
    for name in PER_PROC:
        at = low.find(name)
        while at >= 0:
            defines = (at == 0 or low[at - 1] == "\n") and low.startswith(" = ", at + len(name))
            if not defines:
                return True
            at = low.find(name, at + 1)
    return False


def set_proc(ad, spec, number):
    """Give ``ad`` (a copy of a cluster's ad) the ``PER_PROC`` attributes of task ``number``."""
    ad["ProcId"] = number - 1
    if "owner" in spec:
        ad["GlobalJobId"] = jobads.global_job_id(spec, number)


class TooCostly(Exception):
    """Evaluating a proc's requests went over the budget of an evaluation (classad(5),
    COST): a cluster's procs are not read further (proc 0's requests stand in)."""


def task_requests(spec, counted=None):
    """task number -> (pe, hard resources) of each proc of a cluster that asks for
    other resources than proc 0 (empty when all ask alike). The description holds
    proc 0's requests (``formats.condor.spec.cluster_spec``); a proc's own requests, read
    from its ad as that function reads proc 0's, replace the resources proc 0's ad names
    in the description's hard requests (a ``qalter -l`` of other resources holds for
    every proc), and its parallel environment the description's when it differs from
    proc 0's (``counted``: see ``cluster_spec``). Every proc is read when a request reads
    a ``PER_PROC`` attribute; else only those whose stored ads change what the requests
    read."""
    from gridtools.classad import parse_ad
    from gridtools.formats.condor.spec import requests_of
    from gridtools.model.job import task_numbers
    texts = spec.get("condor_ad")
    differ = isinstance(texts, list) and len(texts) > 1 and any(texts[1:])
    one = texts if isinstance(texts, str) else texts[0] if isinstance(texts, list) and texts else ""
    if not one or (not differ and not reads_per_proc(one)):
        return {}
    stored, host = (tuple(texts) if differ else (one,)), spec.get("submit_host") or ""
    first = jobads.proc_ad(stored, 1)
    set_proc(first, spec, 1)
    pe0, hard0 = requests_of(first, host, counted)
    read = {name.lower() for name in first if name.lower().startswith("request")}
    read = ad_references(first, read | {"maxhosts", "jobuniverse"})
    every = any(name in read for name in PER_PROC)     # requests that differ in every proc
    if not every and not differ:
        return {}
    base = (spec.get("resources") or {}).get("hard") or {}
    found, ad = {}, first.copy()
    from gridtools.classad.budget import over_budget
    before = over_budget()
    for number in list(task_numbers(spec))[1:]:
        if differ:
            text = stored[number - 1] if number <= len(stored) else ""
            if not every and (not text or not any(name.lower() in read or name.lower().startswith("request")
                                                  for name in parse_ad(text))):
                continue                # nothing its requests read differs from proc 0's
            ad = jobads.proc_ad(stored, number)
        set_proc(ad, spec, number)
        pe, hard = requests_of(ad, host, counted)
        if over_budget() != before:     # (as costly for each proc: none is read further)
            raise TooCostly(f"evaluating the requests of proc {number - 1} went over its budget")
        if (pe, hard) == (pe0, hard0):
            continue
        own = {name: value for name, value in base.items() if name not in hard0}
        own.update(hard)
        found[number] = (pe if pe != pe0 else spec.get("pe"), own)
    return found


def settled(spec, counted=None):
    """A new job's description with the requests of proc 0's ad (``pe``, hard
    resources and ``per_job_requests``): what the daemon makes of a job whose submitter
    left to it those its ad gives as expressions (``requests_pending``: see
    ``formats.condor.spec.cluster_spec``; ``counted`` as there)."""
    from gridtools.formats.condor.spec import per_job_requests, requests_of
    texts = spec["condor_ad"] if isinstance(spec["condor_ad"], list) else [spec["condor_ad"]]
    first = jobads.proc_ad(tuple(texts), 1)
    set_proc(first, spec, 1)
    pe, hard = requests_of(first, spec.get("submit_host") or "", counted)
    done = dict(spec, pe=pe, resources={"hard": hard, "soft": {}})
    done.pop("per_job_requests", None)
    done.pop("requests_pending", None)
    held_once = per_job_requests(pe, hard, counted)
    if held_once:
        done["per_job_requests"] = held_once
    return done


def task_asks(spec, counted=None):
    """task number -> (parallel environment request or None, hard requests) of the procs
    of an HTCondor cluster that ask for other resources than its description (proc
    0's), as ``task_requests`` reads them; {} for every other job, and for a cluster
    whose ads cannot be read (proc 0's requests stand in, as in the daemon)."""
    if not spec.get("condor_ad"):
        return {}
    try:
        return task_requests(spec, counted)
    except Exception:  # noqa: BLE001 - a client's ad must not stop a query
        return {}


def countable_complexes():
    """Name in lower case -> name of the cell's machine resources, read from its
    complex configuration as the daemon counts them (``daemon.devices``); none when it
    cannot be read."""
    from gridtools import cell
    from gridtools.formats.sge.complex import machine_resources_in
    return machine_resources_in(cell.etc("complex"))
