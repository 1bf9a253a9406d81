"""Evaluating calendars (calendar_conf(5)): the state a calendar gives a queue at a moment.

``state_at(year, week, when)`` takes a calendar's parsed year and week
entries (``formats.sge.calendar.parse_field``) and returns the queue state
(``CalState.ON``, ``OFF`` or ``SUSPENDED``) at ``when`` and the next moment
the state changes (None if it never does). Rules, as calendar_conf(5) has
them: within the entries that apply, "on" wins over "suspended", which wins
over "off"; while a year entry is active (it covers both the day and the
time of day) the week entries are not looked at, outside its time range on
that day they are; times no entry covers are "on". A time range whose end lies before its start covers
the day outside the gap (``20-6``: midnight to 6:00 and 20:00 to midnight).

``open_during(year, week, start, end)`` tells whether a calendar keeps its
queue open (neither disabled nor suspended) over the whole of ``[start,
end)``: an advance reservation is granted only in such queue instances,
whatever their calendar says now, and a calendar change that would close one
during a granted reservation's window is refused.

``closed_periods(year, week, start)`` lists the coming periods in which a
calendar closes its queue: the scheduling pass books them as fully used
slots, so that a job whose run time would reach into one is not started
there (Grid Engine's scheduler does the same with the calendar's next
states).
"""

import datetime
import enum

#: seconds of a day
DAY = 86400
#: days looked ahead from each point where the applying entries change
LOOKAHEAD_DAYS = 8
#: closed periods ``closed_periods`` lists at most, and how far ahead it looks (seconds)
MAX_PERIODS = 16
HORIZON = LOOKAHEAD_DAYS * DAY


class CalState(enum.Enum):
    """Queue states a calendar sets; values are the calendar_conf words."""
    OFF = "off"
    SUSPENDED = "suspended"
    ON = "on"


#: precedence when areas overlap (later wins)
ORDER = (CalState.OFF, CalState.SUSPENDED, CalState.ON)
_BY_WORD = {s.value: s for s in CalState}


def _covers_day(entry, day, yearly):
    if entry.days is None:
        return True
    if yearly:
        return any(start <= day <= end for start, end in entry.days)
    wd = day.weekday()
    return any((start <= wd <= end) if start <= end else (wd >= start or wd <= end)
               for start, end in entry.days)


def _covers_time(entry, second):
    if entry.times is None:
        return True
    return any((start <= second < end) if start <= end else (second < end or second >= start)
               for start, end in entry.times)


def _state(year, week, moment):
    day, second = moment.date(), moment.hour * 3600 + moment.minute * 60 + moment.second
    states = {_BY_WORD[e.state] for e in year if _covers_day(e, day, True) and _covers_time(e, second)}
    if not states:
        states = {_BY_WORD[e.state] for e in week if _covers_day(e, day, False) and _covers_time(e, second)}
    for state in reversed(ORDER):
        if state in states:
            return state
    return CalState.ON


def _candidate_days(year, today):
    starts = {today}
    for entry in year:
        for first, last in entry.days or ():
            starts.update(d for d in (first, last + datetime.timedelta(days=1)) if d > today)
    days = {s + datetime.timedelta(days=i) for s in starts for i in range(LOOKAHEAD_DAYS)}
    return sorted(days)


def _boundaries(year, week):
    marks = {0}
    for entry in (*year, *week):
        for start, end in entry.times or ():
            marks.update(m for m in (start, end) if m < DAY)
    return sorted(marks)


def state_at(year, week, when):
    """``(CalState, next change)`` of a calendar's entries at ``when``.

    ``when`` is a naive local ``datetime`` or a POSIX timestamp; the next
    change comes back in the same form, or None when the state never changes.
    """
    stamp = not isinstance(when, datetime.datetime)
    moment = datetime.datetime.fromtimestamp(when) if stamp else when
    current = _state(year, week, moment)
    marks = _boundaries(year, week)
    for day in _candidate_days(year, moment.date()):
        midnight = datetime.datetime.combine(day, datetime.time())
        for mark in marks:
            point = midnight + datetime.timedelta(seconds=mark)
            if point > moment and _state(year, week, point) != current:
                return current, (point.timestamp() if stamp else point)
    return current, None


def open_during(year, week, start, end):
    """True when the calendar's state is "on" over all of ``[start, end)`` (POSIX
    timestamps or naive local datetimes, both the same); a change at ``end`` itself
    does not count."""
    state, change = state_at(year, week, start)
    while state is CalState.ON and change is not None and change < end:
        state, change = state_at(year, week, change)
    return state is CalState.ON


def closed_periods(year, week, start, horizon=HORIZON, most=MAX_PERIODS):
    """((from, till), ...): the periods from ``start`` (a POSIX timestamp) on in which the
    calendar's state is not "on" (off and suspended ones in a row merged), the first
    clipped to ``start``; ``till`` is infinity when the queue never opens again. Only
    periods that begin before ``start + horizon`` count, at most ``most`` of them."""
    found = []
    when = start
    state, change = state_at(year, week, when)
    while len(found) < most:
        if state is CalState.ON:
            if change is None or change >= start + horizon:
                break
            when = change
            state, change = state_at(year, week, when)
            continue
        begin = when
        while state is not CalState.ON and change is not None:
            when = change
            state, change = state_at(year, week, when)
        if state is not CalState.ON:
            found.append((begin, float("inf")))
            break
        found.append((begin, when))
    return tuple(found)


def closings(calendars, now):
    """"queue@host" -> closed periods (``closed_periods``) from ``now`` of the instances in
    ``calendars`` ("queue@host" -> (year entries, week entries)) that have any."""
    found = {}
    for name, (year, week) in calendars.items():
        periods = closed_periods(year, week, now)
        if periods:
            found[name] = periods
    return found
