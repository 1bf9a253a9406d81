"""Absolute and relative time values: ``absTime(...)`` and ``relTime(...)``.

An absolute time is a moment (seconds since the epoch) with the offset from
UTC it is shown in; it prints as ``absTime("2020-01-01T00:00:00+01:00")``
(an offset of zero prints as ``-00:00``, as HTCondor does). A relative time
is a number of seconds and prints as ``relTime("[-][D+]HH:MM:SS")`` with the
leading zero parts left out. Arithmetic follows HTCondor: absolute plus or
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


class RelTime:
    __slots__ = ("secs",)

    def __init__(self, secs):
        self.secs = secs

    def whole(self):
        """The seconds as HTCondor reads them to print them: a C int (cut towards zero;
        out of range, INF or NaN, INT32_MIN): HTCondor holds them as a double."""
        return to_int32(self.secs)

    def text(self):
        whole = self.whole()
        sign = "-" if whole < 0 else ""
        if whole == INT32_MIN:
            # HTCondor negates it as a C int, where it stays negative, and divides it as C
            # does (towards zero): every part comes out negative
            days, rest = -(-whole // 86400), -(-whole % 86400)
            hours, rest = -(-rest // 3600), -(-rest % 3600)
            minutes, secs = -(-rest // 60), -(-rest % 60)
            return f"{sign}{days}+{hours:02d}:{minutes:02d}:{secs:02d}"
        days, rest = divmod(abs(whole), 86400)
        hours, rest = divmod(rest, 3600)
        minutes, secs = divmod(rest, 60)
        if days:
            return f"{sign}{days}+{hours:02d}:{minutes:02d}:{secs:02d}"
        if hours:
            return f"{sign}{hours:02d}:{minutes:02d}:{secs:02d}"
        if minutes:
            return f"{sign}{minutes:02d}:{secs:02d}"
        return f"{sign}{secs:02d}"

    def unparse(self, old=False):
        return f'relTime("{self.text()}")'

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
