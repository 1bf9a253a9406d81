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
                 "owners", "stckt", "ftckt", "otckt", "tickets", "key", "sort", "shr")

    def __init__(self, job, task, queued, owners):
        self.job = job
        self.task = task
        self.queued = queued
        self.owners = owners                # (user, project, department), shared by many refs
        self.user, self.project, self.dept = owners
        self.node = None
        self.stckt = self.ftckt = self.otckt = self.tickets = self.sort = self.shr = 0.0
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
    found = {}
    for job in jobs:
        names = (job.owner, job.project, job.department)
        owners = found.get(names)
        if owners is None:
            owners = found[names] = (members.user(job.owner), members.project(job.project),
                                     members.department(job.department))
        for task in job.running:
            running.append(Ref(job, task, False, owners))
        for task in job.pending[:limit]:
            pending.append(Ref(job, task, True, owners))
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
