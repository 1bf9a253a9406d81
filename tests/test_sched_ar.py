"""Advance reservations in the pass (qrsub(1), qsub -ar) and the admission of new ones."""

from gridtools.sched.admit import admit
from gridtools.sched.snapshot import Kill
from schedkit import reasons, request, run, snapshot

SMP = ("pe_name smp\nslots 16\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
       "stop_proc_args NONE\nallocation_rule $pe_slots\ncontrol_slaves FALSE\n"
       "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")


def cell(now=1500, ars=None, jobs=(), running=(), **more):
    """h1 and h2 with 2 slots each; AR 1 of alice holds both slots of h1 over [1000, 2000)."""
    default = [{"id": 1, "owner": "alice", "start": 1000, "end": 2000, "granted": "all.q@h1=2"}]
    return {"hosts": ["h1", "h2"], "slots": 2, "now": now, "ars": default if ars is None else ars,
            "jobs": list(jobs), "running": list(running), **more}


def test_jobs_of_a_reservation_run_only_in_its_slots():
    """Three -ar 1 jobs: two take h1's reserved slots, the third waits; other jobs never
    take h1 while the reservation holds it."""
    jobs = [{"id": i, "qsub": "-ar 1"} for i in (1, 2, 3)] + [{"id": i, "owner": "bob"} for i in (4, 5, 6)]
    decisions, started = run(cell(jobs=jobs))
    assert started == ["1.1 all.q@h1=1", "2.1 all.q@h1=1", "4.1 all.q@h2=1", "5.1 all.q@h2=1"]
    assert reasons(decisions, 3) == [
        'cannot run in queue instance "all.q@h2" because it was not reserved by advance reservation 1',
        'queue instance "all.q@h1" dropped because it is full',
        "All queues dropped because of overload or full"]
    assert reasons(decisions, 6, "bob") == ['queue instance "all.q@h1" dropped because it is full',
                                           'queue instance "all.q@h2" dropped because it is full',
                                           "All queues dropped because of overload or full"]


def test_running_reservation_jobs_use_the_reservations_slots_not_the_cells():
    running = [{"job": 9, "granted": "all.q@h1=1", "ar": 1, "start": 1100}]
    decisions, started = run(cell(running=running, jobs=[{"id": 1, "qsub": "-ar 1"}, {"id": 2, "qsub": "-ar 1"},
                                                         {"id": 3, "owner": "bob"}]))
    assert started == ["1.1 all.q@h1=1", "3.1 all.q@h2=1"]


def test_before_the_window_only_jobs_that_end_in_time_use_the_reserved_slots():
    """At 500 the reservation starts in 500 s: its jobs wait for their start time; a job
    of 400 s is backfilled on h1, a job without a run time limit is not."""
    jobs = [{"id": 1, "qsub": "-ar 1"}, {"id": 2, "owner": "bob", "qsub": "-l h_rt=400"},
            {"id": 3, "owner": "bob", "qsub": "-q all.q@h1"}]
    decisions, started = run(cell(now=500, jobs=jobs))
    assert started == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ["execution time not reached"]
    assert '(-l slots=1) cannot run in queue "all.q@h1" because it offers only qc:slots=0.000000 ' \
           "due to a reservation" in reasons(decisions, 3, "bob")


def test_who_may_use_a_reservation():
    """-u bob,@staff,!carol: bob and staff members may, carol may not, the owner may."""
    staff = {"usersets/staff": "name staff\ntype ACL\nfshare 0\noticket 0\nentries dave\n"}
    ars = [{"id": 1, "owner": "alice", "start": 1000, "end": 2000, "granted": "all.q@h1=2",
            "users": ["bob", "@staff", "!carol"]}]
    jobs = [{"id": 1, "owner": "bob", "qsub": "-ar 1"}, {"id": 2, "owner": "dave", "qsub": "-ar 1"},
            {"id": 3, "owner": "carol", "qsub": "-ar 1"}, {"id": 4, "owner": "erin", "qsub": "-ar 1"}]
    decisions, started = run(cell(ars=ars, jobs=jobs, objects=staff))
    assert started == ["1.1 all.q@h1=1", "2.1 all.q@h1=1"]
    assert reasons(decisions, 3, "carol") == ['has no permission for advance_reservation "1"']
    assert reasons(decisions, 4, "erin") == ['has no permission for advance_reservation "1"']


def test_missing_ended_and_broken_reservations():
    decisions, _ = run(cell(jobs=[{"id": 1, "qsub": "-ar 7"}]))
    assert reasons(decisions, 1) == ["cannot run because advance reservation 7 does not exist"]
    decisions, _ = run(cell(now=2500, jobs=[{"id": 1, "qsub": "-ar 1"}]))
    assert reasons(decisions, 1) == ["cannot run because advance reservation 1 does not exist"]
    ars = [{"id": 1, "owner": "alice", "start": 1000, "end": 2000, "granted": "all.q@h1=2", "state": "error",
            "hard_error": True}]
    decisions, _ = run(cell(ars=ars, jobs=[{"id": 1, "qsub": "-ar 1"}]))
    assert reasons(decisions, 1) == ["cannot run because requested advance reservation 1 is in error state"]


def test_tasks_still_running_at_the_reservations_end_are_killed():
    running = [{"job": 9, "granted": "all.q@h1=1", "ar": 1, "start": 1100},
               {"job": 10, "granted": "all.q@h2=1", "start": 1100}]
    assert run(cell(now=1999, running=running))[0].kills == []
    assert run(cell(now=2000, running=running))[0].kills == [Kill(9, 1, 1)]
    deleted = [{"id": 1, "owner": "alice", "start": 1000, "end": 2000, "granted": "all.q@h1=2", "state": "deleted"}]
    assert run(cell(ars=deleted, running=running))[0].kills == [Kill(9, 1, 1)]


def test_reserved_consumables_and_quotas():
    """AR 1 holds lic=1 per slot (2 of the cell's 3); its jobs take from those, others from
    the one left; quotas do not count reservation jobs."""
    ars = [{"id": 1, "owner": "alice", "start": 1000, "end": 2000, "granted": "all.q@h1=2", "l": "lic=1"}]
    sc = cell(ars=ars, complex=["lic lic INT <= YES YES 0 0"], exechost={"global": {"complex_values": "lic=3"}},
              objects={"rqs/none": "{\n name none\n enabled true\n limit users bob to slots=1\n}\n"},
              jobs=[{"id": 1, "owner": "bob", "qsub": "-l lic=1"}, {"id": 2, "owner": "bob", "qsub": "-l lic=1"},
                    {"id": 3, "owner": "alice", "qsub": "-ar 1 -l lic=1"},
                    {"id": 4, "owner": "alice", "qsub": "-ar 1 -l lic=1"},
                    {"id": 5, "owner": "alice", "qsub": "-ar 1 -l lic=1"}])
    ars[0]["users"] = ["alice", "bob"]
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h2=1", "3.1 all.q@h1=1", "4.1 all.q@h1=1"]


def test_admission_of_a_new_reservation():
    """On an empty cell any window is granted; a running task without a run time limit
    holds its slot for ever; one with h_rt only until its end; other reservations hold
    theirs over their windows."""
    base = cell(ars=[], objects={"pe/smp": SMP}, queue={"pe_list": "smp"})
    snap = snapshot(base)
    assert admit(snap, request(base), "alice", 3000, 6600).granted == (("all.q", "h1", 1),)
    got = admit(snap, request(base, "-pe smp 2"), "alice", 3000, 6600)
    assert (got.pe, got.granted) == ("smp", (("all.q", "h1", 2),))
    busy = cell(ars=[], objects={"pe/smp": SMP}, queue={"pe_list": "smp"},
                running=[{"job": 9, "granted": "all.q@h1=1", "start": 1000},
                         {"job": 10, "granted": "all.q@h2=1", "start": 1000, "l": "h_rt=1000"}])
    snap = snapshot(busy)
    refused = admit(snap, request(busy, "-pe smp 2"), "alice", 1600, 2600)
    assert not refused.ok                                 # one slot free on each host, $pe_slots
    assert [r.args for r in refused.reasons] == [("smp", 2)]
    assert admit(snap, request(busy, "-pe smp 2"), "alice", 2000, 3000).granted == (("all.q", "h2", 2),)
    other = cell(ars=[{"id": 1, "owner": "bob", "start": 3000, "end": 4000, "granted": "all.q@h1=2,all.q@h2=1"}])
    snap = snapshot(other)
    assert admit(snap, request(other, "-q all.q@h1"), "alice", 3500, 5000).ok is False
    assert admit(snap, request(other), "alice", 3500, 5000).granted == (("all.q", "h2", 1),)
    assert admit(snap, request(other, "-q all.q@h1"), "alice", 4000, 5000).ok


def test_a_reservations_master_slot_is_where_masterq_says():
    """qrsub -masterq: the first granted instance (the master slot) is one it names."""
    base = cell(ars=[], objects={"pe/smp": SMP}, queue={"pe_list": "smp"})
    snap = snapshot(base)
    got = admit(snap, request(base, "-pe smp 2 -masterq all.q@h2"), "alice", 3000, 6600)
    assert (got.pe, got.granted) == ("smp", (("all.q", "h2", 2),))
    busy = cell(ars=[], objects={"pe/smp": SMP}, queue={"pe_list": "smp"},
                running=[{"job": 9, "granted": "all.q@h2=2", "start": 1000}])
    assert not admit(snapshot(busy), request(busy, "-pe smp 1 -masterq all.q@h2"), "alice", 3000, 6600).ok


def test_an_overloaded_host_is_still_reserved_for_later():
    """h1 and h2 are over all.q's load threshold now (np_load_avg 2.5 >= 1.75): no job
    starts there, but a reservation for 3000..6600 is granted all the same."""
    loaded = cell(ars=[], queue={"load_thresholds": "np_load_avg=1.75"},
                  load={"h1": {"np_load_avg": 2.5}, "h2": {"np_load_avg": 2.5}}, jobs=[{"id": 1}])
    decisions, started = run(loaded)
    assert started == []
    assert "dropped because it is overloaded" in reasons(decisions, 1)[0]
    snap = snapshot(loaded)
    assert admit(snap, request(loaded), "alice", 3000, 6600).granted == (("all.q", "h1", 1),)


def test_a_job_in_a_reservation_runs_in_the_pe_it_was_granted():
    """qrsub -pe fix2 2, then qsub -ar 1 -pe smp 2: Grid Engine's scheduler puts the job
    in the reservation's PE (sge_select_queue.c takes AR_granted_pe), not in the one it
    asked for."""
    fix2 = SMP.replace("pe_name smp", "pe_name fix2").replace("$pe_slots", "2")
    ars = [{"id": 1, "owner": "alice", "start": 1000, "end": 2000, "granted": "all.q@h1=2",
            "pe": "fix2"}]
    decisions, started = run(cell(ars=ars, objects={"pe/smp": SMP, "pe/fix2": fix2},
                                  queue={"pe_list": "smp fix2"},
                                  jobs=[{"id": 1, "qsub": "-ar 1 -pe smp 2"}]))
    assert started == ["1.1 all.q@h1=2"] and decisions.starts[0].pe == "fix2"


def _local(text):
    """POSIX time of a local "YYYY-MM-DD HH:MM"."""
    import datetime
    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M").timestamp()


def _calendar(week):
    from gridtools.formats.sge.calendar import parse_field
    return (parse_field("year", None), parse_field("week", week))


def test_calendars_are_judged_over_the_window_not_now():
    """Thursday 2026-12-03 10:00. h1's calendar closes it on weekends: a Saturday
    reservation goes to h2, and Grid Engine's note names h1. h2's calendar disables it
    on Thursdays (it is "D" now): a reservation for Friday is granted there all the
    same. A window that reaches into a closed time (Friday 23:30 to Saturday 00:30 on
    h1, suspended from 12:00 to 13:00 on h2) is refused."""
    now = _local("2026-12-03 10:00")
    sc = cell(now=now, ars=[], queue_states={"all.q@h2": "D"})
    snap = snapshot(sc)
    calendars = {"all.q@h1": _calendar("sat-sun=off"), "all.q@h2": _calendar("thu=off")}
    saturday = admit(snap, request(sc), "alice", _local("2026-12-05 10:00"), _local("2026-12-05 11:00"),
                     calendars=calendars)
    assert (saturday.granted, saturday.closed) == ((("all.q", "h2", 1),), ("all.q@h1",))
    friday = admit(snap, request(sc, "-q all.q@h2"), "alice", _local("2026-12-04 10:00"),
                   _local("2026-12-04 11:00"), calendars=calendars)
    assert (friday.granted, friday.closed) == ((("all.q", "h2", 1),), ())
    across = admit(snap, request(sc, "-q all.q@h1"), "alice", _local("2026-12-04 23:30"),
                   _local("2026-12-05 00:30"), calendars=calendars)
    assert (across.ok, across.closed) == (False, ("all.q@h1",))
    # ending exactly when the calendar closes the queue is fine
    assert admit(snap, request(sc, "-q all.q@h1"), "alice", _local("2026-12-04 23:00"),
                 _local("2026-12-05 00:00"), calendars=calendars).ok
    lunch = {"all.q@h2": _calendar("mon-sun=12-13=suspended")}
    assert not admit(snap, request(sc, "-q all.q@h2"), "alice", _local("2026-12-04 11:30"),
                     _local("2026-12-04 12:30"), calendars=lunch).ok
    assert admit(snap, request(sc, "-q all.q@h2"), "alice", _local("2026-12-04 13:00"),
                 _local("2026-12-04 14:00"), calendars=lunch).ok
