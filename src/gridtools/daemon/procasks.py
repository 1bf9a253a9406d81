"""What the procs of one HTCondor cluster ask for when they do not all ask alike.

A cluster is one job whose description holds proc 0's requests
(``formats.condor.spec.cluster_spec``). A proc asks otherwise when its stored
ad changes what the requests read (``spec["condor_ad"]`` a list: ``queue``
statements with other values in between), or when a request reads what
differs in every proc (``PER_PROC``: ``request_cpus = ProcId % 7 + 1``,
which a plain ``queue N`` stores as one text). HTCondor evaluates each proc's
requests and Requirements in its own ad; so does the daemon, for those procs
only: a cluster whose requests read nothing of the kind (the common case, one
text for ten thousand procs) costs one look at its text
(``reads_per_proc``).

``task_requests`` gives each such proc's requests (``daemon.view`` makes
them the scheduler's ``PendingJob.task_requests``); ``proc_keys`` tells
which procs of a one-text cluster the Requirements and the hosts' START may
answer differently (``daemon.slotads``: ``Snapshot.task_refusals``).
"""

from gridtools import jobads
from gridtools.classad.nodes import Scoped
from gridtools.sched.autocluster import ad_references, references

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
    for number in list(task_numbers(spec))[1:]:
        if differ:
            text = stored[number - 1] if number <= len(stored) else ""
            if not every and (not text or not any(name.lower() in read or name.lower().startswith("request")
                                                  for name in parse_ad(text))):
                continue                # nothing its requests read differs from proc 0's
            ad = jobads.proc_ad(stored, number)
        set_proc(ad, spec, number)
        pe, hard = requests_of(ad, host, counted)
        if (pe, hard) == (pe0, hard0):
            continue
        own = {name: value for name, value in base.items() if name not in hard0}
        own.update(hard)
        found[number] = (pe if pe != pe0 else spec.get("pe"), own)
    return found


def _self_contained(ad, name):
    """True when what ``name`` evaluates to in ``ad`` needs no other ad: every attribute
    it reads (transitively) is the job's own, none through TARGET."""
    for ref in ad_references(ad, (name,)):
        expr = ad.lookup(ref)
        if expr is None:
            if ref not in PER_PROC:
                return False            # an attribute the job lacks: the target's
            continue
        if any(node.__class__ is Scoped and node.scope.lower() == "target" for node in _nodes(expr)):
            return False
    return True


def _nodes(expr):
    todo = [expr]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(node.children())


def proc_keys(spec, names):
    """task -> a key of what its ad gives the attributes ``names`` (lower case: those the
    hosts' START read) and those its Requirements read, for the tasks whose key is not
    proc 0's, when any of them depends on a ``PER_PROC`` attribute: tasks of one key are
    refused by the same hosts. Such an attribute is keyed by its value when it needs
    nothing of the machine to be evaluated (``RequestCpus = ifThenElse(ProcId == 1, 8,
    1)``: the procs fall into a few keys), else by the task's number. Empty when
    nothing read depends on one (the common case: a look at the texts)."""
    from gridtools.model.job import task_numbers
    texts = spec.get("condor_ad")
    stored = tuple(texts) if isinstance(texts, list) else (texts,)
    if not stored or not stored[0]:
        return {}
    if not any(name in names for name in PER_PROC) and not any(reads_per_proc(t) for t in stored if t):
        return {}
    base = jobads.parsed_ad(stored[0])
    direct = set(names) | references(base.lookup("Requirements"))
    varying = sorted(name for name in direct
                     if any(ref in PER_PROC for ref in ad_references(base, (name,))))
    if not varying:
        return {}
    by_value = all(name not in PER_PROC and _self_contained(base, name) for name in varying)
    shared = base.copy()

    def key(number):
        if not by_value:
            return (number,)
        ad = jobads.proc_ad(stored, number) if len(stored) > 1 else shared
        set_proc(ad, spec, number)
        values = []
        for name in varying:
            value = ad.eval(name)
            values.append((name, type(value).__name__, repr(value)))
        return tuple(values)
    numbers = list(task_numbers(spec))
    first = key(numbers[0])
    keys = {}
    for number in numbers[1:]:
        mine = key(number)
        if mine != first:
            keys[number] = mine
    return keys
