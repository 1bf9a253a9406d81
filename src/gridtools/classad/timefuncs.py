"""Built-in functions of time values: absTime(), relTime(), isAbsTime(),
isRelTime(), interval(), formatTime(), splitTime() and the get functions of
their parts (getYear() ... getSeconds(), getDays()), and those of the clock:
currentTime(), timeZoneOffset() and dayTime(). Registered in ``functions.FUNCTIONS``
when first called (``functions.lookup``), with the time values (``timevals``)
they make: evaluating expressions without them loads neither.
"""

import math
import time as _time

from gridtools.classad.functions import builtin, parse_c_real
from gridtools.classad.timevals import AbsTime, RelTime, local_offset, parse_abs, parse_rel
from gridtools.classad.budget import LOOP_CHARS, MAX_STRING, built, charge
from gridtools.classad.values import ERROR, UNDEFINED, to_int32, to_int64, wrap32


@builtin("interval")
def fn_interval(seconds):
    """Seconds as ``[-][D+][H:]M:SS``, with the leading zero parts left out; the seconds
    are a C int, as HTCondor holds them (a real read as a 64-bit integer first, then
    either cut to its low 32 bits)."""
    if type(seconds) is RelTime:
        seconds = seconds.whole()
    elif type(seconds) is AbsTime:      # (its seconds since the epoch, as HTCondor converts it)
        seconds = seconds.secs
    real = parse_c_real(seconds) if type(seconds) is str else seconds
    if type(real) not in (int, float, bool):
        return ERROR
    whole = wrap32(int(real) if type(real) is not float else to_int64(real))
    sign, whole = ("-", -whole) if whole < 0 else ("", whole)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}+{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{sign}{hours}:{minutes:02d}:{secs:02d}"
    if minutes:
        return f"{sign}{minutes}:{secs:02d}"
    return f"{sign}{secs}"


def _time_arg(node, env):
    """The value of an absTime()/relTime() argument; a string written as a
    literal is marked by returning it inside a tuple."""
    from gridtools.classad.nodes import Literal
    if isinstance(node, Literal) and type(node.value) is str:
        return (node.value,)
    return node.compiled()(env)


@builtin("absTime", args=(0, 2), mode="nodes")
def fn_abs_time(env, args):
    """HTCondor's convTime: the current time without arguments; a string literal alone
    is read as a time; a second argument, the offset, must be a number or a relative
    time (else ERROR, whatever the first is); then the first: seconds (a C int), a
    relative time's seconds, an absolute time as it is (its own offset kept), a string
    computed at run time as it is, UNDEFINED as UNDEFINED, anything else ERROR."""
    if not args:
        return AbsTime(int(_time.time()))
    offset = None
    if len(args) == 1:
        when = _time_arg(args[0], env)
        if type(when) is tuple:
            parsed = parse_abs(when[0])
            return ERROR if parsed is None else parsed
    else:
        when, given = args[0].compiled()(env), args[1].compiled()(env)
        kind = type(given)
        if kind is int:
            offset = wrap32(given)
        elif kind is float:
            offset = to_int32(given)
        elif kind is RelTime:
            offset = wrap32(int(given.whole()))
        else:
            return ERROR
    kind = type(when)
    if when is UNDEFINED:
        return UNDEFINED
    if kind is int:
        return AbsTime(wrap32(when), offset)        # (seconds held in a C int)
    if kind is float:
        return AbsTime(to_int32(when), offset)
    if kind is RelTime:
        return AbsTime(int(when.whole()), offset)
    if kind is str or kind is AbsTime:
        return when
    return ERROR


@builtin("relTime", mode="nodes")
def fn_rel_time(env, args):
    """HTCondor's convTime: a string literal is read as a time when parsed, and the
    literal HTCondor makes of it evaluates to a real (ReltimeLiteral); a string computed
    at run time is a relative time of 0; a number, a relative or an absolute time gives
    a relative time of those seconds (an integer a C int); UNDEFINED and ERROR as they
    are; anything else ERROR."""
    value = _time_arg(args[0], env)
    if type(value) is tuple:
        secs = parse_rel(value[0])
        return ERROR if secs is None else float(secs)
    if value is UNDEFINED or value is ERROR:
        return value
    if type(value) is RelTime:
        return value
    if type(value) is AbsTime:
        return RelTime(value.secs)
    if type(value) is str:
        return RelTime(0)
    if type(value) not in (int, float):
        return ERROR
    return RelTime(wrap32(value) if type(value) is int else value)     # (an integer: a C int)


builtin("isAbsTime")(lambda v: type(v) is AbsTime)
builtin("isRelTime")(lambda v: type(v) is RelTime)


@builtin("formatTime", args=(0, 2))
def fn_format_time(when=None, fmt="%c"):
    """C's strftime of a time (an absolute time on its own zone's clock, a number of
    seconds on this machine's) or of an ad of its parts (as splitTime makes them: Year,
    Month, Day, Hours, Minutes, Seconds, each 0 when it is no integer; formatted by the C
    library as HTCondor formats them, days that are not in the month included)."""
    if when is None:
        when = _time.time()
    own = type(when) is AbsTime             # (its own zone's clock: the time shifted by its offset)
    parts = type(fmt) is str and _is_ad(when)
    if not parts and (type(when) not in (int, float, AbsTime) or type(fmt) is not str):
        return ERROR
    charge(len(fmt) // LOOP_CHARS)
    if len(fmt) > MAX_STRING // 64:         # (a conversion spells at most a few dozen characters)
        return ERROR
    if parts:
        return _format_parts(when, fmt)
    if type(when) is float:
        when = to_int32(when)               # (a real is cut to a C int, as HTCondor's formatTime does)
    try:
        fields = _time.gmtime(when.secs + when.offset) if own else _time.localtime(when)
        return built(_time.strftime(fmt, fields))
    except (ValueError, OverflowError, OSError):
        return ERROR


def _is_ad(value):
    from gridtools.classad.ad import ClassAd
    return isinstance(value, ClassAd)


def _fixed_day(year, month, day):
    """The day number HTCondor's fixed_from_gregorian gives (C arithmetic)."""
    leap = year % 4 == 0 and year % 400 not in (100, 200, 300)
    adjust = 0 if month <= 2 else (-1 if leap else -2)
    return (365 * (year - 1) + _c_div(year - 1, 4) - _c_div(year - 1, 100) + _c_div(year - 1, 400)
            + _c_div(367 * month - 362, 12) + adjust + day)


def _format_parts(ad, fmt):
    """formatTime of an ad of time parts: the C library's strftime of the struct tm
    HTCondor fills from them (weekday and day of the year from its own calendar)."""
    import ctypes

    def part(name):
        value = ad.eval(name)
        return wrap32(value) if type(value) is int else None
    sec, minute, hour, mday = (part(name) or 0 for name in ("Seconds", "Minutes", "Hours", "Day"))
    month, year = part("Month"), part("Year")
    mon = wrap32(month - 1) if month is not None else 0
    tm_year = wrap32(year - 1900) if year is not None else 0
    fixed = _fixed_day(tm_year + 1900, mon + 1, mday)
    wday = int(math.fmod(fixed, 7))
    yday = fixed - _fixed_day(tm_year + 1900, 1, 1)
    strftime, tm_type = _c_strftime()
    tm = tm_type(sec, minute, hour, mday, mon, tm_year, wrap32(wday), wrap32(yday), 0, 0, None)
    out = ctypes.create_string_buffer(1024)
    size = strftime(out, 1023, fmt.encode("utf-8", "surrogateescape"), ctypes.byref(tm))
    return built(out.raw[:size].decode("utf-8", "surrogateescape"))


_C_STRFTIME = []


def _c_strftime():
    """(the C library's strftime, its struct tm), made at the first call."""
    if not _C_STRFTIME:
        import ctypes

        class Tm(ctypes.Structure):
            _fields_ = [(name, ctypes.c_int) for name in ("sec", "min", "hour", "mday", "mon", "year", "wday",
                                                          "yday", "isdst")] \
                + [("gmtoff", ctypes.c_long), ("zone", ctypes.c_char_p)]
        strftime = ctypes.CDLL(None).strftime
        strftime.restype = ctypes.c_size_t
        _C_STRFTIME[:] = [strftime, Tm]
    return _C_STRFTIME


@builtin("splitTime")
def fn_split_time(when):
    """The parts of a time value as an ad: of a relative time, Days, Hours, Minutes and
    Seconds (a real), the sign on the first part that is not zero; of an absolute time
    (or a number of seconds since the epoch), Year, Month, Day, Hours, Minutes, Seconds
    and Offset, on the clock of its own zone (a number's: this machine's)."""
    from gridtools.classad.ad import ClassAd
    if when is UNDEFINED:
        return UNDEFINED
    if type(when) is RelTime:
        secs = when.secs
        negative, secs = secs < 0, abs(secs)
        days, rest = divmod(int(secs), 86400)
        hours, rest = divmod(rest, 3600)
        minutes, whole = divmod(rest, 60)
        parts = [days, hours, minutes, float(whole) + (secs - int(secs))]
        if negative:
            first = next((i for i, part in enumerate(parts) if part), 3)
            parts[first] = -parts[first]
        return ClassAd({"Type": "RelativeTime", "Days": parts[0], "Hours": parts[1],
                        "Minutes": parts[2], "Seconds": parts[3]})
    if type(when) is AbsTime:
        secs, offset = when.secs, when.offset
    elif type(when) in (int, float):
        secs = int(when)
        offset = local_offset(secs)
    else:
        return ERROR
    try:
        fields = _time.gmtime(secs + offset)
    except (ValueError, OverflowError, OSError):
        return ERROR
    return ClassAd({"Type": "AbsoluteTime", "Year": fields.tm_year, "Month": fields.tm_mon,
                    "Day": fields.tm_mday, "Hours": fields.tm_hour, "Minutes": fields.tm_min,
                    "Seconds": fields.tm_sec, "Offset": offset})


#: what each get function reads of an absolute time (this machine's clock) ...
_ABS_PARTS = {"getyear": lambda t: t.tm_year, "getmonth": lambda t: t.tm_mon,
              "getdayofmonth": lambda t: t.tm_mday, "getdayofweek": lambda t: (t.tm_wday + 1) % 7,
              "getdayofyear": lambda t: t.tm_yday - 1, "gethours": lambda t: t.tm_hour,
              "getminutes": lambda t: t.tm_min, "getseconds": lambda t: t.tm_sec}
#: ... and of a relative time (its whole seconds, parts cut towards zero as C divides)
_REL_PARTS = {"getdays": lambda s: _c_div(s, 86400), "gethours": lambda s: _c_div(_c_mod(s, 86400), 3600),
              "getminutes": lambda s: _c_div(_c_mod(s, 3600), 60), "getseconds": lambda s: _c_mod(s, 60)}


def _c_div(a, b):
    return -(-a // b) if a < 0 else a // b


def _c_mod(a, b):
    return a - b * _c_div(a, b)


def _getter(name):
    def get(when):
        if type(when) is AbsTime and name in _ABS_PARTS:
            try:
                return _ABS_PARTS[name](_time.localtime(when.secs))
            except (ValueError, OverflowError, OSError):
                return ERROR
        if type(when) is RelTime and name in _REL_PARTS:
            return _REL_PARTS[name](int(when.secs))
        return ERROR
    return get


for _name in ("getYear", "getMonth", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours",
              "getMinutes", "getSeconds", "getDays"):
    builtin(_name)(_getter(_name.lower()))
del _name


# ------------------------------------------------------------------ the clock

@builtin("currentTime", args=(0, 0))
def fn_current_time():
    """The current time as an absolute time (in the local zone), as ``absTime()``."""
    return AbsTime(int(_time.time()))


@builtin("timeZoneOffset", args=(0, 0))
def fn_time_zone_offset():
    """The local time zone's offset from UTC now, as a relative time."""
    return RelTime(local_offset(int(_time.time())))


@builtin("dayTime", args=(0, 0))
def fn_day_time():
    """The seconds since local midnight, as a relative time."""
    now = _time.localtime(int(_time.time()))
    return RelTime(now.tm_hour * 3600 + now.tm_min * 60 + now.tm_sec)
