"""Queue calendars in the scheduling pass (calendar_conf(5), sched_conf(5)): the coming
periods in which a calendar disables or suspends a queue instance count as all its slots
in use, so a job whose run time (h_rt, else default_duration) would reach into one is not
started there, and reservations are planned around them."""

import datetime

from gridtools.formats.sge.calendar import parse_field
from gridtools.sched.calendar import closed_periods
from schedkit import reasons, reserves, run, snapshot

#: Thursday 2026-12-03 14:45 local time; the calendars below close at 14:47
NOW = datetime.datetime(2026, 12, 3, 14, 45).timestamp()
CLOSES = NOW + 120
REOPENS = datetime.datetime(2026, 12, 3, 15, 0).timestamp()
SHORT = "(-l slots=1) cannot run in queue \"all.q@h1\" because it offers only qc:slots=0.000000 due to a reservation"


def _cell(jobs, week="mon-sun=14:47-15:00=off", sched=None, **more):
    return {"hosts": ["h1"], "slots": 1, "now": NOW, "jobs": jobs,
            "objects": {"calendars/tea": f"calendar_name tea\nyear NONE\nweek {week}\n"},
            "queue": {"calendar": "tea"}, "sched": sched or {}, **more}


def test_a_job_that_would_run_into_a_calendar_closing_is_not_started():
    decisions, started = run(_cell([{"id": 1, "qsub": "-l h_rt=600"}]))
    assert started == []
    assert reasons(decisions, 1) == [SHORT]


def test_a_job_that_ends_before_the_calendar_closes_is_started():
    _decisions, started = run(_cell([{"id": 1, "qsub": "-l h_rt=60"}]))
    assert started == ["1.1 all.q@h1=1"]


def test_a_suspending_calendar_counts_as_closing_too():
    decisions, started = run(_cell([{"id": 1, "qsub": "-l h_rt=600"}, {"id": 2, "qsub": "-l h_rt=0:1:0"}],
                                   week="mon-sun=14:47-15:00=suspended"))
    assert started == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == [SHORT]


def test_without_a_run_time_the_default_duration_decides():
    """Grid Engine takes default_duration for a job without h_rt: INFINITY (the default)
    reaches into every coming closed period; a short one may end before it."""
    decisions, started = run(_cell([{"id": 1, "qsub": ""}]))
    assert started == []
    assert reasons(decisions, 1) == [SHORT]
    _decisions, started = run(_cell([{"id": 1, "qsub": ""}], sched={"default_duration": "0:1:0"}))
    assert started == ["1.1 all.q@h1=1"]


def test_the_job_goes_to_a_queue_whose_calendar_leaves_it_open():
    sc = _cell([{"id": 1, "qsub": "-l h_rt=600"}], queues={"other.q": {"calendar": "NONE", "seq_no": 10}},
               sched={"queue_sort_method": "seqno"})
    _decisions, started = run(sc)
    assert started == ["1.1 other.q@h1=1"]


def test_a_closing_far_ahead_does_not_stop_a_job_that_ends_before():
    _decisions, started = run(_cell([{"id": 1, "qsub": "-l h_rt=3600"}], week="sat-sun=off"))
    assert started == ["1.1 all.q@h1=1"]                     # Thursday: Saturday is far
    decisions, started = run(_cell([{"id": 1, "qsub": "-l h_rt=2:0:0:0"}], week="sat-sun=off"))
    assert started == []
    assert reasons(decisions, 1) == [SHORT]


def test_a_reservation_is_planned_after_the_closed_period():
    decisions, started = run(_cell([{"id": 1, "qsub": "-R y -l h_rt=600"}],
                                   sched={"max_reservation": 10}))
    assert started == []
    assert reserves(decisions) == [f"1.1@{int(REOPENS)} all.q@h1=1"]


def test_a_queue_without_a_calendar_has_no_closings():
    snap = snapshot({"hosts": ["h1"], "now": NOW, "jobs": [{"id": 1, "qsub": "-l h_rt=600"}]})
    assert snap.closings == {}
    _decisions, started = run({"hosts": ["h1"], "now": NOW, "jobs": [{"id": 1, "qsub": "-l h_rt=600"}]})
    assert started == ["1.1 all.q@h1=1"]


def test_closed_periods_merge_and_end():
    year, week = parse_field("year", "NONE"), parse_field("week", "mon-sun=14:47-14:50=off mon-sun=14:50-15:00=suspended")
    assert closed_periods(year, week, NOW)[0] == (CLOSES, REOPENS)
    assert closed_periods(year, week, CLOSES + 60)[0] == (CLOSES + 60, REOPENS)   # closed now: from now
    long = parse_field("year", "03.12.2026-31.12.2037=off")
    assert closed_periods(long, (), NOW) == ((NOW, datetime.datetime(2038, 1, 1).timestamp()),)
    assert closed_periods(year, parse_field("week", "mon-sun=off"), NOW) == ((NOW, float("inf")),)
    assert closed_periods(year, parse_field("week", "NONE"), NOW) == ()
