"""What the job-order policies are given: jobs, members and the share tree.

All records are frozen. The caller passes only pending tasks that may be
dispatched now (no holds, no unfinished predecessors, start time reached)
and running tasks that are not suspended; the others take no part in
tickets, urgency or normalization. A ``PolicyJob`` is a pending one-task
job unless told otherwise: a running job has ``pending=()`` and
``running=(1,)``.
"""

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from gridtools.accounting.usage import ZERO, Usage

#: the share tree leaf that stands for every user not named elsewhere
DEFAULT_USER = "default"


@dataclass(frozen=True, slots=True)
class Request:
    """One hard resource request of a job, as urgency weighs it."""
    name: str
    amount: float = 1.0       # numeric amount (ignored for string-valued complexes)
    per_slot: bool = True     # False for a per-job amount (consumable JOB)


@dataclass(frozen=True, slots=True)
class ProjectUsage:
    """A user's usage of jobs under one project."""
    project: str
    usage: Usage = ZERO          # decayed
    long_term: Usage = ZERO      # never decayed
    finished_jobs: float = 0.0   # decayed count of ended tasks


@dataclass(frozen=True, slots=True)
class Member:
    """A user, project or department as the ticket policies see it."""
    name: str
    fshare: int = 0               # functional shares
    oticket: int = 0              # override tickets
    usage: Usage = ZERO           # decayed usage (a user's: jobs without a project)
    long_term: Usage = ZERO       # usage that never decays (shown by share tree reports)
    in_projects: tuple = ()       # a user's ProjectUsage
    finished_jobs: float = 0.0    # decayed count of ended tasks (a user's: without a project)

    def in_project(self, project):
        """A user's ProjectUsage of jobs under ``project``."""
        for entry in self.in_projects:
            if entry.project == project:
                return entry
        return ProjectUsage(project)


@dataclass(frozen=True, slots=True)
class AutoUser:
    """enforce_user auto: an unknown job owner counts as a user created with these."""
    fshare: int = 0      # auto_user_fshare
    oticket: int = 0     # auto_user_oticket


@dataclass(frozen=True)
class Members:
    """Users, projects and departments by name."""
    users: Mapping[str, Member] = field(default_factory=dict)
    projects: Mapping[str, Member] = field(default_factory=dict)
    departments: Mapping[str, Member] = field(default_factory=dict)
    auto_user: AutoUser | None = None

    @classmethod
    def of(cls, users=(), projects=(), departments=(), auto_user=None):
        """Members from iterables of ``Member``."""
        return cls({m.name: m for m in users}, {m.name: m for m in projects},
                   {m.name: m for m in departments}, auto_user)

    def user(self, name):
        """The user ``name``; unknown users exist only with enforce_user auto."""
        member = self.users.get(name)
        if member is None and self.auto_user is not None and name:
            member = Member(name, self.auto_user.fshare, self.auto_user.oticket)
        return member

    def project(self, name):
        return self.projects.get(name) if name else None

    def department(self, name):
        return self.departments.get(name) if name else None


@dataclass(frozen=True, slots=True)
class ShareNode:
    """A node of the share tree."""
    name: str
    shares: int = 0
    children: tuple = ()        # ShareNode
    project: bool = False       # the node names a project (else a user, default or a group)


@dataclass(frozen=True, slots=True)
class PolicyJob:
    """A job as the ticket, urgency and priority policies need it."""
    id: int
    owner: str
    submit_time: float = 0.0
    project: str | None = None
    department: str | None = None
    priority: int = 0                 # POSIX priority, -1023..1024
    jobshare: int = 0                 # functional job shares (-js)
    oticket: int = 0                  # the job's own override tickets
    slots: int = 1                    # slots urgency assumes (a PE's urgency_slots)
    min_slots: int = 1                # lowest slot count a PE job may get
    requests: tuple = ()              # hard Requests
    deadline: float | None = None     # latest start time (-dl)
    deadline_user: bool = False       # the owner is in deadlineusers
    pending: Sequence[int] = (1,)     # ids of pending tasks that may run, in order
    running: tuple = ()               # ids of running tasks (not suspended ones)

    def fcfs(self):
        """First come, first served: earlier submission, then lower id."""
        return (self.submit_time, self.id)
