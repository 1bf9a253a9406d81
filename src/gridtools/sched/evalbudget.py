"""What one owner's matching may take of a pass, in ClassAd evaluation steps.

A cell run by root is shared by users who do not trust each other. The cost of one
evaluation is bounded (classad(5), COST), but a user could submit many jobs whose
Requirements are each just under that bound and differ from job to job (so that no
category or autocluster shares their matches), and every pass would then spend its
time matching them while the other users' jobs wait.

So the matching of one owner may take at most ``SchedConfig.owner_steps`` steps of the
evaluator in a pass. The owner is the job's real owner (``PendingJob.owner``, the user
who submitted it), in either order: never a name the job chose for itself, such as
the accounting group the negotiator's submitters are named after (else one user could
spend another's steps, or get a budget for each group they name). Steps are counted by
the evaluator itself (``classad.budget.steps_taken``): unlike seconds, they are the same
on every machine and at every load, and counting them reads no clock; the time that
regular expressions take, which the evaluator measures anyway, counts as steps too
(``classad.budget.STEPS_PER_SECOND``). Once an owner has spent them, its other pending
jobs are not matched in this pass; they wait with the reason ``Why.OWNER_STEPS``
(owner, steps). The next pass takes them first, in the order they were put off,
before that owner's other jobs (``Budget.first``): each pass goes on where the last
one stopped, so every job is matched in its turn. (In the negotiator's order an
owner's jobs may count for several submitters, matched in the submitters' order: the
owner's steps go first to the match lists of its jobs put off, ``sched.negotiation``.)

What is evaluated for a job before its matching (the concurrency limits that need the
machine, on each host: ``daemon.condor``) is charged too (``charge(..., matching=False)``),
and an owner whose steps it took has its other jobs put off there; but it does not
keep the owner's next job from being matched (``spent_out`` is true only once a job
of the owner's was matched in the pass). A job whose matching began is matched to its
end, so an owner gets at least one job matched in every pass; the most that one job
may take is what each of its evaluations may take (classad(5)) times the hosts or
slot classes it is matched with.

Jobs are put off as a whole (their id) or, for the procs of an HTCondor cluster
whose ads differ, one by one (``(job id, task)``; ``"cluster.proc"`` in the
negotiator's order).
"""

from gridtools.classad.budget import steps_taken
from gridtools.sched.reasons import Reason, Why

#: the sched_conf params key that sets ``SchedConfig.owner_steps``
PARAM = "OWNER_MATCH_STEPS"
#: the steps counter of the evaluator: ``mark()`` before some evaluations, then
#: ``Budget.charge(owner, mark)`` counts what they took
mark = steps_taken


class Budget:
    """The steps each owner's matching took in one pass, against ``limit`` (0: no limit),
    the owners one of whose jobs was matched (``begun``), and what the pass put off:
    ``before`` (the last pass's, in its order) and ``put_off`` (this pass's, in order)."""

    __slots__ = ("limit", "spent", "begun", "before", "put_off")

    def __init__(self, limit, before=(), spent=None):
        self.limit = limit
        self.spent = dict(spent) if spent else {}
        self.begun = set()
        self.before = tuple(before)
        self.put_off = []

    def over(self, owner):
        """True when ``owner``'s jobs took its steps of this pass."""
        return self.limit > 0 and self.spent.get(owner, 0) >= self.limit

    def spent_out(self, owner):
        """True when ``owner``'s jobs took its steps of this pass and one of them was
        matched: its next job is then put off."""
        return self.limit > 0 and owner in self.begun and self.spent.get(owner, 0) >= self.limit

    def charge(self, owner, since, matching=True):
        """Count against ``owner`` the steps taken since ``since`` (a ``mark()``): of a
        job's matching, or (``matching`` False) of what was evaluated before it."""
        self.spent[owner] = self.spent.get(owner, 0) + steps_taken() - since
        if matching:
            self.begun.add(owner)

    @classmethod
    def of(cls, config, before=(), spent=None):
        """The budget a SchedConfig gives each owner (``spent``: owner -> the steps its
        jobs took in this pass before it)."""
        return cls(config.owner_steps, before, spent)

    def reason(self, owner):
        return Reason(Why.OWNER_STEPS, (owner, self.limit))

    def first(self, items, key):
        """``items`` with those the last pass put off (``key(item)`` in ``before``) first,
        in the order they were put off, and the others after them in their own order."""
        if not self.before:
            return items
        rank = {k: n for n, k in enumerate(self.before)}
        last = len(rank)
        return sorted(items, key=lambda item: rank.get(key(item), last))
