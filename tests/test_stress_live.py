"""Stress with a real daemon and four execution daemons: random array jobs with
consumables, a per-host quota, parallel jobs, -R y reservations and an advance
reservation never oversubscribe a consumable, a slot count, the quota or the
reservation at any moment, as the accounting records show. A larger run:
bench/bench_stress_live.py."""

import stresscell


def test_random_jobs_never_oversubscribe_anything(workdir):
    total, intervals, problems, seconds = stresscell.run(workdir, arrays=16, tasks=5, ar_jobs=10)
    assert len(intervals) == total
    assert problems == []
    assert any(i[6] for i in intervals)                       # jobs ran in the reservation
    assert max(i[3] for i in intervals) > 1                   # and parallel jobs ran
    busiest = max(sum(1 for j in intervals if j[0] <= t < j[1]) for t in {i[0] for i in intervals})
    assert busiest >= 6                                       # the hosts were kept busy


def test_the_check_sees_every_kind_of_oversubscription():
    ar = {"start": 100, "end": 120, "slots": {"n1": 2}}
    fine = [(0, 5, "n1", 3, 0, 2, 0), (5, 9, "n1", 3, 2, 2, 0), (100, 110, "n1", 2, 0, 0, 7),
            (100, 110, "n1", 2, 0, 0, 0)]
    assert stresscell.violations(fine, ar) == []
    too_many = [(0, 5, "n2", 3, 0, 0, 0), (4, 6, "n2", 2, 0, 0, 7)]
    assert any("5 slots > 4" in p for p in stresscell.violations(too_many, ar))
    over_quota = [(0, 5, "n2", 2, 0, 0, 0), (1, 3, "n2", 2, 0, 0, 0)]
    assert any("> quota 3" in p for p in stresscell.violations(over_quota, ar))
    beside = [(101, 105, "n1", 3, 0, 0, 0)]
    assert any("beside 2 reserved" in p for p in stresscell.violations(beside, ar))
    licenses = [(0, 5, "n1", 2, 2, 0, 0), (0, 5, "n2", 1, 3, 0, 0)]
    assert any("lic 7 > 6" in p for p in stresscell.violations(licenses, ar))
    memory = [(0, 5, "n3", 2, 0, 2, 0), (2, 4, "n3", 1, 0, 3, 0)]
    assert any("mem 7 > 6" in p for p in stresscell.violations(memory, ar))
    late = [(125, 126, "n1", 1, 0, 0, 7), (110, 112, "n2", 1, 0, 0, 7)]
    assert len([p for p in stresscell.violations(late, ar) if p.startswith("AR job")]) == 2
