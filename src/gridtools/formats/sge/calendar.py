"""Calendars (calendar_conf(5)): the ``qconf -scal`` layout and its evaluation.

The object is ``{"calendar_name": str, "year": str|None, "week": str|None}``;
``year`` and ``week`` keep their text (qconf shows them as entered) and are
checked against the grammar in ``calendar.lark`` when read or validated.

``parse_field(which, text)`` turns a field into ``Entry`` objects and
``entries(calendar)`` gives both fields' entries; ``sched.calendar``
evaluates them (the state a calendar gives a queue at a moment).

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
#: the years a date may name (Grid Engine's calendars end with 32-bit time)
YEARS = (1970, 2037)
#: month names
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


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
        raise ValueProblem(f'"{token}" outside of range {lo}-{hi} of {what}')
    return value


def _state_word(word):
    """The calendar_conf state a STATE token names ("on", "off" or a beginning of
    "suspended" of 3 or more letters)."""
    word = word.lower()
    return word if word in (CalState.ON, CalState.OFF) else CalState.SUSPENDED


def _date(node):
    import datetime
    day_tok, month_node, year_tok = node.children
    month_tok = month_node.children[0]
    month = (MONTHS.index(month_tok.lower()[:3]) + 1 if month_tok.type == "MONTH"
             else _int(month_tok, 1, 12, "month"))
    year = _int(year_tok, YEARS[0], YEARS[1], "year")
    try:
        return datetime.date(year, month, int(day_tok))
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
        start = WEEKDAYS.index(first.lower()[:3])
        end = start if last is None else WEEKDAYS.index(last.lower()[:3])
        if last is not None and start == end:
            raise ValueProblem("a weekday range needs two different days")
        return start, end
    start, end = _daytime(first), _daytime(last)
    if start == end:
        raise ValueProblem("range begin is equal to end - use 0-24 instead")
    return start, end


def _entry(node):
    days = times = None
    state = CalState.OFF
    for child in node.children:
        if child is None:
            continue
        if child.data == "state":
            state = _state_word(child.children[0])
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


def entries(calendar):
    """(year entries, week entries) of a calendar object (``sched.calendar`` evaluates them)."""
    return parse_field("year", calendar.get("year")), parse_field("week", calendar.get("week"))
