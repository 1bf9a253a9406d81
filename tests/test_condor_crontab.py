"""Cron schedules of HTCondor jobs (cron_minute ...): the fields as HTCondor's schedule
reads them, and the next time one names (worked in UTC here)."""

import calendar
import re
import time

import pytest

from gridtools.formats.condor.crontab import Schedule, of_ad
from gridtools.classad import ClassAd


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def at(text):
    """Epoch seconds of a UTC time 'YYYY-MM-DD HH:MM'."""
    return calendar.timegm(time.strptime(text, "%Y-%m-%d %H:%M"))


def next_of(now, minute=None, hour=None, dom=None, month=None, dow=None):
    found = Schedule([minute, hour, dom, month, dow]).next_time(at(now))
    return None if found is None else time.strftime("%Y-%m-%d %a %H:%M", time.gmtime(found))


def test_next_times():
    # 2026-12-05 is a Saturday
    assert next_of("2026-12-05 08:00") == "2026-12-05 Sat 08:01"             # every minute: strictly after
    assert next_of("2026-12-05 08:00", minute="*/5") == "2026-12-05 Sat 08:05"
    assert next_of("2026-12-05 08:07", minute="*/5") == "2026-12-05 Sat 08:10"
    assert next_of("2026-12-05 08:00", minute="0", hour="12") == "2026-12-05 Sat 12:00"
    assert next_of("2026-12-05 13:00", minute="0", hour="12") == "2026-12-06 Sun 12:00"
    assert next_of("2026-12-05 08:00", minute="30", hour="9", dow="1") == "2026-12-07 Mon 09:30"
    assert next_of("2026-12-05 08:00", minute="0", hour="0", dow="7") == "2026-12-06 Sun 00:00"  # 7 is Sunday
    # both day fields restricted: either names a day (the 13th, or a Friday)
    assert next_of("2026-12-05 08:00", minute="0", hour="0", dom="13", dow="5") == "2026-12-11 Fri 00:00"
    assert next_of("2026-12-12 08:00", minute="0", hour="0", dom="13", dow="5") == "2026-12-13 Sun 00:00"
    # a year's end, a month's last day, a leap day, a day no month has
    assert next_of("2026-12-31 23:59", minute="0", hour="0", dom="1", month="1") == "2027-01-01 Fri 00:00"
    assert next_of("2027-01-05 00:00", minute="0", hour="0", dom="31", month="2,4,5") == "2027-05-31 Mon 00:00"
    assert next_of("2026-03-01 00:00", minute="0", hour="0", dom="29", month="2") == "2028-02-29 Tue 00:00"
    assert next_of("2026-03-01 00:00", minute="0", hour="0", dom="30", month="2") is None


def test_fields_as_htcondor_reads_them():
    assert Schedule(["1-10/3", None, None, None, None]).values[0] == [3, 6, 9]   # what the step divides
    assert Schedule(["*/20", None, None, None, None]).values[0] == [0, 20, 40]
    assert Schedule(["70", None, None, None, None]).values[0] == list(range(60))  # out of range: all
    assert Schedule(["50-70", None, None, None, None]).values[0] == list(range(50, 60))
    assert Schedule(["5, 1,3", None, None, None, None]).values[0] == [1, 3, 5]
    assert Schedule([None, None, None, None, "*"]).weekdays == frozenset()
    assert Schedule([None, None, None, None, "5-7"]).weekdays == frozenset({0, 5, 6})
    for bad, message in (("99-x", "Invalid parameter value '99-x' for CronMinute"),
                         ("*/0", "Invalid parameter value '*/0' for CronMinute"),
                         ("5-3", "Invalid cron attribute: 5-3")):
        with pytest.raises(ValueError, match=re.escape(message)):
            Schedule([bad, None, None, None, None])


def test_a_job_ad_has_a_schedule_when_it_names_a_field():
    assert of_ad(ClassAd({"Cmd": "/bin/true"})) is None
    schedule = of_ad(ClassAd({"CronHour": "3", "CronMinute": "15"}))
    assert schedule.values[0] == [15] and schedule.values[1] == [3] and len(schedule.values[2]) == 31
