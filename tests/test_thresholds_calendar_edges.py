"""Edges of suspend thresholds and calendars, as Grid Engine has them.

Suspend thresholds (queue_conf(5)): a threshold step picks only running tasks
(never one stopped by qmod -sj or by its queue); nsuspend 0 or
suspend_interval 0 turn the feature off (no A state, nothing stopped or
continued); setting suspend_thresholds to NONE continues the threshold-
suspended tasks at once. Calendars (calendar_conf(5)): a year entry hides
the week entries only while it is active, and the words and numbers the
parser takes are those of Grid Engine's.
"""

import os
from datetime import datetime

import pytest

from conftest import wait_for
from gridtools.errors import ConfigError
from gridtools.formats.sge import objects
from gridtools.formats.sge.calendar import parse_field
from gridtools.sched import inputs, queue_state
from gridtools.sched.calendar import CalState, closed_periods, open_during, state_at
from gridtools.sched.snapshot import QState
from qtools import add_object, jid_of, job_pid, queue_letters, running, set_attr, state_of, stopped, wait_state
from schedkit import config

TABLE = inputs.complexes(config({"hosts": ["h1"]}))
LOADS = {"h1": {"np_load_avg": 0.5}}


def inst(name="r.q", thresholds="np_load_avg=0.1", nsuspend=1, interval=60.0):
    return queue_state.Instance(name=f"{name}@h1", queue=name, host="h1", slots=4,
                                suspend_thresholds=inputs.parsed_pairs(
                                    {"np_load_avg": thresholds.split("=")[1]} if thresholds else {}, TABLE),
                                nsuspend=nsuspend, interval=interval)


def task(job, start, queues=("r.q",), **kw):
    return queue_state.Task(job, 1, tuple((q, "h1", 1) for q in queues), start, **kw)


def derive(instances, tasks, now=1000.0, **kw):
    view = queue_state.View(instances=tuple(instances), tasks=tuple(tasks), loads=LOADS,
                            complexes=TABLE, **kw)
    return queue_state.derive(view, now)


def threshold_orders(out):
    return [(job, on) for job, _task, why, on in out.suspend if why == "threshold"]


# ---------------------------------------------------------------- suspend thresholds

def test_a_threshold_step_passes_over_a_task_suspended_by_qmod():
    out = derive([inst()], [task(1, 100.0), task(2, 200.0, job_suspended=True)])
    assert threshold_orders(out) == [(1, True)]


def test_a_threshold_step_passes_over_a_task_its_queue_suspends():
    """Task 2 also runs in s.q, which is suspended: it is stopped already (S)."""
    out = derive([inst(), inst("s.q", thresholds=None)],
                 [task(1, 100.0), task(2, 200.0, queues=("r.q", "s.q"), queue_suspended=True)],
                 admin={"s.q@h1": QState.SUSPENDED})
    assert threshold_orders(out) == [(1, True)]


def test_nothing_is_picked_when_every_task_is_stopped_already():
    out = derive([inst()], [task(1, 100.0, job_suspended=True), task(2, 200.0, threshold_suspended=True)])
    assert threshold_orders(out) == []
    assert out.derived["r.q@h1"] & QState.SUSPEND_ALARM


def test_thresholds_set_to_none_continue_every_threshold_suspended_task_at_once():
    tasks = [task(1, 100.0, threshold_suspended=True), task(2, 200.0, threshold_suspended=True),
             task(3, 300.0, threshold_suspended=True, job_suspended=True),
             task(4, 400.0, queues=("o.q", "r.q"), threshold_suspended=True)]   # master queue elsewhere
    out = derive([inst(thresholds=None, interval=600.0), inst("o.q")], tasks,
                 threshold_at={"r.q@h1": 999.0})
    assert sorted(threshold_orders(out)) == [(1, False), (2, False), (3, False)]
    assert out.next_wake is None and "r.q@h1" not in out.derived


@pytest.mark.parametrize("nsuspend,interval", [(0, 60.0), (1, 0.0)])
def test_nsuspend_or_suspend_interval_0_turn_threshold_suspension_off(nsuspend, interval):
    off = inst(nsuspend=nsuspend, interval=interval)
    out = derive([off], [task(1, 100.0), task(2, 200.0, threshold_suspended=True)])
    assert threshold_orders(out) == [] and out.derived == {} and not out.watch_load
    calm = dict(LOADS, h1={"np_load_avg": 0.0})
    view = queue_state.View(instances=(off,), tasks=(task(2, 200.0, threshold_suspended=True),),
                            loads=calm, complexes=TABLE)
    assert threshold_orders(queue_state.derive(view, 1000.0)) == []


def test_qstat_shows_no_suspend_alarm_while_the_feature_is_off():
    from gridtools.cli.sge import qstat_queues
    snap = {"hosts": {"h1": {"np_load_avg": 0.5, "load_avg": 0.5}},
            "complexes": {"np_load_avg": ["nla", "DOUBLE", ">=", "NO", "NO", "0", 0.0]}}
    row = {"host": "h1", "states": "", "attrs": {"suspend_thresholds": {"np_load_avg": "0.1"},
                                                 "nsuspend": 1, "suspend_interval": "00:05:00"}}
    assert qstat_queues.states(row, snap) == "A"
    assert qstat_queues.explain_lines(row, snap, "A") == ["alarm hl:np_load_avg=0.500000 suspend-threshold=0.1"]
    for change in ({"nsuspend": 0}, {"suspend_interval": "00:00:00"}):
        off = dict(row, attrs=dict(row["attrs"], **change))
        assert qstat_queues.states(off, snap) == "" and qstat_queues.explain_lines(off, snap, "A") == []


def sleeper(cell, workdir, *extra):
    return jid_of(cell.qsub("-b", "y", *extra, "sleep", "300", cwd=workdir))


def test_a_step_suspends_the_running_job_and_none_continues_them_at_once(cell, workdir):
    """Job 1 runs, job 2 is suspended by qmod -sj: the first step takes job 1 (T) and
    leaves job 2 (s). With a long suspend_interval, NONE still continues job 1 at once."""
    set_attr(cell, "all.q", "load_thresholds", "NONE")
    first = sleeper(cell, workdir)
    wait_state(cell, first, "r")
    second = sleeper(cell, workdir)
    wait_state(cell, second, "r")
    cell.run("qmod", "-sj", str(second), check=True)
    wait_state(cell, second, "s")
    pids = [job_pid(cell, first), job_pid(cell, second)]
    set_attr(cell, "all.q", "suspend_interval", "0:10:0")
    set_attr(cell, "all.q", "suspend_thresholds", "np_load_avg=0")
    wait_state(cell, first, "T")
    assert state_of(cell, second) == "s"
    wait_for(lambda: stopped(pids[0]))
    set_attr(cell, "all.q", "suspend_thresholds", "NONE")
    wait_state(cell, first, "r", timeout=20)
    wait_for(lambda: running(pids[0]))
    assert state_of(cell, second) == "s" and stopped(pids[1])


def test_nsuspend_0_and_suspend_interval_0_show_no_suspend_alarm(cell, workdir):
    """all.q has the feature off; on.q (the same thresholds, on) shows when a step was due."""
    set_attr(cell, "all.q", "load_thresholds", "NONE")
    text = cell.run("qconf", "-sq", "all.q", check=True).stdout
    add_object(cell, "-Aq", "".join(("qname on.q\n" if line.startswith("qname ") else line + "\n")
                                    for line in text.splitlines()))
    idle = sleeper(cell, workdir, "-q", "all.q")
    busy = sleeper(cell, workdir, "-q", "on.q")
    wait_state(cell, idle, "r")
    wait_state(cell, busy, "r")
    set_attr(cell, "on.q", "suspend_interval", "0:0:1")
    for attr, value in (("nsuspend", "0"), ("suspend_interval", "0")):
        set_attr(cell, "all.q", "nsuspend", "1")
        set_attr(cell, "all.q", "suspend_interval", "0:0:1")
        set_attr(cell, "all.q", attr, value)
        shown = dict(line.split(None, 1) for line in cell.run("qconf", "-sq", "all.q", check=True).stdout.splitlines())
        assert shown[attr] in ("0", "00:00:00")
        set_attr(cell, "on.q", "suspend_thresholds", "np_load_avg=0")
        set_attr(cell, "all.q", "suspend_thresholds", "np_load_avg=0")
        wait_state(cell, busy, "T")
        wait_for(lambda: "A" in queue_letters(cell, "on.q@testhost"))
        assert "A" not in queue_letters(cell, "all.q@testhost")
        explained = cell.run("qstat", "-f", "-q", "all.q", "-explain", "A", check=True).stdout
        assert "suspend-threshold" not in explained
        assert "A" not in cell.run("qhost", "-q", check=True).stdout.split("all.q")[1].splitlines()[0]
        assert state_of(cell, idle) == "r"
        set_attr(cell, "all.q", "suspend_thresholds", "NONE")
        set_attr(cell, "on.q", "suspend_thresholds", "NONE")
        wait_state(cell, busy, "r")


# ---------------------------------------------------------------- calendars

def test_a_year_entry_hides_the_week_only_inside_its_time_range():
    year, week = parse_field("year", "7.12.2026=23:00-23:30=on"), parse_field("week", "off")
    assert state_at(year, week, datetime(2026, 12, 7, 14, 0)) == (CalState.OFF, datetime(2026, 12, 7, 23, 0))
    assert state_at(year, week, datetime(2026, 12, 7, 23, 0)) == (CalState.ON, datetime(2026, 12, 7, 23, 30))
    assert state_at(year, week, datetime(2026, 12, 7, 23, 30)) == (CalState.OFF, None)
    # a whole-day year entry still hides the week for the whole day
    holiday = parse_field("year", "8.12.2026=on")
    assert state_at(holiday, week, datetime(2026, 12, 8, 3, 0)) == (CalState.ON, datetime(2026, 12, 9, 0, 0))


def test_the_next_closure_and_open_windows_agree_with_the_year_entry():
    year, week = parse_field("year", "7.12.2026=10-12=off"), parse_field("week", "mon=11-13=suspended")
    assert state_at(year, week, datetime(2026, 12, 7, 9, 0)) == (CalState.ON, datetime(2026, 12, 7, 10, 0))
    assert state_at(year, week, datetime(2026, 12, 7, 11, 0)) == (CalState.OFF, datetime(2026, 12, 7, 12, 0))
    assert state_at(year, week, datetime(2026, 12, 7, 12, 0)) == (CalState.SUSPENDED, datetime(2026, 12, 7, 13, 0))
    start = datetime(2026, 12, 7, 9, 0).timestamp()
    assert closed_periods(year, week, start)[0] == (datetime(2026, 12, 7, 10, 0).timestamp(),
                                                    datetime(2026, 12, 7, 13, 0).timestamp())
    evening = parse_field("year", "7.12.2026=20-21=on")
    assert not open_during(evening, parse_field("week", "off"), datetime(2026, 12, 7, 9), datetime(2026, 12, 7, 10))
    assert open_during(evening, parse_field("week", "off"), datetime(2026, 12, 7, 20), datetime(2026, 12, 7, 21))


@pytest.mark.parametrize("field,text,days,state", [
    ("week", "monday=9-10=off", ((0, 0),), "off"),
    ("week", "mon=9-10=susp", ((0, 0),), "suspended"),
    ("week", "thursday-sunday=suspended", ((3, 6),), "suspended"),
    ("week", "Tues,WEDNES=Sus", ((1, 1), (2, 2)), "suspended"),
    ("week", "satur=ON", ((5, 5),), "on"),
    ("year", "1.january.2027=off", None, "off"),
    ("year", "1.Janu.2027-2.feb.2027=suspe", None, "suspended"),
])
def test_names_of_3_letters_or_more_stand_for_the_name_they_begin(field, text, days, state):
    (entry,) = parse_field(field, text)
    assert entry.state == state
    if days is not None:
        assert entry.days == days


@pytest.mark.parametrize("field,text", [
    ("week", "mo=9-10"), ("week", "mon=9-10=of"), ("week", "mon=9-10=su"), ("week", "mondays"),
    ("week", "mon=9-10=one"), ("year", "1.ja.2027"), ("year", "1.janx.2027")])
def test_short_or_unknown_words_are_refused(field, text):
    other = "week" if field == "year" else "year"
    with pytest.raises(ConfigError, match=f'invalid value "{text}" for attribute "{field}"'):
        objects.parse("calendar", f"calendar_name c\n{field} {text}\n{other} NONE\n")


@pytest.mark.parametrize("field,text,why", [
    ("week", "mon=9-9", "range begin is equal to end - use 0-24 instead"),
    ("week", "mon=9:00-9", "range begin is equal to end - use 0-24 instead"),
    ("year", "1.1.2027=24-24", "range begin is equal to end - use 0-24 instead"),
    ("year", "1.1.2038", '"2038" outside of range 1970-2037 of year'),
    ("year", "31.12.1969=off", '"1969" outside of range 1970-2037 of year'),
])
def test_empty_time_ranges_and_years_beyond_2037_are_refused(field, text, why):
    other = "week" if field == "year" else "year"
    with pytest.raises(ConfigError) as err:
        objects.parse("calendar", f"calendar_name c\n{field} {text}\n{other} NONE\n")
    assert str(err.value).endswith(f'invalid value "{text}" for attribute "{field}": {why}')


def test_qconf_refuses_an_empty_time_range(cell, workdir):
    path = os.path.join(str(workdir), "c13.txt")
    with open(path, "w") as f:
        f.write("calendar_name    c13\nyear             NONE\nweek             mon=9-9\n")
    proc = cell.run("qconf", "-Acal", str(path))
    assert proc.returncode == 1
    assert 'invalid value "mon=9-9" for attribute "week": range begin is equal to end - use 0-24 instead' \
        in proc.stderr
    assert cell.run("qconf", "-scal", "c13").returncode != 0
