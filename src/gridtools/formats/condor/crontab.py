"""The cron schedule of an HTCondor job (``cron_minute`` ... in its submit
description; ``CronMinute``, ``CronHour``, ``CronDayOfMonth``, ``CronMonth``,
``CronDayOfWeek`` in its ad) and the next time it falls on, in local time, as
HTCondor's schedd works it out.

A field is a list of items separated by commas: ``*`` (every value), ``N``,
``N-M`` (clipped to the field's range), each optionally ``/S`` (those of them
that S divides, as HTCondor counts: ``1-10/3`` is 3, 6 and 9). A field not given is ``*``. Minutes are 0-59, hours 0-23, days of the
month 1-31, months 1-12, days of the week 0-7 (0 and 7 are Sunday). A field with
a character other than digits, ``* , - /`` and spaces is refused ("Invalid
parameter value '...' for CronMinute"); so is a step of 0. As HTCondor reads
them, a lone value out of range stands for the whole range, and ``*`` in the
days of the week names none: the days of the month decide then. When both
day fields are restricted, a day that either names counts; when the days of the
month are ``*`` and the days of the week are not, only the days of the week
count.

``next_time(fields, now)`` is the first minute strictly after ``now`` (the next
minute boundary or later) that the schedule names.
"""

import datetime
import re
import time

from gridtools.formats.condor import c_atoi

#: (attribute, least, greatest) of each field, in HTCondor's order
FIELDS = (("CronMinute", 0, 59), ("CronHour", 0, 23), ("CronDayOfMonth", 1, 31), ("CronMonth", 1, 12),
          ("CronDayOfWeek", 0, 7))
_BAD = re.compile(r"[^0-9,\-/* ]")
#: years looked ahead for a time the schedule names (a schedule of February 30 names none)
LOOK_AHEAD_YEARS = 8


class Schedule:
    """A parsed schedule: ``values[i]`` the sorted values of field i."""

    def __init__(self, texts):
        self.values = []
        for (attr, low, high), text in zip(FIELDS, texts):
            self.values.append(_expand(attr, "*" if text is None else text, low, high))
        self.weekdays = frozenset(self.values[4])
        self.days = frozenset(self.values[2])
        self.all_days = len(self.days) == 31

    def day_ok(self, day):
        """True when ``day`` (a date) is one the day fields name."""
        weekday = (day.weekday() + 1) % 7              # (Sunday 0)
        if self.all_days:
            return not self.weekdays or len(self.weekdays) == 7 or weekday in self.weekdays
        return day.day in self.days or weekday in self.weekdays

    def next_time(self, now):
        """The epoch seconds of the first minute after ``now`` the schedule names (None
        when none comes within LOOK_AHEAD_YEARS)."""
        start = int(now) + 60 - int(now) % 60
        begin = time.localtime(start)
        day = datetime.date(begin.tm_year, begin.tm_mon, begin.tm_mday)
        minutes, hours, months = self.values[0], self.values[1], set(self.values[3])
        first = True
        for _ in range(366 * LOOK_AHEAD_YEARS):
            if day.month in months and self.day_ok(day):
                for hour in hours:
                    if first and hour < begin.tm_hour:
                        continue
                    for minute in minutes:
                        if first and hour == begin.tm_hour and minute < begin.tm_min:
                            continue
                        found = int(time.mktime((day.year, day.month, day.day, hour, minute, 0, 0, 0, -1)))
                        if found >= start:
                            return found
            day += datetime.timedelta(days=1)
            first = False
        return None


def _expand(attr, text, low, high):
    """The values a field names (see the module docstring); ValueError in HTCondor's words."""
    if _BAD.search(text):
        raise ValueError(f"Invalid parameter value '{text}' for {attr}")
    found = set()
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        step = 1
        if "/" in item:
            item, _, step_text = item.partition("/")
            step = c_atoi(step_text)
            if step == 0:
                raise ValueError(f"Invalid parameter value '{text}' for {attr}")
        first, last = low, high
        if "-" in item:
            start, _, end = item.partition("-")
            first, last = max(c_atoi(start), low), min(c_atoi(end), high)
        elif "*" in item:
            if attr == "CronDayOfWeek":
                continue
        else:
            value = c_atoi(item)
            if low <= value <= high:
                first = last = value
        for value in range(first, last + 1):
            value = 0 if attr == "CronDayOfWeek" and value == 7 else value
            if value % step == 0:
                found.add(value)
    if not found and attr != "CronDayOfWeek":
        raise ValueError(f"Invalid cron attribute: {text}")
    return sorted(found)


def of_ad(ad):
    """The Schedule of a job ad's Cron* attributes (strings), None when it has none;
    ValueError when one does not read."""
    texts = []
    for attr, _low, _high in FIELDS:
        value = ad.eval(attr) if attr in ad else None
        texts.append(value if isinstance(value, str) else None)
    if all(text is None for text in texts):
        return None
    return Schedule(texts)

