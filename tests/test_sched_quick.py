"""The quick pass (sched.cycle.quick_cycle): after a full pass whose order was stable,
a pass that follows ends and starts takes the jobs in the remembered order, stops once
the queues are full, and decides what a full pass would."""

from gridtools.sched.cycle import cycle, quick_cycle
from schedkit import reasons, snapshot, starts

JOBS = [{"id": n} for n in range(1, 9)]


def scenario(jobs=JOBS, running=(), now=1000.0, **extra):
    return {"hosts": ["h1"], "slots": 2, "jobs": list(jobs), "running": list(running), "now": now, **extra}


def quick(sc, memo):
    snap = snapshot(sc)
    return quick_cycle(snap, memo, {j.id: j for j in snap.jobs})


def test_a_stable_order_is_remembered_and_reused_after_starts_and_ends():
    full = cycle(snapshot(scenario()))
    assert starts(full) == ["1.1 all.q@h1=1", "2.1 all.q@h1=1"]
    assert full.memo is not None and full.memo.ids[:3] == [1, 2, 3]
    # job 1 ended, job 2 still runs: one slot is free
    later = scenario(JOBS[2:], running=[{"job": 2, "granted": "all.q@h1=1"}], now=1001.0)
    decisions = quick(later, full.memo)
    assert starts(decisions) == starts(cycle(snapshot(later))) == ["3.1 all.q@h1=1"]
    assert decisions.examined == (3,)                  # it stopped once the queue was full
    assert full.memo.start == 2                         # jobs 1 and 2 left the pending list


def test_a_pass_with_the_queues_full_looks_at_no_job():
    full = cycle(snapshot(scenario()))
    assert "queue instance \"all.q@h1\" dropped because it is full" in reasons(full, 5)
    busy = scenario(JOBS[2:], running=[{"job": 1, "granted": "all.q@h1=1"},
                                       {"job": 2, "granted": "all.q@h1=1"}])
    decisions = quick(busy, full.memo)
    assert starts(decisions) == [] and decisions.examined == () and decisions.reasons == {}


def test_a_job_the_queue_cannot_take_is_looked_past_until_the_queue_is_full():
    jobs = [{"id": 1, "qsub": "-q nosuch.q"}] + [{"id": n} for n in range(2, 6)]
    full = cycle(snapshot(scenario(jobs)))
    assert starts(full) == ["2.1 all.q@h1=1", "3.1 all.q@h1=1"]
    later = scenario([jobs[0]] + jobs[3:], running=[{"job": 3, "granted": "all.q@h1=1"}])
    decisions = quick(later, full.memo)
    assert starts(decisions) == ["4.1 all.q@h1=1"]
    assert decisions.examined == (1, 4)
    assert reasons(decisions, 1) == reasons(cycle(snapshot(later)), 1) != []


def test_an_order_by_priority_is_not_remembered():
    jobs = [{"id": 1, "qsub": "-p -100"}, {"id": 2}, {"id": 3}]
    assert cycle(snapshot(scenario(jobs, sched={"weight_priority": 1}))).memo is None


def test_an_order_by_waiting_time_alone_is_remembered():
    """Waiting time adds the same to every job as time passes: the order holds."""
    jobs = [{"id": 1, "submit": 3}, {"id": 2, "submit": 1, "qsub": "-p -100"}, {"id": 3, "submit": 2}]
    full = cycle(snapshot(scenario(jobs)))
    assert full.memo is not None and full.memo.ids == [2, 3, 1]


def test_jobs_that_a_full_queue_does_not_settle_leave_no_memo():
    for qsub in ("-R y", "-now y"):
        jobs = [{"id": 1}, {"id": 2}, {"id": 3, "qsub": qsub}]
        assert cycle(snapshot(scenario(jobs))).memo is None, qsub
    jobs = [{"id": 1}, {"id": 2, "tasks": (1, 2), "held_tasks": (2,)}]
    assert cycle(snapshot(scenario(jobs))).memo is None


def test_the_memo_ends_when_a_job_waited_for_ends_or_a_start_time_comes():
    jobs = [{"id": 1}, {"id": 2}, {"id": 3, "predecessors": [9]}, {"id": 4, "qsub": "-a 203001010000"}]
    sc = scenario(jobs, running=[{"job": 9, "granted": "all.q@h1=1"}])
    at = snapshot(sc).jobs[3].start_at
    sc["now"] = at - 10
    memo = cycle(snapshot(sc)).memo
    assert memo.waits_for == frozenset({9}) and memo.next_time == at
    assert memo.valid(snapshot(sc), most_age=5.0)
    assert not memo.valid(snapshot(dict(sc, now=at - 4)), most_age=5.0)      # too old
    assert not memo.valid(snapshot(dict(sc, now=at + 1)), most_age=50.0)     # job 4 may start
    gone = dict(sc, running=[], now=at - 9)                                  # job 9 ended
    assert not memo.valid(snapshot(gone), most_age=5.0)
