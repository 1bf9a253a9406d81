"""Job priority (sched.priority): normalization, the seed's license example, pending order."""

import pytest

from gridtools.sched import priority
from gridtools.sched.policy import renice
from gridtools.sched.policy.config import PolicyConfig
from gridtools.sched.policy.inputs import Member, Members, PolicyJob, Request, ShareNode
from gridtools.sched.urgency import ComplexUrgency

COMPLEXES = {"slots": ComplexUrgency("slots", 1000.0),
             "license": ComplexUrgency("license", 100.0)}
#: the weights of the guide's examples (N1 Grid Engine 6's defaults; 8.1.9's are the
#: PolicyConfig defaults: priority 0, urgency 0.5, ticket 0.5, waiting time 0.278)
GUIDE = {"weight_priority": 1.0, "weight_urgency": 0.1, "weight_ticket": 0.01, "weight_waiting_time": 0.0}


def test_normalize():
    assert priority.normalize(5.0, 0.0, 10.0) == 0.5
    assert priority.normalize(10.0, 0.0, 10.0) == 1.0
    assert priority.normalize(3.0, 3.0, 3.0) == 0.5
    assert priority.normalize(3.0, 3.0, 3.000001) == 0.5      # narrower than 1e-5
    assert priority.Range.of([4, 8, 6]) == priority.Range(4, 8)
    assert priority.Range(0, 10).normalized(20.0) == 1.0


def test_seed_license_example():
    """Seed 004, "Resource Reservation and Backfilling": three jobs asking for
    4, 5 and 1 of a global license, the first with -p 100; weights
    priority 1, urgency 0.1, ticket 0.01.

    npprior over the fixed range (ppri + 1024) / 2048: 0.548828125, 0.5, 0.5 (the
    guide normalizes over the pending jobs: 1, 0, 0). urg = 1000 + 100 * licenses:
    1400, 1500, 1100, so nurg = 0.75, 1, 0. No tickets: ntckts 0.5 each.
    prio = npprior + 0.1 nurg + 0.005: 0.62883, 0.605, 0.505 (the guide: 1.08, 0.105,
    0.005), the same order.
    """
    jobs = [PolicyJob(3127, "alice", 10.0, priority=100,
                      requests=(Request("license", 4.0, per_slot=False),)),
            PolicyJob(3128, "alice", 11.0, requests=(Request("license", 5.0, per_slot=False),)),
            PolicyJob(3129, "alice", 12.0, requests=(Request("license", 1.0, per_slot=False),))]
    result = priority.evaluate(jobs, Members(), PolicyConfig(**GUIDE), COMPLEXES, now=20.0)
    prios = result.priorities.jobs
    assert [round(prios[i].prio, 5) for i in (3127, 3128, 3129)] == [0.62883, 0.605, 0.505]
    assert [prios[i].nurg for i in (3127, 3128, 3129)] == [0.75, 1.0, 0.0]
    assert result.order == (3127, 3128, 3129)


def test_posix_priority_is_normalized_over_a_fixed_range():
    """-p -100 and -p 0: npprior (ppri + 1024) / 2048 = 0.45117 and 0.5, as Grid Engine
    8.1.9 shows them, whatever the other jobs' priorities are."""
    jobs = [PolicyJob(1, "a", priority=-100), PolicyJob(2, "a")]
    result = priority.evaluate(jobs, Members(), PolicyConfig(**GUIDE), COMPLEXES, now=0.0)
    assert [result.priorities.jobs[i].npprior for i in (1, 2)] == [924 / 2048, 0.5]
    assert result.order == (2, 1)
    alone = priority.evaluate(jobs[:1], Members(), PolicyConfig(**GUIDE), COMPLEXES, now=0.0)
    assert alone.priorities.jobs[1].npprior == 924 / 2048


def test_all_equal_gives_one_half_everywhere():
    jobs = [PolicyJob(1, "a"), PolicyJob(2, "b")]
    result = priority.evaluate(jobs, Members(), PolicyConfig(**GUIDE), COMPLEXES, now=0.0)
    first = result.priorities.jobs[1]
    assert (first.npprior, first.nurg, first.ntckts) == (0.5, 0.5, 0.5)
    assert first.prio == pytest.approx(0.5 * (1 + 0.1 + 0.01))
    default = priority.evaluate(jobs, Members(), PolicyConfig(), COMPLEXES, now=0.0).priorities.jobs[1]
    assert default.prio == pytest.approx(0.5)             # Grid Engine 8.1.9's weights: 0.5 * (0.5 + 0.5)


def test_equal_priorities_go_first_come_first_served():
    jobs = [PolicyJob(5, "a", submit_time=20.0), PolicyJob(3, "a", submit_time=20.0),
            PolicyJob(9, "a", submit_time=10.0)]
    result = priority.evaluate(jobs, Members(), PolicyConfig(), COMPLEXES, now=30.0)
    assert result.order == (9, 3, 5)


def test_tickets_order_jobs_of_equal_priority_and_urgency():
    """Share tree 50/50 (a, b) with weight_tickets_share 1000: tickets
    500, 250, 500, 250 → ntckts (from 0 to the most, as Grid Engine's
    sgeee_scheduler normalizes them) 1, 0.5, 1, 0.5 → order a1, b1, a2, b2."""
    jobs = [PolicyJob(1, "a", 1.0), PolicyJob(2, "a", 2.0), PolicyJob(3, "b", 3.0),
            PolicyJob(4, "b", 4.0)]
    members = Members.of(users=[Member("a"), Member("b")])
    tree = ShareNode("Root", 1, (ShareNode("a", 50), ShareNode("b", 50)))
    result = priority.evaluate(jobs, members, PolicyConfig(weight_tickets_share=1000),
                               COMPLEXES, now=5.0, tree=tree)
    assert [result.priorities.jobs[i].ntckts for i in (1, 2, 3, 4)] == [1.0, 0.5, 1.0, 0.5]
    assert result.order == (1, 3, 2, 4)


def test_urgency_outweighs_tickets_with_the_guide_weights():
    """A 2-slot job (urg 2000) against 1-slot jobs (1000): nurg 1 vs 0 adds
    0.1, more than the 0.01 tickets can add."""
    jobs = [PolicyJob(1, "a", 1.0), PolicyJob(2, "a", 2.0, slots=2)]
    members = Members.of(users=[Member("a")])
    tree = ShareNode("Root", 1, (ShareNode("a", 1),))
    result = priority.evaluate(jobs, members, PolicyConfig(weight_tickets_share=1000, **GUIDE),
                               COMPLEXES, now=5.0, tree=tree)
    assert result.order == (2, 1)


def test_running_jobs_get_the_same_fixed_range():
    jobs = [PolicyJob(1, "a", priority=500, pending=(), running=(1,)),
            PolicyJob(2, "a", priority=10), PolicyJob(3, "a", priority=20)]
    result = priority.evaluate(jobs, Members(), PolicyConfig(**GUIDE), COMPLEXES, now=0.0)
    assert result.priorities.jobs[1].npprior == 1524 / 2048
    assert [result.priorities.jobs[i].npprior for i in (2, 3)] == [1034 / 2048, 1044 / 2048]
    assert result.order == (3, 2)


def test_next_array_task_priority_uses_its_own_tickets():
    """a (75 shares) has an array job of three tasks, b (25) one job;
    weight_tickets_share 1000. a's tasks get 750, 375, 250; b's job 250.
    Tickets normalize from 0 to the most (750), so once task 1 has
    started, task 2's 375 tickets normalize to 0.5: prio 0.5 + 0.05 + 0.005."""
    jobs = [PolicyJob(1, "a", 1.0, pending=range(1, 4)), PolicyJob(2, "b", 2.0)]
    members = Members.of(users=[Member("a"), Member("b")])
    tree = ShareNode("Root", 1, (ShareNode("a", 75), ShareNode("b", 25)))
    result = priority.evaluate(jobs, members, PolicyConfig(weight_tickets_share=1000, **GUIDE),
                               COMPLEXES, now=5.0, tree=tree)
    assert [result.tickets.of(1, t).stckt for t in (1, 2, 3)] == pytest.approx(
        [750.0, 375.0, 250.0])
    assert result.tickets.of(2).stckt == pytest.approx(250.0)
    following = result.priorities.of_task(jobs[0], result.urgencies[1], 375.0)
    assert following.ntckts == pytest.approx(0.5)
    assert following.prio == pytest.approx(0.555)
    assert result.priorities.jobs[1].ntckts == 1.0


def test_renice_by_tickets():
    """Most tickets: nice 0; half of that: 10 (19 * 0.5 rounded); none: 19."""
    assert renice.nice_values({"a": 1000.0, "b": 500.0, "c": 0.0}) == {"a": 0, "b": 10, "c": 19}
    assert renice.nice_values({"a": 0.0, "b": 0.0}) == {"a": 0, "b": 0}
    assert renice.nice_values({}) == {}


def test_renice_is_due_by_reprioritize_interval():
    assert not renice.due(None, 100.0, 0)
    assert renice.due(None, 100.0, 60)
    assert not renice.due(50.0, 100.0, 60)
    assert renice.due(40.0, 100.0, 60)


def test_running_jobs_urgency_counts_in_its_range():
    """Grid Engine normalizes urgency over the pending and the running jobs, and a
    running job's waiting time runs on: a running job that waited less than the
    pending ones is the range's low end."""
    jobs = [PolicyJob(1, "a", 19.0, pending=(), running=(1,)), PolicyJob(2, "a", 10.0),
            PolicyJob(3, "a", 10.0, slots=2)]
    result = priority.evaluate(jobs, Members(), PolicyConfig(weight_waiting_time=1.0),
                               COMPLEXES, now=20.0)
    urg = {i: result.priorities.jobs[i].urgency.total for i in (1, 2, 3)}
    assert urg == {1: 1001.0, 2: 1010.0, 3: 2010.0}
    assert [round(result.priorities.jobs[i].nurg, 5) for i in (1, 2, 3)] == [0.0, 0.00892, 1.0]


def test_sge_capture_numbers_of_running_and_pending_jobs():
    """The scheduler pass's numbers for the jobs of the reference capture
    qstat-pri.txt / qstat-urg.txt (Son of Grid Engine 8.1.9, default weights):
    two running jobs submitted 4 s before the pending ones, seen 18 s after."""
    import schedkit
    from gridtools.sched.order import order
    sc = {"hosts": ["h1"], "slots": 2, "queue": {"pe_list": "smp"}, "now": 1018,
          "running": [{"job": 51, "granted": "all.q@h1=1", "start": 1000, "submit": 1000},
                      {"job": 52, "granted": "all.q@h1=1", "start": 1000, "submit": 1000}],
          "jobs": [{"id": 56, "qsub": "-pe smp 2", "submit": 1004},
                   {"id": 53, "submit": 1004},
                   {"id": 60, "qsub": "-p -100", "submit": 1004}]}
    ordered, numbers, _tree = order(schedkit.snapshot(sc))
    assert [job.id for job in ordered] == [56, 53, 60]
    shown = {jid: (round(o.prio, 5), round(o.nurg, 5), round(o.urgency[0]), round(o.urgency[2]))
             for jid, o in numbers.items()}
    assert shown[51] == shown[52] == (0.25056, 0.00111, 1005, 5)
    assert shown[56] == (0.75, 1.0, 2004, 4)
    assert shown[53] == shown[60] == (0.25, 0.0, 1004, 4)


def test_jobs_submitted_within_one_second_waited_equally_long():
    """Grid Engine counts waiting time in whole seconds: the pending jobs of the
    capture qstat-pri.txt, submitted within the same second (here at different
    fractions of it), all show nurg 0.00000 and prior 0.25000, and the running
    ones 0.00111 and 0.25056, however far apart in the second they came."""
    import schedkit
    from gridtools.sched.order import order
    sc = {"hosts": ["h1"], "slots": 2, "queue": {"pe_list": "smp"}, "now": 1018.2,
          "running": [{"job": 51, "granted": "all.q@h1=1", "start": 1000.9, "submit": 1000.9},
                      {"job": 52, "granted": "all.q@h1=1", "start": 1000.1, "submit": 1000.1}],
          "jobs": [{"id": 56, "qsub": "-pe smp 2", "submit": 1004.95},
                   {"id": 53, "submit": 1004.05},
                   {"id": 58, "submit": 1004.5},
                   {"id": 60, "qsub": "-p -100", "submit": 1004.9}]}
    ordered, numbers, _tree = order(schedkit.snapshot(sc))
    assert [job.id for job in ordered] == [56, 53, 58, 60]     # equal: by submission, id
    shown = {jid: (f"{o.prio:.5f}", f"{o.nurg:.5f}") for jid, o in numbers.items()}
    assert shown[51] == shown[52] == ("0.25056", "0.00111")
    assert shown[56] == ("0.75000", "1.00000")
    assert shown[53] == shown[58] == shown[60] == ("0.25000", "0.00000")


def test_avg_urgency_slots_of_a_slot_list_averages_every_number():
    """urgency_slots avg: a job asking -pe mpi 1,2,4,8 counts for the average of the
    numbers it names (3.75, its whole part: 3), as Grid Engine's pe_urgency_slots; a
    range 2-8 for that of 2..8 (5)."""
    import schedkit
    from gridtools.sched.order import order
    pe = ("pe_name mpi\nslots 16\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
          "stop_proc_args NONE\nallocation_rule $fill_up\ncontrol_slaves FALSE\n"
          "job_is_first_task TRUE\nurgency_slots avg\naccounting_summary FALSE\nqsort_args NONE\n")
    sc = {"hosts": ["h1"], "slots": 1, "queue": {"pe_list": "mpi"}, "now": 1010, "objects": {"pe/mpi": pe},
          "jobs": [{"id": 1, "qsub": "-pe mpi 1,2,4,8", "submit": 1000},
                   {"id": 2, "qsub": "-pe mpi 2-8", "submit": 1000}]}
    _ordered, numbers, _tree = order(schedkit.snapshot(sc))
    assert (round(numbers[1].urgency[1]), round(numbers[2].urgency[1])) == (3000, 5000)     # rrcontr
