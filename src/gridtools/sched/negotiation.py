"""The working state of one negotiation cycle (``sched.negotiator.negotiate``).

``Cycle`` holds what changes while the cycle runs: which slots are taken,
what each submitter and group holds, the autoclusters with their match
lists, and the slot classes. ``negotiate_group`` is HTCondor's pie spin
for one group of submitters, ``negotiate_submitter`` one submitter's turn,
``find`` the best slot for one autocluster within the submitter's limits.

What matching each owner's jobs takes is counted in the evaluator's steps against
the owner's budget for the cycle (``sched.evalbudget``: making their autoclusters,
their match lists and the matches). The owner is the user who submitted the job
(``IdleJob.owner``), not the submitter it counts for: a job names its accounting
group itself. Once an owner's jobs took the steps, its other idle jobs are put off
(``Outcome.put_off``): not matched in this cycle, and taken first in the next one.

Floors and ceilings (``condor_userprio -setfloor/-setceiling``) are HTCondor's:
``negotiate_group`` first runs a floor round, one spin of the pie over the submitters
of the group that hold less than their floor, each limited to what takes it up to
its floor; then the fair-share round over all of them. A submitter's ceiling is
checked against what it holds whenever a slot is taken for it (``find``), and its
turn ends once less than the cheapest slot is left below it.
"""

import math

from gridtools.sched import autocluster as acl
from gridtools.sched import groups as grp
from gridtools.sched.evalbudget import Budget, mark
from gridtools.sched.negotiator import (
    DEFAULT_PRIORITY, NO_RANK, Kind, Match, Outcome, Preemption, Submitter, SubmitterReport, Why,
    compiled, holds, job_rank, machine_rank, matches, number_or, rank_value)

_DONE, _RESUME = "done", "resume"
#: a priority given as zero or less counts as this
_SMALLEST_PRIORITY = 1e-6


class _AutoCluster:
    """Jobs of one submitter with equal significant attributes."""

    __slots__ = ("rep", "request", "lists", "why", "limited", "context")

    def __init__(self, rep, context):
        self.rep = rep
        self.request = tuple(max(number_or(rep.eval(a), 0.0), 0.0)
                             for a in ("RequestCpus", "RequestMemory", "RequestDisk"))
        self.lists = {}          # (only-rank mode, group round) -> _MatchList
        self.why = None          # why it found no slot the last time it tried
        self.limited = False     # the submitter's limit refused a candidate then
        self.context = context   # the group round its request ad tells (Cycle.negotiating)

    def enter(self, context):
        """Tell the request which group round it is matched in: its group, or the root
        group's round and whether that one regroups (SubmitterNegotiatingGroup,
        SubmitterAutoregroup, which PREEMPTION_REQUIREMENTS may look at)."""
        if context != self.context:
            self.rep["SubmitterNegotiatingGroup"], self.rep["SubmitterAutoregroup"] = context
            self.context = context


class _MatchList:
    """The candidate slots of one autocluster, best first, grouped by slot class."""

    __slots__ = ("entries", "start", "policy", "limit")

    def __init__(self, entries, policy):
        self.entries = entries   # [sort key, kind, member slot indices, position], best first
        self.start = 0
        self.policy = policy     # candidates PREEMPTION_REQUIREMENTS refused
        self.limit = 0           # candidates the submitter's limit refused, last search

    def pop(self, cycle, ac, permit):
        """(slot index, kind, cost) of the best candidate ``permit(kind, cost, slot index)``
        allows."""
        self.limit = 0
        taken = cycle.taken
        for n in range(self.start, len(self.entries)):
            entry = self.entries[n]
            members, pos = entry[2], entry[3]
            while pos < len(members) and members[pos] in taken:
                pos += 1
            entry[3] = pos
            if pos == len(members):
                if n == self.start:
                    self.start += 1
                continue
            found = self._from_entry(cycle, ac, entry, permit)
            if found is not None:
                return found
        return None

    def _from_entry(self, cycle, ac, entry, permit):
        kind, members = entry[1], entry[2]
        for i in members[entry[3]:]:
            if i in cycle.taken or not cycle.still_fits(i, ac) or not cycle.limits_allow(i):
                continue
            cost = cycle.cost(i, ac)
            if permit(kind, cost, i):
                return i, kind, cost
            if i not in cycle.partitionable:       # the whole class costs the same
                self.limit += sum(1 for j in members[entry[3]:] if j not in cycle.taken)
                return None
            self.limit += 1
        return None


class Cycle:
    """One negotiation cycle over immutable inputs."""

    def __init__(self, submitters, slots, priorities, config, now, limits=None, budget=None,
                 floors=None, ceilings=None):
        self.config, self.now, self.priorities = config, now, priorities
        self.floors = {n: float(v) for n, v in (floors or {}).items() if v > 0}
        self.ceilings = {n: float(v) for n, v in (ceilings or {}).items() if v >= 0}
        self.capped = False                          # the ceiling refused a candidate (``find``)
        self.budget = budget if budget is not None else Budget(0)
        self.gate, self.current = limits, None       # (concurrency limits; the job being matched)
        self.preq = compiled(config.preemption_requirements)
        self.prank = compiled(config.preemption_rank)
        self.pre_rank = compiled(config.pre_job_rank)
        self.post_rank = compiled(config.post_job_rank)
        self.usage, self.group_usage, self.stopped = {}, {}, {}
        self.root = grp.build(config.groups)
        self._group_cache = {}
        #: (SubmitterNegotiatingGroup, SubmitterAutoregroup) of the group round running now
        self.negotiating = (grp.ROOT, False)
        weights = [self._weight(s.ad) for s in slots]
        self.total_weight = sum(weights)               # the whole pool, trimmed slots too
        if config.groups.enabled:                      # (quotas for RemoteGroupQuota)
            grp.assign_quotas(self.root, self.total_weight)
        self.min_weight = min(weights, default=1.0)
        for s, weight in zip(slots, weights):
            if s.claim is not None:
                self.charge(s.claim.user, weight)
        if not config.consider_preemption:             # only unclaimed slots are handed out
            slots = [s for s in slots if s.claim is None or s.ad.eval("PartitionableSlot") is True]
        self.slots = slots
        self.weights = [self._weight(s.ad) for s in slots]
        self.outcome = Outcome()
        self.taken, self.dirty, self.matched = set(), set(), {}
        self.partitionable = {i for i, s in enumerate(slots) if s.ad.eval("PartitionableSlot") is True}
        #: the least a match costs: a slot's weight, or one CPU of a partitionable slot
        self.least_cost = min(self.min_weight, 1.0) if self.partitionable else self.min_weight
        self.submitters = self._with_running(submitters)
        self.ads = [self._slot_ad(s) for s in slots]
        self._autoclusters()
        self._classes()

    # ------------------------------------------------------------ setup
    @staticmethod
    def _weight(ad):
        for attr in ("SlotWeight", "Cpus"):
            value = ad.eval(attr)
            if type(value) in (int, float) and value > 0:
                return float(value)
        return 1.0

    def _with_running(self, submitters):
        """The submitters, plus one without idle jobs for each user that only runs jobs
        (they count when the pool is shared out)."""
        names = {s.name for s in submitters}
        extra = [Submitter(u) for u in sorted(self.usage) if u not in names]
        return list(submitters) + extra

    def prio(self, name):
        """A submitter's effective priority (never zero: shares divide by it)."""
        return max(self.priorities.get(name, DEFAULT_PRIORITY), _SMALLEST_PRIORITY)

    def group_of(self, name):
        group = self._group_cache.get(name)
        if group is None:
            group = self._group_cache[name] = grp.group_of(self.root, name)
        return group

    def _slot_ad(self, slot):
        """A claimed slot's ad with what the negotiator tells about its current user."""
        claim = slot.claim
        if claim is None:
            return slot.ad
        ad = slot.ad.copy()
        ad["CurrentRank"] = float(claim.rank)
        ad["RemoteUserPrio"] = float(self.prio(claim.user))
        ad["RemoteUserResourcesInUse"] = self.usage.get(claim.user, 0.0)
        ad["RemoteUserFloor"] = int(self.floors.get(claim.user, 0))
        if self.config.groups.enabled:             # (users of the root group too: "<none>")
            group = self.group_of(claim.user)
            ad["RemoteGroup"] = group.name
            ad["RemoteGroupResourcesInUse"] = self.group_usage.get(group.name, 0.0)
            ad["RemoteGroupQuota"] = float(self.group_quota(group))
        return ad

    def group_quota(self, group):
        """A group's quota as the negotiator publishes it (SubmitterGroupQuota,
        RemoteGroupQuota): its effective quota; with autoregroup the root group's is
        the whole pool."""
        if group is self.root and self.root.spec.autoregroup:
            return self.total_weight
        return group.quota

    def _autoclusters(self):
        extra = [e for e in (self.preq, self.prank, self.pre_rank, self.post_rank) if e is not None]
        self.sig = acl.Significance(self.ads, extra)
        self.ac_of, self.pending = {}, {}
        budget = self.budget
        for sub in self.submitters:
            by_key = {}
            for job in sub.jobs:
                names = self.sig.job_names(job.ad)
                key = acl.job_key(job.ad, names)
                if self.gate is not None:       # (jobs the gate tells apart never share a match)
                    key = (key, self.gate.kind(job.id))
                ac = by_key.get(key)
                if ac is None:              # (charged, but no match yet: see sched.evalbudget)
                    since = mark()
                    ac = by_key[key] = _AutoCluster(self._request(job.ad, sub.name), self.negotiating)
                    budget.charge(job.owner or sub.name, since, matching=False)
                self.ac_of[job.id] = ac
            self.pending[sub.name] = list(budget.first(sub.jobs, _job_id))

    def _request(self, ad, name):
        """An autocluster's representative: a job ad with its submitter's numbers."""
        rep = ad.copy()
        prio = float(self.prio(name))
        rep["SubmittorPrio"] = rep["SubmitterUserPrio"] = prio
        rep["SubmitterUserResourcesInUse"] = self.usage.get(name, 0.0)
        rep["SubmitterNegotiatingGroup"], rep["SubmitterAutoregroup"] = self.negotiating
        if self.config.groups.enabled:             # (users of the root group too: "<none>")
            group = self.group_of(name)
            rep["SubmitterGroup"] = group.name
            rep["SubmitterGroupResourcesInUse"] = self.group_usage.get(group.name, 0.0)
            rep["SubmitterGroupQuota"] = float(self.group_quota(group))
        if rep.lookup("CurrentTime") is None:
            rep["CurrentTime"] = int(self.now)
        return rep

    def _classes(self):
        names = tuple(sorted(self.sig.slot_side))
        by_key, self.classes = {}, []
        for i, ad in enumerate(self.ads):
            key = ("pslot", i) if i in self.partitionable else acl.slot_key(ad, names)
            cid = by_key.get(key)
            if cid is None:
                cid = by_key[key] = len(self.classes)
                self.classes.append([])
            self.classes[cid].append(i)

    # ------------------------------------------------------------ bookkeeping
    def charge(self, name, amount):
        self.usage[name] = self.usage.get(name, 0.0) + amount
        group = self.group_of(name)
        self.group_usage[group.name] = self.group_usage.get(group.name, 0.0) + amount

    def cost(self, i, ac):
        return max(ac.request[0], 1.0) if i in self.partitionable else self.weights[i]

    def limits_allow(self, i):
        """The concurrency limits of the job being matched let it take slot ``i``."""
        return self.gate is None or self.current is None or self.gate.allows(self.current.id, self.slots[i].name)

    def still_fits(self, i, ac):
        """A partitionable slot that was carved this cycle still matches the job."""
        return i not in self.dirty or matches(ac.rep, self.ads[i])

    def idle_jobs(self, sub):
        return [j for j in self.pending.get(sub.name, ()) if j.id not in self.matched]

    def slots_left(self):
        return len(self.taken) < len(self.slots)

    # ------------------------------------------------------------ the cycle
    def run(self):
        self._resume()
        if self.config.groups.enabled:
            grp.negotiate_all(self)
        else:
            self.negotiate_group(self.submitters, math.inf, None)
        out = self.outcome
        out.put_off = list(self.budget.first(out.put_off, _same))
        return self._finish()

    def _resume(self):
        """The match lists of the jobs the last cycle put off (``budget.before``) built
        first, in that order, while their owners' steps last: an owner's steps go first
        to its jobs put off, whatever submitters they count for and whatever the order
        of these, and its other jobs wait (``negotiate_submitter``), so that each pass
        goes on where the last one stopped. (A list built early is the one the job's
        first match would build: no slot is taken yet, and taken ones are passed over.)"""
        budget = self.budget
        if not budget.before or budget.limit <= 0:
            return
        where = {job.id: (sub, job) for sub in self.submitters for job in sub.jobs}
        for proc in budget.before:
            sub, job = where.get(proc, (None, None))
            if job is None:
                continue
            ac, owner = self.ac_of[job.id], job.owner or sub.name
            context = self._first_round(sub)
            if (False, context) in ac.lists or budget.spent_out(owner):
                continue
            since = mark()
            ac.enter(context)
            ac.lists[(False, context)] = self._match_list(ac, sub, False)
            budget.charge(owner, since)

    def _first_round(self, sub):
        """The group round a submitter first negotiates in: its own group's (the root
        group's regroups when any group autoregroups)."""
        if not self.config.groups.enabled:
            return (grp.ROOT, False)
        group = self.group_of(sub.name)
        return (group.name, bool(group is self.root and self.root.spec.autoregroup))

    def normalization(self, subs):
        """(worst priority, sum of worst/priority) over the submitters of a spin."""
        prios = {s.name: self.prio(s.name) for s in subs}
        worst = max(prios.values())
        return worst, sum(worst / p for p in prios.values())

    def limits(self, sub, norm, total, quota, group, group_used, floor=False):
        """(limit, limit for unclaimed slots, share) of a submitter in this spin: its share
        of the pool (in inverse proportion to its priority) less what it holds; in a floor
        round, at most what takes it up to its floor."""
        worst, normal = norm
        share = worst / (self.prio(sub.name) * normal)
        limit = max(share * total - self.usage.get(sub.name, 0.0), 0.0)
        unclaimed = limit
        if group is not None:
            unclaimed = min(limit, max(quota - group_used, 0.0))
        if not self.config.consider_preemption:
            limit = unclaimed
        if floor:
            left = max(self.floors.get(sub.name, 0.0) - self.usage.get(sub.name, 0.0), 0.0)
            limit, unclaimed = min(limit, left), min(unclaimed, left)
        return limit, unclaimed, share

    def negotiate_group(self, subs, quota, group):
        """HTCondor's pie spin over the submitters of one group (``group`` None: no quota),
        after a floor round for those of them below their floor."""
        subs = list(subs)
        members = list(subs)
        total = min(self.total_weight, quota)
        if self.floors:
            self._floor_round(subs, total, quota, group)
        self._spins(subs, total, quota, group)
        # a group that ends the cycle at its quota stops its submitters for that, whether
        # it reached the quota in this cycle or came to it there (a first spin that hands
        # out nothing ends the spins before they look at the quota)
        if group is not None and self.group_usage.get(group.name, 0.0) >= quota:
            self._stop_all([s for s in members if self.stopped.get(s.name) is Why.SUBMITTER_LIMIT],
                           Why.GROUP_QUOTA)

    def _spins(self, subs, total, quota, group):
        spin = 0
        while subs:
            spin += 1
            ignore = spin == 1 and self.config.consider_preemption
            group_used = self.group_usage.get(group.name, 0.0) if group is not None else 0.0
            if not ignore and group is not None and group_used >= quota:
                self._stop_all(subs, Why.GROUP_QUOTA)
                break
            if not self.config.consider_preemption:
                subs = [s for s in subs if self.idle_jobs(s)]
                if not subs:
                    break
            pie = self._spin_setup(subs, spin, total, quota, group, group_used)
            if not self.config.consider_preemption and pie <= 0:
                break
            pie_before, count_before = pie, len(subs)
            subs, pie = self._spin(subs, spin, total, quota, group, group_used, pie)
            if not ((pie < pie_before or len(subs) < count_before) and self.slots_left()):
                break

    def _floor_round(self, subs, total, quota, group):
        """One spin over the submitters that hold less than their floor, in priority order,
        each limited to what takes it up to its floor (and to its share among them)."""
        below = [s for s in subs if self.usage.get(s.name, 0.0) < self.floors.get(s.name, 0.0)]
        if not below or not self.slots_left():
            return
        group_used = self.group_usage.get(group.name, 0.0) if group is not None else 0.0
        if not self.config.consider_preemption:
            below = [s for s in below if self.idle_jobs(s)]
            if not below:
                return
        pie = self._spin_setup(below, 1, total, quota, group, group_used, floor=True)
        if not self.config.consider_preemption and pie <= 0:
            return
        self._spin(below, 1, total, quota, group, group_used, pie, floor=True)
        for s in below:             # (the fair-share round decides whether its share stops it)
            if self.stopped.get(s.name) is Why.SUBMITTER_LIMIT:
                del self.stopped[s.name]

    def _spin_setup(self, subs, spin, total, quota, group, group_used, floor=False):
        """The pie of this spin; on the first spin, the submitters in priority order (the
        shares of a floor round are not reported)."""
        pie, starvation = 0.0, {}
        norm = self.normalization(subs)
        for s in subs:
            limit, _unclaimed, share = self.limits(s, norm, total, quota, group, group_used)
            used = self.usage.get(s.name, 0.0)
            starvation[s.name] = used / (used + limit) if used + limit > 0 else math.inf
            pie += limit
            if spin == 1 and not floor and s.name not in self.outcome.submitters:
                self.outcome.submitters[s.name] = SubmitterReport(s.name, self.prio(s.name), share, used)
        if spin == 1:
            subs.sort(key=lambda s: (self.prio(s.name), starvation[s.name]))
        return pie

    def _spin(self, subs, spin, total, quota, group, group_used, pie, floor=False):
        ignore = spin == 1 and self.config.consider_preemption
        keep = []
        norm = self.normalization(subs)
        for n, s in enumerate(subs):
            if not ignore and group is not None and self.group_usage.get(group.name, 0.0) >= quota:
                self._stop_all(subs[n:], Why.GROUP_QUOTA)
                keep.extend(subs[n:])
                break
            limit, unclaimed, _share = self.limits(s, norm, total, quota, group, group_used, floor)
            limit = min(limit, pie)
            if not self.idle_jobs(s):
                result = _DONE
            elif (limit < self.min_weight or pie < self.min_weight) and spin > 1:
                result = _RESUME
            else:
                result, pie = self.negotiate_submitter(s, limit, unclaimed, ignore, pie)
            if result == _RESUME:
                keep.append(s)
        return keep, pie

    def _stop_all(self, subs, why):
        for s in subs:
            self.stopped[s.name] = why

    def negotiate_submitter(self, sub, limit, unclaimed, ignore, pie):
        """One submitter's turn: its idle jobs in order, within its limits and its ceiling."""
        if self.at_ceiling(sub):
            self.stopped[sub.name] = Why.SUBMITTER_CEILING
            return _DONE, pie
        used = used_new = 0.0
        only_rank = limited = False
        tried, later = set(), []
        budget = self.budget
        for job in self.idle_jobs(sub):
            ac = self.ac_of[job.id]
            if id(ac) in tried:
                continue
            if used >= limit:
                if not ignore:
                    self._put_off(sub, [j for j in later if id(self.ac_of[j.id]) not in tried])
                    self.stopped[sub.name] = Why.SUBMITTER_LIMIT
                    return _RESUME, pie
                only_rank = True
            owner = job.owner or sub.name
            if budget.spent_out(owner) and (only_rank, self.negotiating) not in ac.lists:
                later.append(job)           # (a match list built is matched from: see _resume)
                continue
            self.current = job
            since = mark()
            found = self.find(ac, sub, only_rank, used, used_new, limit, unclaimed)
            if found is None:
                budget.charge(owner, since)
                tried.add(id(ac))
                limited = limited or ac.limited
                continue
            i, kind, cost = found
            self.take(job, sub, ac, i, kind, cost)
            budget.charge(owner, since)
            used += cost
            used_new += cost if kind is Kind.NEW else 0.0
            pie -= cost
            if self.at_ceiling(sub):
                self._put_off(sub, [j for j in later if id(self.ac_of[j.id]) not in tried])
                self.stopped[sub.name] = Why.SUBMITTER_CEILING
                return _DONE, pie
        self._put_off(sub, [job for job in later if id(self.ac_of[job.id]) not in tried])
        if used >= limit or limited:
            self.stopped[sub.name] = Why.SUBMITTER_LIMIT
            return _RESUME, pie
        self.stopped.pop(sub.name, None)
        return _DONE, pie

    def at_ceiling(self, sub):
        """The submitter has a ceiling and less than the cheapest match is left below it."""
        ceiling = self.ceilings.get(sub.name)
        return ceiling is not None and ceiling - self.usage.get(sub.name, 0.0) < self.least_cost

    def _put_off(self, sub, jobs):
        """Put off the matching of a submitter's idle ``jobs`` (in order): their owners'
        budgets of steps for the cycle are spent (``sched.evalbudget``)."""
        if not jobs:
            return
        gone = {job.id for job in jobs}
        self.outcome.put_off.extend(job.id for job in jobs)
        self.pending[sub.name] = [job for job in self.pending[sub.name] if job.id not in gone]
        self.stopped.pop(sub.name, None)

    def find(self, ac, sub, only_rank, used, used_new, limit, unclaimed):
        """The best slot for an autocluster that the submitter's limits allow, or None
        (its reason then in ``ac.why``; ``ac.limited`` tells whether the submitter's limit
        refused a candidate, whatever the reason given: the submitter then goes on in the
        next spin, as HTCondor's submitterLimit rejections do)."""
        key = (only_rank, self.negotiating)
        ac.enter(self.negotiating)
        mlist = ac.lists.get(key)
        if mlist is None:
            mlist = ac.lists[key] = self._match_list(ac, sub, only_rank)

        refused = []

        def permit(kind, cost, _i):
            if kind is Kind.RANK:
                return True
            spent, allowed = (used, limit) if kind is Kind.PRIORITY else (used_new, unclaimed)
            if spent + cost <= allowed or (spent <= 0 < allowed):
                return True
            refused.append(kind)
            return False
        ceiling = self.ceilings.get(sub.name)
        if ceiling is not None:
            permit = self._under_ceiling(sub.name, ceiling, permit)
        self.capped = False
        found = mlist.pop(self, ac, permit)
        ac.limited = found is None and (only_rank or bool(refused))
        if found is None:
            ac.why = Why.PREEMPTION_REQUIREMENTS if mlist.policy else \
                Why.SUBMITTER_CEILING if self.capped else \
                Why.SUBMITTER_LIMIT if mlist.limit or only_rank else Why.NO_MATCH
        return found

    def _under_ceiling(self, name, ceiling, permit):
        """``permit`` that also refuses a slot that would take submitter ``name`` over its
        ceiling (what the slot's job of the same submitter holds is given back)."""
        def capped(kind, cost, i):
            held = self.usage.get(name, 0.0)
            claim = self.slots[i].claim if kind is not Kind.NEW else None
            if claim is not None and claim.user == name:
                held -= self.weights[i]
            if held + cost > ceiling:
                self.capped = True
                return False
            return permit(kind, cost, i)
        return capped

    def _match_list(self, ac, sub, only_rank):
        entries, refused = [], 0
        for members in self.classes:
            live = [i for i in members if i not in self.taken]
            if not live:
                continue
            first = live[0]
            ranks = self._ranks(ac, first)
            if ranks is None:
                continue
            kind, prank = self._preemption(ac, sub, first, ranks[3], only_rank)
            if kind is None:
                refused += len(live) if prank == "policy" else 0
                continue
            entries.append([(ranks[0], ranks[1], ranks[2], int(kind), prank), kind, live, 0])
        entries.sort(key=lambda e: e[0], reverse=True)
        return _MatchList(entries, refused)

    def _ranks(self, ac, i):
        """(pre-job rank, job's Rank, post-job rank, slot's Rank of the job), or None."""
        ad = self.ads[i]
        if not matches(ac.rep, ad):
            return None
        return (rank_value(self.pre_rank, ad, ac.rep), job_rank(ac.rep, ad),
                rank_value(self.post_rank, ad, ac.rep), machine_rank(ad, ac.rep))

    def _preemption(self, ac, sub, i, slot_rank, only_rank):
        """(Kind, PREEMPTION_RANK) for taking slot ``i``; (None, "policy"/"") when it may not."""
        claim = self.slots[i].claim
        if claim is None:
            return (None, "") if only_rank else (Kind.NEW, NO_RANK)
        ad = self.ads[i]
        if slot_rank > claim.rank:
            return Kind.RANK, rank_value(self.prank, ad, ac.rep)
        if only_rank or claim.user == sub.name:
            return None, ""
        if not holds(self.preq, ad, ac.rep):
            return None, "policy"
        if not slot_rank >= claim.rank:
            return None, ""
        return Kind.PRIORITY, rank_value(self.prank, ad, ac.rep)

    def take(self, job, sub, ac, i, kind, cost):
        slot = self.slots[i]
        claim = slot.claim if kind is not Kind.NEW else None
        carved = ()
        if i in self.partitionable:
            carved = self._carve(i, ac)
        else:
            self.taken.add(i)
        group = self.group_of(sub.name).name if self.config.groups.enabled else ""
        match = Match(job.id, sub.name, slot.name, kind, claim, cost, carved, *self.negotiating, group)
        self.matched[job.id] = match
        if self.gate is not None:
            self.gate.take(job.id, slot.name)
        self.outcome.matches.append(match)
        if claim is not None:
            self.outcome.preemptions.append(Preemption(slot.name, claim, kind, job.id))
            self.charge(claim.user, -self.weights[i])
        self.charge(sub.name, cost)

    def _carve(self, i, ac):
        """Take a job's request out of a partitionable slot; it stays while cpus are left
        (the slot's other resources, its MachineResources besides CPUs, memory and disk,
        are taken too: GPUs, ...)."""
        cpus, memory, disk = (_whole(v) for v in ac.request)
        cpus = max(cpus, 1)
        ad = self.ads[i].copy()
        left = {}
        amounts = [("Cpus", cpus), ("Memory", memory), ("Disk", disk)]
        named = ad.eval("MachineResources")
        for name in (named.split() if isinstance(named, str) else ()):
            if name.lower() not in ("cpus", "memory", "disk"):
                amounts.append((name, _whole(max(number_or(ac.rep.eval("Request" + name), 0.0), 0.0))))
        for attr, amount in amounts:
            left[attr] = number_or(ad.eval(attr), 0) - amount
            ad[attr] = int(left[attr])
        self.ads[i] = ad
        self.dirty.add(i)
        if left["Cpus"] <= 0 or any(v < 0 for v in left.values()):
            self.taken.add(i)
        return cpus, memory, disk

    def _finish(self):
        out = self.outcome
        for sub in self.submitters:
            stopped = self.stopped.get(sub.name)
            for job in self.idle_jobs(sub):
                why = self.ac_of[job.id].why
                if stopped in (Why.GROUP_QUOTA, Why.SUBMITTER_CEILING) and why is not Why.NO_MATCH:
                    why = stopped                  # its group was at its quota, or it at its ceiling
                out.rejected[job.id] = why or stopped or Why.NO_MATCH
        for name, report in list(out.submitters.items()):
            out.submitters[name] = SubmitterReport(name, report.priority, report.share,
                                                   self.usage.get(name, 0.0))
        out.groups = list(self.root.walk()) if self.config.groups.enabled else []
        return out


def _job_id(job):
    return job.id


def _same(item):
    return item


#: the most a request is taken for (an infinite one takes all there is, and more)
MOST = 1 << 62


def _whole(amount):
    """A request's amount rounded up to a whole number: NaN is 0, more than MOST
    (infinity) is MOST."""
    if amount != amount:
        return 0
    return MOST if amount > MOST else int(math.ceil(amount))
