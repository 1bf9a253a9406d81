"""The scheduler configuration values the job-order policies read.

Each default is the value a new cell ships with (etc/sched_conf); the
daemon builds a ``PolicyConfig`` from the cell's sched_conf, tests and the
simulator may write only what they change.
"""

from dataclasses import dataclass
from enum import Enum

from gridtools.accounting.usage import Usage


class Policy(Enum):
    """The ticket policies, by the letter policy_hierarchy uses."""
    OVERRIDE = "O"
    FUNCTIONAL = "F"
    SHARE_TREE = "S"


#: the order in which policies outside the hierarchy hand out tickets
POLICY_ORDER = (Policy.OVERRIDE, Policy.FUNCTIONAL, Policy.SHARE_TREE)
#: letter of the deadline policy of old Grid Engine releases: accepted, no effect
OBSOLETE_LETTER = "D"


def parse_hierarchy(text):
    """Policies of a policy_hierarchy value, top first (NONE or empty: none)."""
    text = (text or "").strip()
    if text.upper() in ("", "NONE"):
        return ()
    policies = []
    for letter in text.upper():
        if letter == OBSOLETE_LETTER:
            continue
        try:
            policy = Policy(letter)
        except ValueError:
            raise ValueError(f"policy_hierarchy: unknown policy letter {letter!r}") from None
        if policy in policies:
            raise ValueError(f"policy_hierarchy: {letter!r} given twice")
        policies.append(policy)
    return tuple(policies)


def ticket_steps(hierarchy):
    """(policy, dependent) in the order tickets are handed out to pending jobs.

    Policies of the hierarchy come first, in its order, and are dependent:
    each sees the tickets the earlier ones gave and orders a user's jobs by
    them. The others follow in the order override, functional, share tree
    and neither see nor influence anyone's tickets.
    """
    rest = tuple((p, False) for p in POLICY_ORDER if p not in hierarchy)
    return tuple((p, True) for p in hierarchy) + rest


@dataclass(frozen=True, slots=True)
class PolicyConfig:
    """Weights and switches of the ticket, urgency and priority policies."""
    # ticket pools: their relation is the relative weight of the policies
    weight_tickets_share: float = 0.0
    weight_tickets_functional: float = 0.0
    # split of the functional pool among the four functional categories
    weight_user: float = 0.25
    weight_project: float = 0.25
    weight_department: float = 0.25
    weight_job: float = 0.25
    # TRUE: a member's functional shares / override tickets are divided among its jobs
    share_functional_shares: bool = True
    share_override_tickets: bool = True
    # pending jobs ranked one by one by the functional policy (the rest get estimates)
    max_functional_jobs_to_schedule: int = 200
    # pending tasks of one array job that take part in the ticket calculation
    max_pending_tasks_per_job: int = 50
    # FALSE: pending jobs' tickets are computed but not published
    report_pjob_tickets: bool = True
    policy_hierarchy: tuple = (Policy.OVERRIDE, Policy.FUNCTIONAL, Policy.SHARE_TREE)
    # share tree: half-life of usage in hours (0: no decay), usage weights, compensation
    halftime: float = 168.0
    # minutes by usage kind (halflife_decay_list; negative: only the usage since the previous
    # pass counts, 0: no decay;
    # finished_jobs: see finished_half_life)
    decay_minutes: tuple = ()            # ((kind, minutes), ...); others follow halftime
    usage_weights: Usage = Usage(1.0, 0.0, 0.0)
    compensation_factor: float = 5.0
    # job priority = weight_priority*npprior + weight_urgency*nurg + weight_ticket*ntckts
    weight_priority: float = 0.0
    weight_urgency: float = 0.5
    weight_ticket: float = 0.5
    # urgency: per second waited, and the numerator of the deadline contribution
    weight_waiting_time: float = 0.278
    weight_deadline: float = 3600000.0
    # seconds between renicing running jobs by their tickets (0: never)
    reprioritize_interval: float = 0.0

    def half_lives(self):
        """Seconds of half-life of cpu, mem and io usage (0: never decays, < 0: only
        running jobs' usage counts): halflife_decay_list, else halftime."""
        hours = self.halftime * 3600.0
        minutes = dict(self.decay_minutes)
        return tuple(minutes[k] * 60.0 if k in minutes else hours for k in ("cpu", "mem", "io"))

    def finished_half_life(self):
        """Seconds of half-life of the count of ended tasks (finished_jobs) the share tree
        counts against pending jobs: what halflife_decay_list gives it, else halftime when
        there is a list; without a list Grid Engine forgets an ended task at once (< 0)."""
        if not self.decay_minutes:
            return -1.0
        minutes = dict(self.decay_minutes)
        if "finished_jobs" in minutes:
            return minutes["finished_jobs"] * 60.0
        return self.halftime * 3600.0

    def functional_weights(self):
        """(user, project, department, job) weights, scaled to sum 1."""
        return scaled_weights((self.weight_user, self.weight_project,
                               self.weight_department, self.weight_job))


def scaled_weights(weights):
    """``weights`` divided by their sum (all zero when the sum is not positive)."""
    weights = tuple(weights)
    total = sum(weights)
    if total <= 0:
        return tuple(0.0 for _ in weights)
    return tuple(w / total for w in weights)
