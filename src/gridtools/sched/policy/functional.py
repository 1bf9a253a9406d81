"""The functional policy: tickets by the shares of users, projects, departments, jobs.

The pool (weight_tickets_functional) is split among four categories by
weight_user, weight_project, weight_department and weight_job (scaled to
sum 1). Within a category a task gets ``its member's shares / the sum of
the active members' shares`` of that part; with share_functional_shares
TRUE a member's shares are divided among its active tasks, so a member's
jobs together get its entitlement; with FALSE every task gets the member's
full shares. The job category uses each job's own shares (-js).

Running tasks: the shares of the running tasks alone, and only categories
in which someone has shares count (their weights are scaled again).

Pending tasks (Grid Engine's pending ranking): all four weights count.
Up to max_functional_jobs_to_schedule times, the task that would get the
most tickets if it were the next to run is chosen (see ``greedy``); it is
counted as running and its tickets are computed with it counted. Tasks
left over get what the first task of their category would have got in the
last round. So with user shares 200 and 100 the first job of the first user
gets the pool's user part as if it ran alone, and the users' jobs come out
in the order 2:1 that their shares ask for.
"""

from gridtools.sched.policy import greedy
from gridtools.sched.policy.config import scaled_weights

#: added to each sum of shares while a pending task is tried (avoids 0 / 0)
TRIAL_EPSILON = 0.001


class Shares:
    """Sums of the active tasks' shares per category, and the active task counts."""
    __slots__ = ("sums", "counts")

    def __init__(self, counts):
        self.sums = [0.0, 0.0, 0.0, 0.0]     # user, project, department, job
        self.counts = counts

    def fork(self):
        """A copy whose sums and counts change independently of these."""
        other = Shares(self.counts.copy())
        other.sums = list(self.sums)
        return other

    def count(self, k, member):
        table = (self.counts.users, self.counts.projects, self.counts.depts)[k]
        return table[member.name]


def _members(ref):
    return (ref.user, ref.project, ref.dept)


def _add_shares(shares, ref, shared, always):
    """A task's shares per category (None: no member); adds them to the sums."""
    parts = []
    for k, member in enumerate(_members(ref)):
        if member is None:
            parts.append(None)
            continue
        count = shares.count(k, member)
        part = member.fshare / count if shared else float(member.fshare)
        if always or count <= 1:
            shares.sums[k] += part
        parts.append(part)
    parts.append(float(ref.job.jobshare))
    shares.sums[3] += ref.job.jobshare
    return parts


def _tickets(parts, sums, weights, pool):
    total = 0.0
    for part, total_shares, weight in zip(parts, sums, weights):
        if part is not None and total_shares:
            total += weight * part * pool / total_shares
    return total


def running_tickets(running, counts, config, pool):
    """Functional tickets of the running tasks; returns their Shares."""
    shares = Shares(counts)
    shared = config.share_functional_shares
    parts = [_add_shares(shares, ref, shared, True) for ref in running]
    configured = config.functional_weights()
    weights = scaled_weights(w if s > 0 else 0.0 for w, s in zip(configured, shares.sums))
    for ref, ref_parts in zip(running, parts):
        ref.ftckt = _tickets(ref_parts, shares.sums, weights, pool)
    return shares


class _Ranking:
    """The state of the pending ranking between rounds."""

    def __init__(self, shares, config, pool, dependent):
        self.shares, self.pool, self.dependent = shares, pool, dependent
        self.shared = config.share_functional_shares
        self.weights = config.functional_weights()
        self.weighted = [w * pool for w in self.weights]
        counts = shares.counts
        self.tables = (counts.users, counts.projects, counts.depts)
        self.before = None
        self._rescale()

    def _rescale(self):
        self.base = [s + TRIAL_EPSILON for s in self.shares.sums]
        self.per_share = [w / b for w, b in zip(self.weighted, self.base)]

    def trial(self, cat):
        """What the first task of ``cat`` would get if it were the next to run."""
        total = 0.0
        if self.shared:
            per_share, tables = self.per_share, self.tables
            for k, fshare, name in cat.holders:
                total += per_share[k] * fshare / (tables[k][name] + 1)
        else:
            weighted, base = self.weighted, self.base
            for k, fshare, _ in cat.holders:
                total += weighted[k] * fshare / (base[k] + fshare)
        if cat.job_value:
            total += self.weighted[3] * cat.job_value / (self.base[3] + cat.job_value)
        return total

    def value(self, cat):
        if self.dependent:
            return self.trial(cat) + cat.refs[cat.pos].tickets
        return self.trial(cat)

    def take(self, cat, ref, _value):
        """Count ``ref`` as running and compute its tickets so."""
        self.before = (list(self.shares.sums), ref)
        self.shares.counts.add(ref, 1)
        parts = _add_shares(self.shares, ref, self.shared, not self.shared)
        ref.ftckt = _tickets(parts, self.shares.sums, self.weights, self.pool)
        if self.dependent:
            ref.tickets += ref.ftckt
        self._rescale()

    def estimate(self, left):
        """Tasks not ranked get what the first of their category got in the last round."""
        if not left or self.before is None:
            return
        self.shares.sums, last = self.before
        self.shares.counts.add(last, -1)
        self._rescale()
        for cat in left:
            tickets = self.trial(cat)
            for ref in cat.rest():
                ref.ftckt = tickets
                if self.dependent:
                    ref.tickets += tickets


def pending_tickets(pending, shares, config, pool, dependent):
    """Functional tickets of the pending tasks, ranked one by one."""
    ranking = _Ranking(shares, config, pool, dependent)
    cats = greedy.categories(pending, "fshare", "jobshare", dependent)
    left = greedy.pick(cats, ranking.value, max(0, config.max_functional_jobs_to_schedule),
                       ranking.take)
    ranking.estimate(left)
