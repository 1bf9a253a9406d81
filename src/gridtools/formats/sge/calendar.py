"""Calendars (calendar_conf(5)): the ``qconf -scal`` layout and its evaluation.

The object is ``{"calendar_name": str, "year": str|None, "week": str|None}``;
``year`` and ``week`` keep their text (qconf shows them as entered) and are
checked against the grammar in ``calendar.lark`` when read or validated.

``parse_field(which, text)`` turns a field into ``Entry`` objects and
``calendar_state(calendar, when)`` evaluates a calendar: the queue state
(``CalState.ON``, ``OFF`` or ``SUSPENDED``) at ``when`` and the next moment
the state changes (None if it never does). Rules, as calendar_conf(5) has
them: within the entries that apply, "on" wins over "suspended", which wins
over "off"; a day named by a year entry ignores the week entries; times no
entry covers are "on". A time range whose end lies before its start covers
the day outside the gap (``20-6``: midnight to 6:00 and 20:00 to midnight).

lark is imported on first use, by a cached parser factory.
"""

from gridtools.formats.sge.attrfile import Field, Schema
from gridtools.formats.sge.codecs import Codec, Text, ValueProblem, is_none_word
from gridtools.formats.sge.names import check_object_name

#: name column width of qconf -scal
WIDTH = 16
#: seconds of a day
DAY = 86400
#: weekday names, Monday first (as ``date.weekday()`` counts)
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
#: month names
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
#: days looked ahead from each point where the applying entries change
LOOKAHEAD_DAYS = 8


class CalState:
    """Queue states a calendar sets; values are the calendar_conf words."""

    ON = "on"
    OFF = "off"
    SUSPENDED = "suspended"
    #: precedence when areas overlap (later wins)
    ORDER = (OFF, SUSPENDED, ON)
    #: every state
    STATES = frozenset(ORDER)


class Entry:
    """One calendar entry: days (None: every day), times (None: all day), state.

    Year entries hold ``(first date, last date)`` pairs, week entries
    ``(first weekday, last weekday)`` pairs (0 = Monday, may wrap), times are
    ``(start second, end second)`` pairs.
    """

    __slots__ = ("days", "times", "state")

    def __init__(self, days, times, state):
        self.days, self.times, self.state = days, times, state

    def __repr__(self):
        return f"Entry({self.days!r}, {self.times!r}, {self.state!r})"


#: the lark parser, built on first use
_PARSER = []
#: parsed fields by (which, text); cleared when it grows past CACHE_SIZE
_FIELDS = {}
CACHE_SIZE = 256


def _parser():
    if not _PARSER:
        import lark
        _PARSER.append(lark.Lark.open("calendar.lark", rel_to=__file__, parser="lalr",
                                      start=["year_field", "week_field"]))
    return _PARSER[0]


def _int(token, lo, hi, what):
    value = int(token)
    if not lo <= value <= hi:
        raise ValueProblem(f"{what} {value} out of range {lo}..{hi}")
    return value


def _date(node):
    import datetime
    day_tok, month_node, year_tok = node.children
    month_tok = month_node.children[0]
    month = (MONTHS.index(month_tok.lower()) + 1 if month_tok.type == "MONTH"
             else _int(month_tok, 1, 12, "month"))
    try:
        return datetime.date(_int(year_tok, 1970, 9999, "year"), month, int(day_tok))
    except (ValueError, OverflowError):
        raise ValueProblem(f"no such day {day_tok}.{month_tok}.{year_tok}") from None


def _daytime(node):
    hour, minute, second = (None if t is None else int(t) for t in node.children)
    value = (hour or 0) * 3600 + (minute or 0) * 60 + (second or 0)
    if (minute or 0) > 59 or (second or 0) > 59 or value > DAY:
        raise ValueProblem(f"invalid time of day {':'.join(str(t) for t in node.children if t is not None)}")
    return value


def _range(node):
    first, last = node.children
    if node.data == "day_range":
        start = _date(first)
        end = start if last is None else _date(last)
        if end < start:
            raise ValueProblem(f"day range ends before it starts ({start:%d.%m.%Y}-{end:%d.%m.%Y})")
        return start, end
    if node.data == "weekday_range":
        start = WEEKDAYS.index(first.lower())
        end = start if last is None else WEEKDAYS.index(last.lower())
        if last is not None and start == end:
            raise ValueProblem("a weekday range needs two different days")
        return start, end
    return _daytime(first), _daytime(last)


def _entry(node):
    days = times = None
    state = CalState.OFF
    for child in node.children:
        if child is None:
            continue
        if child.data == "state":
            state = child.children[0].lower()
        elif child.data == "time_list":
            times = tuple(_range(r) for r in child.children)
        else:
            days = tuple(_range(r) for r in child.children)
    return Entry(days, times, state)


def parse_field(which, text):
    """The entries of a ``year`` or ``week`` field (empty for NONE or None)."""
    if text is None or is_none_word(text.strip()):
        return ()
    key = (which, text)
    if key not in _FIELDS:
        if len(_FIELDS) >= CACHE_SIZE:
            _FIELDS.clear()
        _FIELDS[key] = _parse_field(which, text)
    return _FIELDS[key]


def _parse_field(which, text):
    import lark
    try:
        tree = _parser().parse(" ".join(text.split()), start=f"{which}_field")
    except lark.exceptions.UnexpectedInput as err:
        raise ValueProblem(f"syntax error at column {err.column} (see calendar_conf(5))") from None
    return tuple(_entry(node) for node in tree.children)


class CalendarField(Codec):
    """The text of a year or week field, checked against the grammar; NONE is None."""

    def __init__(self, which):
        self.which = which
        self.expected = f"a {which} calendar or NONE"

    def parse(self, text):
        if is_none_word(text.strip()):
            return None
        parse_field(self.which, text)
        return text

    def render(self, value):
        if value is None:
            return "NONE"
        if not isinstance(value, str):
            raise TypeError(value)
        return value


SCHEMA = Schema([
    Field("calendar_name", Text(), "template"),
    Field("year", CalendarField("year"), None),
    Field("week", CalendarField("week"), None),
], WIDTH)


def parse(text):
    """A calendar dict from ``qconf -scal`` text."""
    return SCHEMA.parse(text)


def render(obj):
    """``qconf -scal`` text of a calendar dict."""
    return SCHEMA.render(obj)


def template(name="template"):
    """The calendar ``qconf -acal`` opens in the editor."""
    return SCHEMA.template(calendar_name=name)


def validate(obj, known=None):
    """Raise ConfigError for a bad name or a field that does not parse."""
    SCHEMA.check(obj)
    check_object_name(obj["calendar_name"], "calendar", "calendar_name")


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


def _entries(calendar):
    return parse_field("year", calendar.get("year")), parse_field("week", calendar.get("week"))


def _state(year, week, moment):
    day, second = moment.date(), moment.hour * 3600 + moment.minute * 60 + moment.second
    applying = [e for e in year if _covers_day(e, day, True)]
    if not applying:
        applying = [e for e in week if _covers_day(e, day, False)]
    states = {e.state for e in applying if _covers_time(e, second)}
    for state in reversed(CalState.ORDER):
        if state in states:
            return state
    return CalState.ON


def _candidate_days(year, today):
    import datetime
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


def calendar_state(calendar, when):
    """``(state, next change)`` of ``calendar`` at ``when``.

    ``when`` is a naive local ``datetime`` or a POSIX timestamp; the next
    change comes back in the same form, or None when the state never changes.
    """
    import datetime
    stamp = not isinstance(when, datetime.datetime)
    moment = datetime.datetime.fromtimestamp(when) if stamp else when
    year, week = _entries(calendar)
    current = _state(year, week, moment)
    marks = _boundaries(year, week)
    for day in _candidate_days(year, moment.date()):
        midnight = datetime.datetime.combine(day, datetime.time())
        for mark in marks:
            point = midnight + datetime.timedelta(seconds=mark)
            if point > moment and _state(year, week, point) != current:
                return current, (point.timestamp() if stamp else point)
    return current, None
