"""One negotiation cycle of HTCondor's matchmaker, as a pure function.

``negotiate(submitters, slots, priorities, config)`` matches idle jobs to
slots and returns the matches, the running jobs they preempt and, for the
jobs left idle, why. It works as HTCondor's negotiator does:

- Submitters are accounting names (``group.user`` for jobs with an
  accounting group, else the owner). Each gets a share of the pool in
  inverse proportion to its effective user priority: with priorities 10
  and 20 and 6 slots, the shares are 4 and 2. Its *limit* is its share
  minus what it already holds. Submitters negotiate in priority order;
  the pie is spun again while anything was handed out, so what one
  submitter cannot use goes to the others.
- With group quotas (``sched.groups``) each group negotiates in turn,
  the most starved first, for at most its allocation, with the same
  algorithm among its submitters; the root group last.
- A submitter's idle jobs are considered in its own order (JobPrio, then
  submission). Jobs with equal significant attributes form an
  autocluster, matched once (``sched.autocluster``); when one finds no
  slot, the rest of it is passed over for the submitter's turn.
- For a job, the slots that match it both ways (its Requirements against
  the slot, the slot's Requirements against it) are ranked by
  NEGOTIATOR_PRE_JOB_RANK, the job's Rank, NEGOTIATOR_POST_JOB_RANK, then
  unclaimed before preempting by the slot's Rank, before preempting by
  priority, then PREEMPTION_RANK; the best one wins.
- A claimed slot may be taken when it ranks the new job higher than its
  current one (rank preemption), or, for a user with a worse priority,
  when PREEMPTION_REQUIREMENTS is true (priority preemption, only within
  the submitter's limit). NEGOTIATOR_CONSIDER_PREEMPTION = false only
  hands out unclaimed slots.
- A submitter's floor (``condor_userprio -setfloor``) and ceiling
  (``-setceiling``) come in ``floors`` and ``ceilings``. Before a group's
  fair-share round, the submitters that hold less than their floor
  negotiate alone, in priority order, for one spin, each up to its floor
  (and within its share among them). A ceiling caps the weighted slots a
  submitter holds, what it already runs included: a match that would take it
  over is not made, and once it is at its ceiling its turn ends and its
  other idle jobs wait (``Why.SUBMITTER_CEILING``); the other submitters
  share out the rest.

Nothing here reads a clock, a file or the spool; ``now`` is given as
CurrentTime to expressions that look at it.
"""

import enum
import math
from dataclasses import dataclass, field

from gridtools.ads import Claim
from gridtools.classad import parse
from gridtools.classad.match import accepts, rank as ad_rank
from gridtools.classad.values import truth
from gridtools.sched import groups as grp

#: the submitter priority of a name without a record (the best real priority times 1.0)
DEFAULT_PRIORITY = 0.5
#: PREEMPTION_RANK when not configured: worst-priority users first, then the youngest job
DEFAULT_PREEMPTION_RANK = ("(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRunTime), 0, "
                           "TotalJobRunTime)")
#: the value of a rank expression that is not configured or not a number
NO_RANK = -math.inf


class Kind(enum.IntEnum):
    """How a match gets its slot; larger is preferred when ranks tie."""
    PRIORITY = 0          # preempts the job of a user with a worse priority
    RANK = 1              # preempts a job the slot ranks lower
    NEW = 2               # an unclaimed slot


class Why(enum.Enum):
    """Why a job was not matched, in HTCondor's words."""
    NO_MATCH = "no match found"
    SUBMITTER_LIMIT = "submitter limit exceeded"
    PREEMPTION_REQUIREMENTS = "PREEMPTION_REQUIREMENTS == False"
    GROUP_QUOTA = "group quota exceeded"
    SUBMITTER_CEILING = "submitter ceiling reached"


@dataclass(frozen=True, slots=True)
class NegotiatorConfig:
    """The negotiator's knobs (condor_config(5)); each default once."""
    preemption_requirements: str = "false"       # PREEMPTION_REQUIREMENTS
    preemption_rank: str = DEFAULT_PREEMPTION_RANK
    pre_job_rank: str = ""                       # NEGOTIATOR_PRE_JOB_RANK ("": none)
    post_job_rank: str = ""                      # NEGOTIATOR_POST_JOB_RANK
    consider_preemption: bool = True             # NEGOTIATOR_CONSIDER_PREEMPTION
    groups: grp.GroupsConfig = grp.GroupsConfig()
    interval: float = 60.0                       # NEGOTIATOR_INTERVAL, seconds between preempting cycles

    @classmethod
    def from_config(cls, config):
        """From an object with ``get(name)`` giving expanded text or None."""
        d = cls()

        def text(name, default):
            value = config.get(name)
            return value.strip() if value is not None and value.strip() else default
        consider = text("NEGOTIATOR_CONSIDER_PREEMPTION", "true").lower() in ("true", "yes", "t", "y", "1")
        try:
            interval = max(0.0, float(text("NEGOTIATOR_INTERVAL", str(d.interval))))
        except ValueError:
            interval = d.interval
        return cls(text("PREEMPTION_REQUIREMENTS", d.preemption_requirements),
                   text("PREEMPTION_RANK", d.preemption_rank), text("NEGOTIATOR_PRE_JOB_RANK", ""),
                   text("NEGOTIATOR_POST_JOB_RANK", ""), consider, grp.GroupsConfig.from_config(config),
                   interval)


@dataclass(frozen=True, slots=True)
class IdleJob:
    id: str                       # "cluster.proc"
    ad: object                    # its ClassAd
    owner: str = ""               # the user who submitted it ("": its submitter's name)


@dataclass(frozen=True, slots=True)
class Submitter:
    name: str                     # accounting name
    jobs: tuple = ()              # IdleJob, in the submitter's own order


@dataclass(frozen=True, slots=True)
class Slot:
    name: str
    ad: object                    # the slot ad
    claim: Claim | None = None    # the job running in it


@dataclass(frozen=True, slots=True)
class Match:
    job: str
    submitter: str
    slot: str
    kind: Kind = Kind.NEW
    victim: Claim | None = None   # the claim it preempts
    cost: float = 1.0             # the slot weight charged to the submitter
    carved: tuple = ()            # (cpus, memory, disk) taken from a partitionable slot
    #: the group whose round it was made in (RemoteNegotiatingGroup of the claim it makes):
    #: with autoregroup a job of a group may be matched in the root group's round
    negotiating_group: str = grp.ROOT
    autoregroup: bool = False     # made in the autoregroup round (RemoteAutoregroup)
    group: str = ""               # its submitter's group with group quotas (RemoteGroup; "": none)


class MatchedSlot(str):
    """The name of the slot a match chose, as the match hands it on to the claim it makes
    (``Decisions.slots``, ``Preempt.slot``, to ``daemon.machines``), with the group round
    it was made in and its submitter's group: HTCondor's negotiator puts these in the match
    (RemoteNegotiatingGroup, RemoteAutoregroup, RemoteGroup) and its startd keeps them in
    the claim and publishes them in the claimed slot's ad. It is the slot's name wherever
    a name is wanted."""

    def __new__(cls, name, negotiating_group=grp.ROOT, autoregroup=False, group=""):
        self = super().__new__(cls, name)
        self.negotiating_group, self.autoregroup, self.group = negotiating_group, bool(autoregroup), group
        return self

    @classmethod
    def of(cls, match):
        return cls(match.slot, match.negotiating_group, match.autoregroup, match.group)

    def matched_in(self):
        """(RemoteNegotiatingGroup, RemoteAutoregroup, RemoteGroup or "")."""
        return (self.negotiating_group, self.autoregroup, self.group)


@dataclass(frozen=True, slots=True)
class Preemption:
    slot: str
    claim: Claim                  # the running job to evict
    kind: Kind                    # PRIORITY or RANK
    by: str                       # the job that takes the slot


@dataclass(frozen=True, slots=True)
class SubmitterReport:
    name: str
    priority: float
    share: float                  # its fraction of the pool on the first spin
    usage: float                  # weighted slots it holds after the cycle


@dataclass
class Outcome:
    matches: list = field(default_factory=list)
    preemptions: list = field(default_factory=list)
    rejected: dict = field(default_factory=dict)        # job id -> Why
    submitters: dict = field(default_factory=dict)      # name -> SubmitterReport
    groups: list = field(default_factory=list)          # sched.groups.Group, after the cycle
    put_off: list = field(default_factory=list)         # job ids whose matching was put off


# ---------------------------------------------------------------- job side helpers

def accounting_name(ad):
    """The submitter a job counts for: AccountingGroup, else ``nice-user.<owner>`` for a
    nice_user job, else its Owner."""
    group = ad.eval("AccountingGroup")
    if isinstance(group, str) and group:
        return group
    owner = ad.eval("Owner")
    owner = owner if isinstance(owner, str) else ""
    return f"nice-user.{owner}" if ad.eval("NiceUser") is True else owner


def job_order_key(ad):
    """A submitter's own order: higher JobPrio first, then earlier submission."""
    def num(name):
        value = ad.eval(name)
        return value if type(value) in (int, float) else 0
    return (-num("JobPrio"), num("QDate"), num("ClusterId"), num("ProcId"))


def submitters_from(jobs):
    """Submitters from ``(job id, ad)`` pairs or ``(job id, ad, owner)`` triples of idle
    jobs, each in its own order."""
    by_name = {}
    for job_id, ad, *owner in jobs:
        by_name.setdefault(accounting_name(ad), []).append(IdleJob(job_id, ad, *owner))
    return [Submitter(name, tuple(sorted(js, key=lambda j: job_order_key(j.ad))))
            for name, js in sorted(by_name.items())]


def negotiate(submitters, slots, priorities, config=NegotiatorConfig(), now=0, limits=None, budget=None,
              floors=None, ceilings=None):
    """One negotiation cycle; see the module docstring.

    ``priorities``: accounting name -> effective priority (missing names
    have DEFAULT_PRIORITY). Slots whose Requirements are false (owned,
    matched, preempting) simply match nothing. ``limits``, when given, keeps
    jobs off slots where their concurrency limits would go over, as
    HTCondor's negotiator checks each candidate: ``limits.allows(job id, slot
    name)``, and ``limits.take(job id, slot name)`` for each match; jobs for
    which ``limits.kind(job id)`` differs are never in one autocluster. ``budget``, when
    given (a ``sched.evalbudget.Budget``), bounds the evaluation steps the matching of
    each owner's jobs takes (``IdleJob.owner``, whatever submitters they count for):
    once one owner's took them, its other idle jobs are left out of the cycle
    (``Outcome.put_off``), and the jobs the last cycle left so (``budget.before``) go
    first in their submitter's order. ``floors`` and ``ceilings``: accounting name ->
    weighted slots (a floor of 0 or less, a ceiling below 0: none)."""
    from gridtools.sched.negotiation import Cycle
    return Cycle(list(submitters), list(slots), dict(priorities), config, now, limits, budget,
                 floors, ceilings).run()


def compiled(text):
    """A configured expression, or None when it is empty."""
    return parse(text) if text else None


def number_or(value, default):
    return float(value) if type(value) in (int, float) else default


def rank_value(expr, machine, job):
    """A negotiator rank expression with the slot as MY and the job as TARGET."""
    if expr is None:
        return NO_RANK
    value = expr.eval(machine, job)
    return float(value) if type(value) in (int, float, bool) else NO_RANK


def matches(job, machine):
    """Both ads' Requirements hold against the other."""
    return accepts(job, machine) and accepts(machine, job)


def job_rank(job, machine):
    return ad_rank(job, machine)


def machine_rank(machine, job):
    return ad_rank(machine, job)


def holds(expr, machine, job):
    return expr is not None and truth(expr.eval(machine, job)) is True


__all__ = ["negotiate", "NegotiatorConfig", "IdleJob", "Submitter", "Slot", "Match", "MatchedSlot",
           "Preemption", "Outcome", "Kind", "Why", "accounting_name", "job_order_key",
           "submitters_from"]
