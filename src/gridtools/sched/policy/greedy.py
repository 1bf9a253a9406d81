"""Handing out tickets to pending jobs one at a time, best job first.

The functional policy and the shared override policy rank pending tasks by
asking, again and again, which task would get the most tickets if it were
the next to run; that task is then counted as running, which lowers what
its user's, project's and department's other tasks would get. Tasks alike
in what they belong to (same job shares or tickets, same user, project and
department, counting only members that have any) form a category; within
a category tasks go first come, first served, or by the tickets of the
policies above in the hierarchy when the policy is dependent, so only the
first task of each category has to be looked at.

A task's value only falls as others are picked, so the categories wait in
a heap by their last known value: the top one is valued again and taken if
it still beats the next one's last known value. That picks exactly what
looking at every category each time would, with ties going to the earlier
submission, then the lower job id, then the lower task id.
"""

from heapq import heappop, heappush
from operator import attrgetter


class Category:
    """Pending tasks that belong to the same members with the same job value."""
    __slots__ = ("refs", "pos", "user", "project", "dept", "job_value", "holders")

    def __init__(self, user, project, dept, job_value, amount):
        self.user, self.project, self.dept, self.job_value = user, project, dept, job_value
        # (0 user / 1 project / 2 department, what the member holds, its name)
        self.holders = tuple((k, getattr(m, amount), m.name)
                             for k, m in enumerate((user, project, dept)) if m is not None)
        self.refs = []
        self.pos = 0

    def head(self):
        return self.refs[self.pos]

    def rest(self):
        return self.refs[self.pos:]


def categories(pending, amount, job_amount, dependent):
    """Categories of the pending refs that have anything to get.

    ``amount`` names what a member holds (fshare or oticket),
    ``job_amount`` what the job itself holds.
    """
    groups = {}
    for ref in pending:
        key = (getattr(ref.job, job_amount), id(ref.owners))
        group = groups.get(key)
        if group is None:
            groups[key] = [ref]
        else:
            group.append(ref)
    found = {}
    for (value, _), refs in groups.items():
        members = [m if m is not None and getattr(m, amount) > 0 else None
                   for m in refs[0].owners]
        if value == 0 and members == [None, None, None]:
            continue
        key = (value,) + tuple(m.name if m else None for m in members)
        cat = found.get(key)
        if cat is None:
            cat = found[key] = Category(*members, value, amount)
        cat.refs.extend(refs)
    order = (lambda r: (-r.tickets, r.key)) if dependent else attrgetter("key")
    for cat in found.values():
        cat.refs.sort(key=order)
    return list(found.values())


def pick(cats, value, limit, take):
    """Take up to ``limit`` tasks, best first; return the categories left over.

    ``value(cat)`` is what the first task of ``cat`` would get now;
    ``take(cat, ref, value)`` counts the chosen task as running.
    """
    heap = [(-value(cat), cat.refs[0].key, n, cat) for n, cat in enumerate(cats)]
    heap.sort()
    taken = 0
    while heap and taken < limit:
        _, key, n, cat = heappop(heap)
        fresh = value(cat)
        if heap and (-fresh, key) > heap[0][:2]:
            heappush(heap, (-fresh, key, n, cat))
            continue
        take(cat, cat.head(), fresh)
        cat.pos += 1
        taken += 1
        if cat.pos < len(cat.refs):
            heappush(heap, (-value(cat), cat.refs[cat.pos].key, n, cat))
    return [entry[3] for entry in heap]
