"""Urgency (sched.urgency): resource, waiting time and deadline contributions."""

import pytest

from gridtools.sched.policy.config import PolicyConfig
from gridtools.sched.policy.inputs import PolicyJob, Request
from gridtools.sched.urgency import (
    ComplexUrgency, Urgency, resource_contribution, urgencies, urgency, urgency_slots)

COMPLEXES = {c.name: c for c in (
    ComplexUrgency("slots", 1000.0),
    ComplexUrgency("h_vmem", 0.5),                 # per slot, in GB here
    ComplexUrgency("license", 100.0),
    ComplexUrgency("arch", 20.0, numeric=False),
    ComplexUrgency("h_rt", 0.0),
)}


def test_serial_job_gets_the_slot_urgency():
    assert resource_contribution(1, (), COMPLEXES) == 1000.0


def test_numeric_requests_count_amount_times_slots():
    """A 4-slot job with h_vmem=2 (per slot) and license=3 (a per-job consumable): Grid
    Engine multiplies every numeric request by the slots, the per-job one too:
    1000*4 + 0.5*2*4 + 100*3*4 = 5204."""
    requests = (Request("h_vmem", 2.0), Request("license", 3.0, per_slot=False))
    assert resource_contribution(4, requests, COMPLEXES) == 5204.0


def test_deadline_contribution_counts_whole_seconds_left():
    """weight_deadline 3,600,000 over 1,800.7 s left: whole seconds, 1,800 (2,000); under
    a second left counts as one."""
    config = PolicyConfig()
    job = PolicyJob(1, "alice", deadline=2800.7, deadline_user=True)
    assert urgency(job, COMPLEXES, config, 1000.9).dlcontr == 2000.0
    assert urgency(job, COMPLEXES, config, 2800.2).dlcontr == 3600000.0


def test_string_requests_add_the_urgency_once_and_unknown_or_zero_add_nothing():
    """arch=lx-amd64 on 2 slots: 2000 + 20; h_rt (urgency 0) and foo (unknown): 0."""
    requests = (Request("arch"), Request("h_rt", 3600.0), Request("foo", 7.0))
    assert resource_contribution(2, requests, COMPLEXES) == 2020.0


def test_an_explicit_slots_request_is_not_counted_twice():
    assert resource_contribution(2, (Request("slots", 2.0),), COMPLEXES) == 2000.0


@pytest.mark.parametrize("setting, ranges, pe_slots, expected", [
    ("min", ((2, 8),), 16, 2),
    ("max", ((2, 8),), 16, 8),
    ("max", ((2, None),), 16, 16),      # no upper bound: the PE's slots
    ("avg", ((2, 8),), 16, 5),
    ("avg", ((1, None),), 10, 5),       # 1..10 averages 5.5: its whole part
    ("avg", ((4, 100),), 6, 5),         # the average of 4..6
    ("avg", ((1, 1), (2, 2), (4, 4), (8, 8)), 16, 3),    # -pe mpi 1,2,4,8: 3.75
    ("avg", ((1, 2), (6, 6)), 16, 3),   # 1,2,6
    ("max", ((1, 1), (2, 2), (4, 4), (8, 8)), 16, 8),
    ("min", ((1, 1), (2, 2), (4, 4), (8, 8)), 16, 1),
    ("6", ((2, 8),), 16, 6),
    (" MIN ", ((3, 4),), 4, 3),
])
def test_urgency_slots(setting, ranges, pe_slots, expected):
    assert urgency_slots(setting, ranges, pe_slots) == expected


def test_urgency_slots_refuses_other_words():
    with pytest.raises(ValueError, match="urgency_slots"):
        urgency_slots("most", ((1, 2),), 2)


def test_waiting_time_contribution():
    """weight_waiting_time 0.278 and 100 s waited: wtcontr 27.8."""
    config = PolicyConfig(weight_waiting_time=0.278)
    job = PolicyJob(1, "alice", submit_time=1000.0)
    result = urgency(job, COMPLEXES, config, 1100.0)
    assert result == Urgency(1000.0, pytest.approx(27.8), 0.0)
    assert result.total == pytest.approx(1027.8)


def test_deadline_contribution_for_deadline_users_only():
    """weight_deadline 3,600,000 and 1,800 s left: dlcontr 2,000; past the
    deadline the full 3,600,000 (divided by 1 s); owners outside
    deadlineusers get nothing."""
    config = PolicyConfig()
    job = PolicyJob(1, "alice", deadline=2800.0, deadline_user=True)
    assert urgency(job, COMPLEXES, config, 1000.0).dlcontr == 2000.0
    assert urgency(job, COMPLEXES, config, 5000.0).dlcontr == 3600000.0
    outsider = PolicyJob(2, "bob", deadline=2800.0, deadline_user=False)
    assert urgency(outsider, COMPLEXES, config, 1000.0).dlcontr == 0.0


def test_deadline_contribution_grows_as_the_deadline_nears():
    config = PolicyConfig()
    job = PolicyJob(1, "alice", deadline=10000.0, deadline_user=True)
    values = [urgency(job, COMPLEXES, config, now).dlcontr for now in (0.0, 5000.0, 9000.0)]
    assert values == [360.0, 720.0, 3600.0]


def test_urgencies_of_many_jobs_match_one_by_one():
    config = PolicyConfig(weight_waiting_time=0.5)
    jobs = [PolicyJob(i, "alice", submit_time=float(i), slots=1 + i % 3,
                      requests=(Request("h_vmem", float(i % 2)),),
                      deadline=500.0 if i % 4 == 0 else None, deadline_user=True)
            for i in range(1, 40)]
    many = urgencies(jobs, COMPLEXES, config, 100.0)
    assert many == {job.id: urgency(job, COMPLEXES, config, 100.0) for job in jobs}


@pytest.mark.parametrize("pe, objects, refused", [
    (["u_*", 2, 8], {"u_min": {"urgency_slots": "min"}, "u_max": {"urgency_slots": "max"}}, True),
    (["u_*", 2, 2], {"u_min": {"urgency_slots": "min"}, "u_max": {"urgency_slots": "max"}}, False),
    (["u_min", 2, 8], {"u_min": {"urgency_slots": "min"}, "u_max": {"urgency_slots": "max"}}, False),
    (["u_*", 2, 8], {"u_a": {"urgency_slots": "avg"}, "u_b": {"urgency_slots": 5}}, False),   # both 5
    (["u_*", 2, 8], {"u_a": {"urgency_slots": "avg"}, "u_b": {"urgency_slots": "max"}}, True),
    (["u_*", 2, 0], {"u_a": {"urgency_slots": "max", "slots": 8}, "u_b": {"urgency_slots": "max", "slots": 16}},
     True),                                                     # an open range: each PE's slots
    (["u_*", [[1, 1], [4, 4]]], {"u_a": {"urgency_slots": "min"}, "u_b": {"urgency_slots": 1}}, False),
    (["u_*", [[1, 1], [4, 4]]], {"u_a": {"urgency_slots": "max"}, "u_b": {"urgency_slots": 1}}, True),
    (["x*", 2, 8], {"u_a": {"urgency_slots": "min"}, "u_b": {"urgency_slots": "max"}}, False)])
def test_wildcard_ranges_with_ambiguous_urgency_slots(pe, objects, refused):
    """Grid Engine's object_verify_pe_range: a range of several counts whose matching
    PEs would assume different slot counts for urgency is refused."""
    from gridtools.sched import urgency
    assert urgency.ambiguous(pe, objects) is refused
