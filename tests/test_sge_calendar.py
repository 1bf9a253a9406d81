"""Calendars: the year/week grammar and evaluation at a point in time.

Examples follow the admin guide ("available outside office hours and on
weekends, Christmas handled like weekends") and calendar_conf(5) (night and
day calendars, overlapping areas, reversed time ranges).
"""

from datetime import date, datetime

import pytest

from gridtools.errors import ConfigError
from gridtools.formats.sge import objects
from gridtools.formats.sge.calendar import CalState, entries, parse_field
from gridtools.sched.calendar import state_at


def calendar_state(calendar, when):
    """(state word, next change) of a calendar object at ``when``."""
    state, change = state_at(*entries(calendar), when)
    return state.value, change


def cal(year="NONE", week="NONE"):
    return objects.parse("calendar", f"calendar_name test\nyear {year}\nweek {week}\n")


# 2026-12-21 is a Monday; 2026-12-24 a Thursday; 2026-12-26 a Saturday
OFFICE = cal(year="24.12.2026-26.12.2026=on", week="mon-fri=6-20")


@pytest.mark.parametrize("moment,state,change", [
    (datetime(2026, 12, 22, 10, 0), CalState.OFF, datetime(2026, 12, 22, 20, 0)),
    (datetime(2026, 12, 22, 20, 0), CalState.ON, datetime(2026, 12, 23, 6, 0)),
    (datetime(2026, 12, 22, 5, 59, 59), CalState.ON, datetime(2026, 12, 22, 6, 0)),
    (datetime(2026, 12, 23, 21, 0), CalState.ON, datetime(2026, 12, 28, 6, 0)),   # Christmas, weekend
    (datetime(2026, 12, 24, 10, 0), CalState.ON, datetime(2026, 12, 28, 6, 0)),
    (datetime(2026, 12, 19, 10, 0), CalState.ON, datetime(2026, 12, 21, 6, 0)),   # a Saturday
])
def test_office_hours_calendar(moment, state, change):
    assert calendar_state(OFFICE, moment) == (state, change)


def test_reference_night_calendar_suspends_overnight_and_closes_christmas():
    night = cal(year="25.12.2026=off", week="mon-fri=20-6=suspended")
    assert calendar_state(night, datetime(2026, 11, 30, 12, 0)) == ("on", datetime(2026, 11, 30, 20, 0))
    assert calendar_state(night, datetime(2026, 11, 30, 21, 0)) == ("suspended", datetime(2026, 12, 1, 6, 0))
    assert calendar_state(night, datetime(2026, 12, 1, 3, 0)) == ("suspended", datetime(2026, 12, 1, 6, 0))
    assert calendar_state(night, datetime(2026, 12, 24, 23, 0)) == ("suspended", datetime(2026, 12, 25, 0, 0))
    assert calendar_state(night, datetime(2026, 12, 25, 12, 0)) == ("off", datetime(2026, 12, 26, 0, 0))
    assert calendar_state(night, datetime(2026, 12, 26, 12, 0)) == ("on", datetime(2026, 12, 28, 0, 0))


def test_day_calendar_of_the_manual():
    # holidays off, weekdays closed 20:00-6:00 (only within each day), weekend off
    day = cal(year="1.1.1999,6.1.1999,25.12.1999,26.12.1999", week="mon-fri=20-6 sat-sun")
    assert calendar_state(day, datetime(1999, 1, 1, 12, 0))[0] == "off"        # holiday
    assert calendar_state(day, datetime(1999, 1, 4, 3, 0)) == ("off", datetime(1999, 1, 4, 6, 0))
    assert calendar_state(day, datetime(1999, 1, 4, 12, 0)) == ("on", datetime(1999, 1, 4, 20, 0))
    assert calendar_state(day, datetime(1999, 1, 5, 12, 0)) == ("on", datetime(1999, 1, 5, 20, 0))
    assert calendar_state(day, datetime(1999, 1, 6, 12, 0)) == ("off", datetime(1999, 1, 7, 6, 0))
    assert calendar_state(day, datetime(1999, 1, 9, 12, 0)) == ("off", datetime(1999, 1, 11, 6, 0))


def test_on_overrides_suspended_overrides_off():
    week = cal(week="12-18 tue=13-17=on wed=14-16=suspended")
    tuesday, wednesday = date(2026, 12, 22), date(2026, 12, 23)
    at = datetime.combine
    assert calendar_state(week, at(tuesday, datetime.min.time()).replace(hour=14))[0] == "on"
    assert calendar_state(week, at(tuesday, datetime.min.time()).replace(hour=12, minute=30))[0] == "off"
    assert calendar_state(week, at(wednesday, datetime.min.time()).replace(hour=15))[0] == "suspended"
    assert calendar_state(week, at(wednesday, datetime.min.time()).replace(hour=17))[0] == "off"
    assert calendar_state(week, at(wednesday, datetime.min.time()).replace(hour=19))[0] == "on"


def test_reversed_time_range_covers_both_ends_of_the_day():
    year = cal(year="12.03.2004=12-11=off")
    assert calendar_state(year, datetime(2004, 3, 12, 10, 59))[0] == "off"
    assert calendar_state(year, datetime(2004, 3, 12, 11, 30)) == ("on", datetime(2004, 3, 12, 12, 0))
    assert calendar_state(year, datetime(2004, 3, 12, 23, 0)) == ("off", datetime(2004, 3, 13, 0, 0))
    assert calendar_state(year, datetime(2004, 3, 13, 1, 0)) == ("on", None)


def test_constant_calendars_never_change():
    assert calendar_state(cal(), datetime(2026, 1, 1)) == ("on", None)
    assert calendar_state(cal(week="off"), datetime(2026, 1, 1)) == ("off", None)
    assert calendar_state(cal(week="suspended"), datetime(2026, 1, 1)) == ("suspended", None)


def test_future_year_entry_is_found_far_ahead():
    holiday = cal(year="1.jan.2030=off")
    assert calendar_state(holiday, datetime(2026, 6, 1)) == ("on", datetime(2030, 1, 1))


def test_timestamps_in_timestamps_out():
    moment = datetime(2026, 12, 22, 10, 0)
    state, change = calendar_state(OFFICE, moment.timestamp())
    assert state == "off" and change == datetime(2026, 12, 22, 20, 0).timestamp()


def test_field_grammar():
    (entry,) = parse_field("year", "1.jan.2027-3.1.2027=10-12:30=suspended")
    assert entry.days == ((date(2027, 1, 1), date(2027, 1, 3)),)
    assert entry.times == ((36000, 45000),) and entry.state == "suspended"
    entries = parse_field("week", "fri-mon=8:00:30-9 sat sun=on")
    assert entries[0].days == ((4, 0),) and entries[0].times == ((28830, 32400),)
    assert entries[1].state == "off" and entries[2].state == "on"
    assert parse_field("week", "NONE") == ()


@pytest.mark.parametrize("field,text", [
    ("week", "mon-mon"), ("week", "mon=25-26"), ("week", "mon=6"), ("week", "funday"),
    ("year", "30.2.2026"), ("year", "3.1.2027-1.1.2027"), ("year", "mon-fri"), ("week", "mon=6-20=maybe"),
    ("year", "1.13.2026")])
def test_bad_fields_are_refused_naming_the_field(field, text):
    other = "week" if field == "year" else "year"
    with pytest.raises(ConfigError, match=f'invalid value "{text}" for attribute "{field}"'):
        objects.parse("calendar", f"calendar_name c\n{field} {text}\n{other} NONE\n")


def test_validate_checks_fields_built_in_code():
    calendar = objects.template("calendar", "c")
    calendar["week"] = "mon-fri=6-20"
    objects.validate("calendar", calendar)
    calendar["week"] = "mon-fri=6"
    with pytest.raises(ConfigError, match='attribute "week"'):
        objects.validate("calendar", calendar)


def test_continued_lines_join_entries():
    text = "calendar_name c\nyear NONE\nweek mon=6-8 \\\n     tue=9-10\n"
    calendar = objects.parse("calendar", text)
    assert len(parse_field("week", calendar["week"])) == 2


def test_open_during_a_window():
    """A calendar keeps its queue open over [start, end) only when no disabled or
    suspended moment lies in it; a change at the end does not count."""
    import datetime
    from gridtools.formats.sge.calendar import parse_field
    from gridtools.sched.calendar import open_during
    week = parse_field("week", "sat-sun=off mon-fri=12-13=suspended")
    d = datetime.datetime
    assert open_during((), week, d(2026, 12, 4, 9), d(2026, 12, 4, 12))
    assert not open_during((), week, d(2026, 12, 4, 9), d(2026, 12, 4, 12, 0, 1))
    assert not open_during((), week, d(2026, 12, 4, 12, 30), d(2026, 12, 4, 12, 40))
    assert open_during((), week, d(2026, 12, 4, 13), d(2026, 12, 5))
    assert not open_during((), week, d(2026, 12, 4, 13), d(2026, 12, 5, 0, 1))
    assert not open_during((), week, d(2026, 12, 6, 10), d(2026, 12, 6, 11))
    stamp = d(2026, 12, 7, 9).timestamp()
    assert open_during((), week, stamp, stamp + 3 * 3600)
    assert not open_during((), week, stamp, stamp + 3 * 3600 + 1)
    assert open_during((), (), stamp, stamp + 10 ** 8)
