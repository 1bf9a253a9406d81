"""What compiling a Grid Engine job's request patterns costs its owner in a pass.

(And its queue lists: a job naming more than MANY_SPECS queue specs with -q or
-masterq, each a wildcard pattern, at most MAX_QUEUE_SPECS in a list, has them
compiled and charged as its long request patterns are.)

A string request (``-l hostname=a*|b?|!c``, ``arch``, ``qname`` ...) is a
wildcard pattern, compiled once into an expression and kept
(``model.resources``), but only so many are kept, and one of the longest a
request may be (``formats.jobcheck``) takes a tenth of a second or more to
compile. A user with many pending jobs asking for patterns that differ would
have every pass compile them all again while the other users' jobs wait.

So before the pass matches jobs, the daemon compiles the patterns of each
pending job's requests (the long ones, and any with a wildcard, a class or
alternatives), in the order the budget gives (``sched.evalbudget``: the jobs
put off in the last pass first), and charges the time to the job's owner as
evaluation steps (``classad.budget.taken_seconds``): the same budget of
OWNER_MATCH_STEPS that bounds the owner's ClassAd evaluations. Once an owner's
budget is spent, its other such jobs are put off (``Snapshot.put_off``: not
matched in this pass, with the reason ``Why.OWNER_STEPS``) and taken first in
the next. A pattern already kept costs next to nothing, so jobs whose patterns
were compiled in an earlier pass are matched as before.
"""

from dataclasses import replace

from gridtools.classad.budget import taken_seconds
from gridtools.model.resources import prepare
from gridtools.sched.queues import prepare_specs
from gridtools.sched.evalbudget import mark

#: a request value this long (characters) is charged whatever it holds ...
LONG = 256
#: ... and one with any of these (a wildcard, a character class, alternatives) however
#: short: only so many compiled patterns are kept, and many that differ would have every
#: pass compile them again (a plain word compiles in microseconds: not charged)
PATTERN_CHARS = frozenset("*?[|!")


def _costly_value(value):
    return isinstance(value, str) and (len(value) >= LONG or not PATTERN_CHARS.isdisjoint(value))


def _job_id(job):
    return job.id


#: request -> what compiling its patterns costs (``_costly``; jobs of one category share their request)
_COSTLY = {}
#: requests remembered at most (then forgotten all at once)
KEPT = 65536


#: a job naming more queue specs than this (-q, -masterq) has them compiled and charged
MANY_SPECS = 16


def _costly(job):
    """(the request's asks with long patterns, its queue specs when it names many): what
    compiling costs, remembered by request (jobs of one category share theirs)."""
    request = job.request
    found = _COSTLY.get(request)
    if found is None:
        if len(_COSTLY) >= KEPT:
            _COSTLY.clear()
        specs = request.hard_queues + request.soft_queues + request.master_queues
        found = _COSTLY[request] = (tuple(ask for ask in request.hard + request.soft if _costly_value(ask.value)),
                                       specs if len(specs) > MANY_SPECS else ())
    return found


def charge(snap, budget):
    """``snap`` with the jobs put off whose owners' budget (``budget``) compiling their
    patterns spent (merged into ``snap.put_off``); the patterns of the others compiled."""
    complexes = snap.complexes
    put_off = {}
    for job in budget.first(snap.jobs, _job_id):
        if not job.tasks or job.held_all or (snap.put_off and job.id in snap.put_off):
            continue
        asks, specs = _costly(job)
        if not asks and not specs:
            continue
        if budget.over(job.owner):
            put_off[job.id] = None
            budget.put_off.append(job.id)
            continue
        since, seconds = mark(), 0.0
        for ask in asks:
            cx = complexes.get(ask.name)
            seconds += prepare(ask.value, cx is not None and cx.type.folds_case)
        if specs:
            seconds += prepare_specs(specs)
        taken_seconds(seconds)
        budget.charge(job.owner, since, matching=False)
    if not put_off:
        return snap
    return replace(snap, put_off={**snap.put_off, **put_off} if snap.put_off else put_off)
