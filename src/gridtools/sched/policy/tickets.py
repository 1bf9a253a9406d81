"""Tickets of running and pending jobs from the three ticket policies.

Running tasks first: each policy computes their tickets over the running
tasks alone (so they keep, and adjust every pass, their share of what is
running). Then the pending tasks, policy by policy in the order the policy
hierarchy gives (``config.ticket_steps``); a dependent policy orders each
user's (or project's, or department's) pending tasks by the tickets the
policies above it gave them. A task's tickets are the sum of the three.
"""

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from gridtools.sched.policy import functional, override, refs as refs_mod, sharereport
from gridtools.sched.policy import sharetree
from gridtools.sched.policy.config import Policy, ticket_steps


class Tickets(NamedTuple):
    """A task's tickets by policy, and its part of all tickets of its kind."""
    stckt: float = 0.0       # share tree
    ftckt: float = 0.0       # functional
    otckt: float = 0.0       # override
    share: float = 0.0       # tickets / tickets of all pending (or all running) tasks

    @property
    def total(self):
        return self.stckt + self.ftckt + self.otckt


#: what a job or task not in the calculation has
NO_TICKETS = Tickets()


@dataclass(frozen=True)
class TicketResult:
    """Tickets per task and per job, and the share tree as monitoring shows it."""
    tasks: Mapping = field(default_factory=dict)    # (job id, task id) -> Tickets
    jobs: Mapping = field(default_factory=dict)     # job id -> Tickets of its first task
    nodes: tuple = ()                               # sharereport.NodeReport, tree order

    def of(self, job_id, task_id=None):
        """Tickets of a task, or of a job (its first pending task, else its first running one)."""
        if task_id is None:
            return self.jobs.get(job_id, NO_TICKETS)
        return self.tasks.get((job_id, task_id), NO_TICKETS)


def compute(jobs, members, config, tree=None, free_slots=None):
    """Tickets of ``jobs`` (PolicyJobs) for ``members`` and the share tree ``tree``."""
    running, pending = refs_mod.build(jobs, members, config, free_slots)
    work = _share_tree(tree, members, config, running + pending)
    counts = refs_mod.Counts(running)
    shares = _running(running, counts, config, work)
    for policy, dependent in ticket_steps(config.policy_hierarchy):
        _pending_step(policy, dependent, running, pending, counts, shares, config, work)
    nodes = ()
    if work is not None:
        _running_share(work, running, config)
        nodes = sharereport.report(work, members, running, config.usage_weights)
    return _result(running, pending, nodes)


def _share_tree(tree, members, config, all_refs):
    if tree is None:
        return None
    work = sharetree.ShareTree(tree, members, config.usage_weights)
    for ref in all_refs:
        ref.node = work.node_for(ref.user, ref.project)
    work.compute_usage()
    return work


def _running(running, counts, config, work):
    shares = None
    if config.weight_tickets_functional > 0:
        shares = functional.running_tickets(running, counts.copy(), config,
                                            config.weight_tickets_functional)
    override.running_tickets(running, counts, config.share_override_tickets)
    return shares


def _running_share(work, running, config):
    """Running tasks' share tree tickets (last: it leaves the tree in the running state)."""
    pool = max(config.weight_tickets_share, 0.0)
    sharetree.running_tickets(work, running, pool, config.compensation_factor)


def _pending_step(policy, dependent, running, pending, counts, shares, config, work):
    if not pending:
        return
    if policy is Policy.OVERRIDE:
        override.pending_tickets(pending, counts.copy(), config.share_override_tickets, dependent)
    elif policy is Policy.FUNCTIONAL and shares is not None:
        state = functional.Shares(counts.copy())
        state.sums = list(shares.sums)
        functional.pending_tickets(pending, state, config, config.weight_tickets_functional,
                                   dependent)
    elif policy is Policy.SHARE_TREE and work is not None and config.weight_tickets_share > 0:
        sharetree.pending_tickets(work, running + pending, config.weight_tickets_share,
                                  config.compensation_factor, dependent)


def _result(running, pending, nodes):
    tasks = {}
    for group in (running, pending):
        totals = [ref.stckt + ref.ftckt + ref.otckt for ref in group]
        total = sum(totals)
        scale = 1.0 / total if total > 0 else 0.0
        for ref, tickets in zip(group, totals):
            tasks[(ref.job.id, ref.task)] = Tickets(ref.stckt, ref.ftckt, ref.otckt,
                                                    tickets * scale)
    jobs = {}
    for ref in pending + running:
        if ref.job.id not in jobs:
            jobs[ref.job.id] = tasks[(ref.job.id, ref.task)]
    return TicketResult(tasks, jobs, nodes)
