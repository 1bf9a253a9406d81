"""Matching many jobs against many slots with few ClassAd evaluations.

HTCondor's schedd groups idle jobs into *autoclusters*: jobs whose
*significant attributes* (those any machine expression, negotiator
expression or the job's own Requirements and Rank can look at) are equal
are matched once, and the negotiator keeps one sorted list of candidate
machines per autocluster (its match list). This module does the same, and
also groups slots into *classes*: slots whose attributes that any job or
policy expression refers to are equal (on a farm of identical hosts, the
slots of one host layout), so a job is evaluated against each class once.

``references(expr)`` is the set of attribute names an expression names;
``Significance`` collects them for a cycle; ``job_key`` and ``slot_key``
give the keys that group jobs and slots.
"""

from gridtools.classad.nodes import Attr, Literal, Scoped, Select

#: slot attributes the negotiator reads itself, always significant
SLOT_ALWAYS = ("requirements", "start", "rank", "remoteuser", "accountinggroup", "currentrank",
               "slotweight", "cpus", "memory", "disk", "partitionableslot", "state")
#: job attributes the negotiator reads itself, always significant
JOB_ALWAYS = ("requirements", "rank", "requestcpus", "requestmemory", "requestdisk",
              "concurrencylimits")

_REFS = {}
#: entries of the reference memo before it is emptied
_REFS_LIMIT = 100_000


def references(expr):
    """Lower-case names of the attributes ``expr`` refers to (any scope)."""
    if expr is None or expr.__class__ is Literal:
        return frozenset()
    key = id(expr)
    found = _REFS.get(key)
    if found is None or found[0] is not expr:
        if len(_REFS) > _REFS_LIMIT:
            _REFS.clear()
        names = set()
        _collect(expr, names)
        found = _REFS[key] = (expr, frozenset(names))
    return found[1]


def _collect(expr, names):
    cls = expr.__class__
    if cls is Attr or cls is Scoped:
        names.add(expr.key)
    elif cls is Select:
        names.add(expr.key)
    for child in expr.children():
        _collect(child, names)


def ad_references(ad, names):
    """``names`` and, transitively, what ``ad``'s expressions for them refer to."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(references(ad.lookup(name)))
    return seen


class Significance:
    """The attribute names that decide matches in one cycle."""

    def __init__(self, machine_ads, extra_exprs=()):
        job_side = set(JOB_ALWAYS)
        slot_side = set(SLOT_ALWAYS)
        seen = set()
        for ad in machine_ads:
            for name in ad:
                expr = ad.lookup(name)
                if expr.__class__ is Literal or id(expr) in seen:
                    continue
                seen.add(id(expr))
                refs = references(expr)
                job_side |= refs
                slot_side |= refs
        for expr in extra_exprs:
            refs = references(expr)
            job_side |= refs
            slot_side |= refs
        self.job_side = job_side        # job attributes machines and policies may read
        self.slot_side = slot_side      # slot attributes jobs and policies may read
        self._job_memo = {}

    def job_names(self, ad):
        """The significant attribute names of a job ad (sorted), memoized by its
        Requirements and Rank."""
        req, rank = ad.lookup("Requirements"), ad.lookup("Rank")
        memo_key = (req.unparse() if req is not None else "", rank.unparse() if rank is not None else "")
        names = self._job_memo.get(memo_key)
        if names is None:
            own = ad_references(ad, ("requirements", "rank"))
            self.slot_side |= own
            names = self._job_memo[memo_key] = tuple(sorted(self.job_side | own))
        return names


def job_key(ad, names):
    """The autocluster key of a job ad: the text of each significant attribute it has."""
    out = []
    for name in names:
        expr = ad.lookup(name)
        out.append(None if expr is None else expr.unparse())
    return tuple(out)


def slot_key(ad, names):
    """The class key of a slot ad: the text of each significant attribute it has."""
    return job_key(ad, names)
