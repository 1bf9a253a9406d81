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

``task_requests`` (``gridtools.procrequests``, which the queries share) gives
each such proc's requests (``daemon.view`` makes them the scheduler's
``PendingJob.task_requests``); ``proc_keys`` tells
which procs of a one-text cluster the Requirements and the hosts' START may
answer differently (``daemon.slotads``: ``Snapshot.task_refusals``).
"""

from gridtools import jobads
from gridtools.classad.nodes import Scoped
from gridtools.procrequests import (  # noqa: F401 - the daemon's modules use these from here
    PER_PROC, reads_per_proc, set_proc, task_requests)
from gridtools.sched.autocluster import ad_references, references


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
