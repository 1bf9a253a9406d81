"""One working record per task taking part in a ticket calculation.

Every running task, and the first pending tasks of each job (at most
max_pending_tasks_per_job, and at most one more than the free slots when
those are known), becomes a ``Ref``: the job, the task, the members it
belongs to, its share tree node and the tickets each policy gives it.
``tickets`` is the running sum of the dependent policies (those of the
policy hierarchy) that later dependent policies order jobs by.
"""

from collections import Counter


class Ref:
    """A task in the ticket calculation (mutable working state)."""
    __slots__ = ("job", "task", "queued", "user", "project", "dept", "node",
                 "stckt", "ftckt", "otckt", "tickets", "key")

    def __init__(self, job, task, queued, members):
        self.job = job
        self.task = task
        self.queued = queued
        self.user = members.user(job.owner)
        self.project = members.project(job.project)
        self.dept = members.department(job.department)
        self.node = None
        self.stckt = self.ftckt = self.otckt = self.tickets = 0.0
        self.key = (job.submit_time, job.id, task)      # first come, first served

    @property
    def total(self):
        return self.stckt + self.ftckt + self.otckt


def pending_limit(max_pending_tasks, free_slots):
    """How many pending tasks of one job are considered."""
    limit = max(0, int(max_pending_tasks))
    if free_slots is not None:
        limit = min(limit, max(0, int(free_slots)) + 1)
    return limit


def build(jobs, members, config, free_slots=None):
    """(running refs, pending refs) for ``jobs``."""
    limit = pending_limit(config.max_pending_tasks_per_job, free_slots)
    running, pending = [], []
    for job in jobs:
        running.extend(Ref(job, task, False, members) for task in job.running)
        pending.extend(Ref(job, task, True, members) for task in job.pending[:limit])
    return running, pending


class Counts:
    """Active jobs per user, project and department (Grid Engine's job counts)."""
    __slots__ = ("users", "projects", "depts")

    def __init__(self, refs=()):
        self.users, self.projects, self.depts = Counter(), Counter(), Counter()
        for ref in refs:
            self.add(ref, 1)

    def add(self, ref, step):
        if ref.user is not None:
            self.users[ref.user.name] += step
        if ref.project is not None:
            self.projects[ref.project.name] += step
        if ref.dept is not None:
            self.depts[ref.dept.name] += step

    def copy(self):
        other = Counts()
        other.users, other.projects, other.depts = (self.users.copy(), self.projects.copy(),
                                                    self.depts.copy())
        return other
