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
    """Tickets of ``jobs`` (PolicyJobs) for ``members`` and the share tree ``tree``.

    ``free_slots``, when known, limits the pending tasks of an array job
    that take part to one more than there are free slots.
    """
    calc = _Calculation(jobs, members, config, tree, free_slots)
    calc.running_tickets()
    for policy, dependent in ticket_steps(config.policy_hierarchy):
        calc.pending_tickets(policy, dependent)
    nodes = calc.share_tree_report()
    return _result(calc.running, calc.pending, nodes)


class _Calculation:
    """The tasks of one ticket calculation and what the policies share."""

    def __init__(self, jobs, members, config, tree, free_slots):
        self.config, self.members = config, members
        self.running, self.pending = refs_mod.build(jobs, members, config, free_slots)
        self.counts = refs_mod.Counts(self.running)
        self.shares = None
        self.tree = None
        if tree is not None:
            self.tree = sharetree.ShareTree(tree, members, config.usage_weights)
            for ref in self.running + self.pending:
                ref.node = self.tree.node_for(ref.user, ref.project)
            self.tree.compute_usage()

    def running_tickets(self):
        """Functional and override tickets of the running tasks (share tree: see report)."""
        config = self.config
        if config.weight_tickets_functional > 0:
            self.shares = functional.running_tickets(self.running, self.counts, config,
                                                     config.weight_tickets_functional)
        override.running_tickets(self.running, self.counts, config.share_override_tickets)

    def pending_tickets(self, policy, dependent):
        config = self.config
        if not self.pending:
            return
        if policy is Policy.OVERRIDE:
            override.pending_tickets(self.pending, self.counts.copy(),
                                     config.share_override_tickets, dependent)
        elif policy is Policy.FUNCTIONAL and self.shares is not None:
            functional.pending_tickets(self.pending, self.shares.fork(), config,
                                       config.weight_tickets_functional, dependent)
        elif (policy is Policy.SHARE_TREE and self.tree is not None
              and config.weight_tickets_share > 0):
            sharetree.pending_tickets(self.tree, self.running + self.pending,
                                      config.weight_tickets_share,
                                      config.compensation_factor, dependent)

    def share_tree_report(self):
        """Running tasks' share tree tickets, and the tree in that state, node by node.

        Comes last: it leaves the working tree counting the running tasks only.
        """
        if self.tree is None:
            return ()
        sharetree.running_tickets(self.tree, self.running,
                                  max(self.config.weight_tickets_share, 0.0),
                                  self.config.compensation_factor)
        return sharereport.report(self.tree, self.members, self.running,
                                  self.config.usage_weights)


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
