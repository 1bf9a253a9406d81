"""Arrays waiting on -hold_jid_ad in the pass's order: tickets, urgency and place.

Grid Engine holds a task of an array that waits with -hold_jid_ad for tasks of another
array that have not finished (its array-dependency hold, MINUS_H_TGT_JA_AD): its
scheduler sorts such tasks with the held ones, and only the pending tasks that nothing
holds, and the running ones, get tickets and urgency and are ordered. An array whose
every pending task waits so is kept back like a held job (no numbers of this pass, after
the others); one partly released takes part with its released tasks alone, as an array
of just those tasks would.

Job 77 is the predecessor array (tasks 1-4), still in the system; ``ad_done`` lists its
finished tasks.
"""

import pytest

from conftest import wait_for
from gridtools.sched.order import order
from qtools import jid_of
from schedkit import reasons, run, snapshot

#: tickets alone order the jobs (no urgency, no POSIX priority)
BY_TICKETS = {"weight_ticket": 1, "weight_urgency": 0, "weight_priority": 0, "weight_waiting_time": 0}
USERS = {"alice": {"fshare": 100}, "bob": {"fshare": 100}}
TREE = ("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\n"
        "id=1\nname=alice\ntype=0\nshares=50\nchildnodes=NONE\n"
        "id=2\nname=bob\ntype=0\nshares=50\nchildnodes=NONE\n")
#: each ticket policy on its own
POLICIES = {
    "functional": {"sched": {**BY_TICKETS, "weight_tickets_functional": 10000, "weight_user": 1},
                   "users": USERS},
    "share tree": {"sched": {**BY_TICKETS, "weight_tickets_share": 10000}, "sharetree": TREE,
                   "users": ["alice", "bob"]},
    "override": {"sched": BY_TICKETS, "users": {"alice": {"oticket": 1000}, "bob": {"oticket": 1000}}},
}

#: job 1: alice's array that waits for 77 task by task; job 2: another of alice's jobs,
#: job 3: bob's
WAITING = {"id": 1, "owner": "alice", "qsub": "-t 1-4", "tasks": [1, 2, 3, 4], "ad_predecessors": [77],
           "submit": 1}
OTHERS = [{"id": 2, "owner": "alice", "submit": 2}, {"id": 3, "owner": "bob", "submit": 3}]


def scenario(policy, jobs, done=(), slots=1, **more):
    return {"hosts": ["h1"], "slots": slots, "live": [77], "ad_done": {77: list(done)},
            **POLICIES[policy], "jobs": jobs, **more}


def ordered_ids(sc):
    return [job.id for job in order(snapshot(sc))[0]]


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_an_array_all_of_whose_tasks_wait_takes_no_tickets_and_no_place(policy):
    """Job 1 waits for 77 with each of its tasks: the others get the tickets and numbers
    they would get without it, it gets none, comes last and starts nothing."""
    decisions, started = run(scenario(policy, [WAITING] + OTHERS))
    alone, started_alone = run(scenario(policy, OTHERS))
    assert 1 not in decisions.order
    assert decisions.order == alone.order
    assert decisions.order[2].tickets[0] > 0
    assert started == started_alone == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ["job dropped because of job dependencies"]
    assert ordered_ids(scenario(policy, [WAITING] + OTHERS)) == [2, 3, 1]


def test_the_owners_other_job_gets_her_share_and_the_slot():
    """Functional tickets: the waiting array's four tasks take no part of alice's share,
    so her job 2 gets more tickets than bob's job 3 and starts (counted, they would
    have left job 2 so few that job 3 went first)."""
    decisions, started = run(scenario("functional", [WAITING] + OTHERS))
    assert decisions.order[2].tickets[0] > decisions.order[3].tickets[0]
    assert started == ["2.1 all.q@h1=1"]


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_a_partly_released_array_counts_its_released_tasks_alone(policy):
    """77.3 has finished: job 1's task 3 may start, tasks 1, 2 and 4 still wait. Every
    job gets the numbers it would get if job 1 were an array of task 3 alone."""
    partly = scenario(policy, [WAITING] + OTHERS, done=[3])
    decisions, started = run(partly)
    just_three = scenario(policy, [dict(WAITING, tasks=[3], ad_predecessors=[])] + OTHERS)
    alone, _started = run(just_three)
    assert decisions.order == alone.order
    assert decisions.order[1].tickets[0] > 0
    assert started == ["1.3 all.q@h1=1"]
    assert ordered_ids(partly) == ordered_ids(just_three)


def test_max_pending_tasks_per_job_counts_the_tasks_nothing_holds():
    """max_pending_tasks_per_job 2: the two tasks counted are the first two that may
    start (3 and 4), not two that wait (for 77, or on a hold of their own); the job's
    numbers are those of an array of tasks 3 and 4."""
    limited = {**BY_TICKETS, "weight_tickets_functional": 10000, "weight_user": 1,
               "max_pending_tasks_per_job": 2}
    free = scenario("functional", [dict(WAITING, tasks=[3, 4], ad_predecessors=[])] + OTHERS, slots=4)
    free["sched"] = limited
    expected, _started = run(free)
    for job in (WAITING, dict(WAITING, ad_predecessors=[], held_tasks=[1, 2])):
        sc = scenario("functional", [job] + OTHERS, done=[3, 4], slots=4)
        sc["sched"] = limited
        decisions, started = run(sc)
        assert decisions.order == expected.order
        assert decisions.order[1].tickets[0] > 0
        assert started[:2] == ["1.3 all.q@h1=1", "1.4 all.q@h1=1"]
        assert ordered_ids(sc) == [1, 3, 2]


def test_urgency_is_normalized_over_the_jobs_that_may_start():
    """No tickets: job 1 asks for 2 slots (urgency 2000), job 2 for one (1000). While
    job 1 waits, job 2 alone spans the urgency range (nurg 0.5); once 77.1 and 77.2 have
    finished, both take part (1 and 0)."""
    jobs = [{"id": 1, "qsub": "-t 1-2 -pe smp 2", "tasks": [1, 2], "ad_predecessors": [77], "submit": 1},
            {"id": 2, "submit": 2}]
    base = {"hosts": ["h1"], "slots": 1, "queue": {"pe_list": "smp"}, "live": [77], "now": 2,
            "jobs": jobs, "sched": {"weight_waiting_time": 0}}
    decisions, started = run(dict(base, ad_done={77: []}))
    assert sorted(decisions.order) == [2]
    assert (decisions.order[2].urgency[0], decisions.order[2].nurg) == (1000.0, 0.5)
    assert started == ["2.1 all.q@h1=1"]
    decisions, _started = run(dict(base, ad_done={77: [1, 2]}))
    assert [(decisions.order[j].urgency[0], decisions.order[j].nurg) for j in (1, 2)] == \
        [(2000.0, 1.0), (1000.0, 0.0)]


def urgency_row(cell, jid):
    """(nurg, urg) of job ``jid`` as qstat -urg shows it, or None."""
    for line in cell.run("qstat", "-urg").stdout.splitlines()[2:]:
        fields = line.split()
        if fields and fields[0] == str(jid):
            return float(fields[2]), float(fields[3])
    return None


def test_qstat_urg_normalizes_without_the_waiting_array(cell, workdir):
    """All of B's tasks wait for A's (held): qstat -urg shows C, the one job that may
    start, alone in the urgency range (nurg 0.50000), not below B's 2000 slots urgency;
    B shows the numbers of a held job."""
    assert cell.run("qmod", "-d", "all.q").returncode == 0        # nothing starts
    first = jid_of(cell.qsub("-h", "-t", "1-2", "-N", "A", "-b", "y", "true", cwd=workdir))
    waiting = jid_of(cell.qsub("-t", "1-2", "-N", "B", "-pe", "smp", "2", "-hold_jid_ad", str(first),
                               "-b", "y", "true", cwd=workdir))
    other = jid_of(cell.qsub("-N", "C", "-b", "y", "true", cwd=workdir))
    row = wait_for(lambda: (urgency_row(cell, other) or (0, 0))[1] >= 1000 and urgency_row(cell, other),
                   timeout=30)
    assert row[0] == 0.5
    assert urgency_row(cell, waiting) == (0.0, 0.0)
