"""Absolute and relative time values: ``absTime(...)`` and ``relTime(...)``.

An absolute time is a moment (seconds since the epoch) with the offset from
UTC it is shown in; it prints as ``absTime("2020-01-01T00:00:00+01:00")``
(an offset of zero prints as ``-00:00``, as HTCondor does). A relative time
is a number of seconds (a real) and prints as ``relTime("[-][D+]HH:MM:SS")``
with the leading zero parts left out (a fraction of a second as ``%g``:
``relTime("01:30.5")``). Arithmetic follows HTCondor: absolute plus or
minus relative is absolute, absolute minus absolute is relative, relative
plus, minus, times or divided by a number is relative; anything else with a
time is ERROR. Comparisons work between two times of the same kind.
"""

import time

from gridtools.classad.values import ERROR, to_int32

#: the least C int, which the text of a relative time cannot negate
INT32_MIN = -2147483648


def local_offset(when):
    """The local time zone's offset from UTC, in seconds, at ``when``."""
    try:
        return time.localtime(when).tm_gmtoff or 0
    except (OverflowError, OSError, ValueError):
        return 0


class AbsTime:
    __slots__ = ("secs", "offset")

    def __init__(self, secs, offset=None):
        self.secs = secs
        self.offset = local_offset(secs) if offset is None else offset

    def text(self):
        try:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.secs + self.offset))
        except (OverflowError, OSError, ValueError):
            stamp = "0000-00-00T00:00:00"
        sign = "+" if self.offset > 0 else "-"
        hours, minutes = divmod(abs(self.offset) // 60, 60)
        return f"{stamp}{sign}{hours:02d}:{minutes:02d}"

    def unparse(self, old=False):
        return f'absTime("{self.text()}")'

    def same(self, other):
        return self.secs == other.secs and self.offset == other.offset

    def key(self):
        return self.secs


def _c_div(a, b):
    return -(-a // b) if a < 0 else a // b


def _c_mod(a, b):
    return a - b * _c_div(a, b)


def rel_text(secs):
    """``[-][D+][HH:][MM:]SS`` as HTCondor's relTimeToString writes ``secs``: the sign,
    then the parts of the magnitude's whole seconds held in a C int (out of range, INF
    or NaN: INT32_MIN, whose parts come out negative in C's arithmetic), the leading zero
    parts left out; with a fraction (NaN for INF and NaN) the seconds are ``%02g``."""
    sign = ""
    if secs < 0:
        sign, secs = "-", -secs
    if type(secs) is float:
        fraction, whole = secs % 1.0, to_int32(secs)
    else:
        fraction, whole = 0, secs if secs < 2147483648 else INT32_MIN
    hours = _c_mod(whole, 86400)
    minutes = _c_mod(hours, 3600)
    seconds = _c_mod(minutes, 60)
    days, hours, minutes = _c_div(whole, 86400), _c_div(hours, 3600), _c_div(minutes, 60)
    text = "%02d" % seconds if fraction == 0 else "%02g" % (seconds + fraction)
    if days:
        return "%s%d+%02d:%02d:%s" % (sign, days, hours, minutes, text)
    if hours:
        return "%s%02d:%02d:%s" % (sign, hours, minutes, text)
    if minutes:
        return "%s%02d:%s" % (sign, minutes, text)
    return sign + text


class RelTime:
    __slots__ = ("secs",)

    def __init__(self, secs):
        self.secs = secs

    def whole(self):
        """The seconds as HTCondor reads them as a ``time_t``: a C int (cut towards zero;
        out of range, INF or NaN, INT32_MIN): HTCondor holds them as a double."""
        return to_int32(self.secs)

    def text(self):
        """The text ``string()`` and ``eval()`` make of it: of the whole seconds (HTCondor
        converts the value to a ``time_t`` first)."""
        return rel_text(self.whole())

    def unparse(self, old=False):
        """As HTCondor's unparser prints the value: its seconds with their fraction."""
        return f'relTime("{rel_text(self.secs)}")'

    def same(self, other):
        return self.secs == other.secs

    def key(self):
        return self.secs


TIME_TYPES = (AbsTime, RelTime)


def arith(symbol, a, b):
    """``a symbol b`` when one of them is a time value."""
    ta, tb = type(a), type(b)
    if symbol == "+":                   # (a relative time added to an absolute one is a C int)
        if ta is AbsTime and tb is RelTime:
            return AbsTime(a.secs + to_int32(b.secs), a.offset)
        if ta is RelTime and tb is AbsTime:
            return AbsTime(b.secs + to_int32(a.secs), b.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.secs + b.secs)
    elif symbol == "-":
        if ta is AbsTime and tb is AbsTime:
            return RelTime(a.secs - b.secs)
        if ta is AbsTime and tb is RelTime:
            return AbsTime(a.secs - to_int32(b.secs), a.offset)
        if ta is RelTime and tb is RelTime:
            return RelTime(a.secs - b.secs)
    elif symbol == "*":
        if ta is RelTime and tb in (int, float):
            return RelTime(a.secs * b)
        if tb is RelTime and ta in (int, float):
            return RelTime(a * b.secs)
    elif symbol == "/":
        if ta is RelTime and tb in (int, float):
            from gridtools.classad.operators import real_divide
            return RelTime(real_divide(a.secs, b))
    return ERROR


def compare(test, a, b):
    """A comparison of two times of one kind; ERROR for anything else."""
    if type(a) is type(b) and type(a) in TIME_TYPES:
        return test(a.key(), b.key())
    return ERROR


def negate(a):
    return RelTime(-a.secs) if type(a) is RelTime else ERROR


# ------------------------------------------------------------------ literals

#: patterns of time literals (compiled by ``re`` when first used: most ads have none)
_ABS = (r"(?i)\s*(\d{4})-?(\d\d)-?(\d\d)(?:[T ](\d\d):?(\d\d)(?::?(\d\d))?)?"
        r"\s*(Z|[+-]\d\d(?::?\d\d)?)?\s*$")
_REL_COLONS = r"\s*([+-])?(?:(\d+)\+)?(?:(\d+):)??(?:(\d+):)?(\d+(?:\.\d*)?)\s*$"
_REL_UNITS = r"(?i)\s*([+-])?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d*)?)s?)?\s*$"


def parse_abs(text):
    """The AbsTime written as ``text`` (ISO 8601 date and time with an
    optional offset; none means the local zone), or None."""
    import re
    m = re.match(_ABS, text)
    if m is None:
        return None
    year, month, day, hour, minute, second, zone = m.groups()
    fields = (int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0))
    try:
        import calendar
        as_utc = calendar.timegm(fields + (0, 0, 0))
    except (ValueError, OverflowError):
        return None
    if zone is None:
        offset = local_offset(as_utc)
    elif zone.upper() == "Z":
        offset = 0
    else:
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + int(digits[2:] or 0) * 60
        offset = -offset if zone[0] == "-" else offset
    return AbsTime(as_utc - offset, offset)


def parse_rel(text):
    """The seconds written as ``text`` (``[-][D+][HH:][MM:]SS`` or
    ``1d2h3m4s``), or None."""
    if not text.strip():
        return 0.0
    import re
    m = re.match(_REL_COLONS, text)
    if m:
        sign, days, hours, minutes, secs = m.groups()
    else:
        m = re.match(_REL_UNITS, text)
        if m is None or not any(m.groups()[1:]):
            return None
        sign, days, hours, minutes, secs = m.groups()
    total = (int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60
             + float(secs or 0))
    return -total if sign == "-" else total
