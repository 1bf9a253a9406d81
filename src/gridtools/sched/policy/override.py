"""The override policy: tickets given by hand to users, projects, departments, jobs.

A task gets the override tickets (oticket) of its user, project and
department plus its job's own (qalter -ot). With share_override_tickets
TRUE a member's tickets are divided evenly among its running tasks, and a
pending task gets what it would get if it were the next to run (its
member's tickets divided by the running tasks plus one), the pending
tasks being ranked one by one as the functional policy ranks them; the
total a member hands out stays its oticket. With FALSE every task gets the
member's full tickets, and the more jobs a member has the more override
tickets there are in the system.
"""

from gridtools.sched.policy import greedy


def _members(ref):
    return ((ref.user, "users"), (ref.project, "projects"), (ref.dept, "depts"))


def _full(ref):
    return float(sum(m.oticket for m, _ in _members(ref) if m is not None) + ref.job.oticket)


def running_tickets(running, counts, shared):
    """Override tickets of the running tasks, with ``counts`` of running tasks."""
    for ref in running:
        if not shared:
            ref.otckt = _full(ref)
            continue
        tickets = float(ref.job.oticket)
        for member, table in _members(ref):
            if member is not None and member.oticket:
                tickets += member.oticket / getattr(counts, table)[member.name]
        ref.otckt = tickets


def pending_tickets(pending, counts, shared, dependent):
    """Override tickets of the pending tasks; ``counts`` starts as the running ones."""
    if not shared:
        for ref in pending:
            ref.otckt = _full(ref)
            if dependent:
                ref.tickets += ref.otckt
        return
    cats = greedy.categories(pending, "oticket", "oticket", dependent)
    tables = (counts.users, counts.projects, counts.depts)

    def value(cat):
        tickets = float(cat.job_value)
        for k, oticket, name in cat.holders:
            tickets += oticket / (tables[k][name] + 1)
        return tickets

    def take(cat, ref, tickets):
        ref.otckt = tickets
        counts.add(ref, 1)
        if dependent:
            ref.tickets += tickets

    greedy.pick(cats, value, len(pending), take)
