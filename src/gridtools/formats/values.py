"""Grid Engine value syntax: time and memory specifiers, booleans, INFINITY.

Time: ``[[hours:]minutes:]seconds`` with any field possibly empty or longer
than two digits (``0:0:15``, ``00:5:00``, ``3600``, ``1:30``), or
``INFINITY``. Memory: a number with an optional multiplier ``k``/``m``/``g``/
``t`` (powers of 1000) or ``K``/``M``/``G``/``T`` (powers of 1024), or
``INFINITY``. Parsing functions raise ``InputError`` with a one-line message.
Kept free of imports beyond the standard library core: qsub uses it.
"""

from gridtools.errors import InputError

INFINITY = float("inf")

_MEM_FACTORS = {
    "k": 1000, "m": 1000 ** 2, "g": 1000 ** 3, "t": 1000 ** 4,
    "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4,
}


def _number(text):
    try:
        return int(text)
    except ValueError:
        return float(text)


def parse_time(text):
    """Seconds (int, or float for fractional input) for a time specifier."""
    s = text.strip()
    if s.upper() == "INFINITY":
        return INFINITY
    parts = s.split(":")
    if len(parts) > 3 or not s:
        raise InputError(f'invalid time value "{text}"')
    total = 0
    try:
        for part in parts:
            value = _number(part) if part else 0
            if value < 0:
                raise ValueError
            total = total * 60 + value
    except ValueError:
        raise InputError(f'invalid time value "{text}"') from None
    return total


def format_time(seconds, width=2):
    """``H:MM:SS`` with two-digit fields (``00:05:00``); INFINITY for infinity."""
    if seconds == INFINITY:
        return "INFINITY"
    seconds = int(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h:0{width}d}:{m:02d}:{s:02d}"


def parse_memory(text):
    """Bytes (int, or float for fractional input) for a memory specifier."""
    s = text.strip()
    if s.upper() == "INFINITY":
        return INFINITY
    factor = 1
    if s and s[-1] in _MEM_FACTORS:
        factor = _MEM_FACTORS[s[-1]]
        s = s[:-1]
    try:
        value = _number(s)
    except ValueError:
        raise InputError(f'invalid memory value "{text}"') from None
    if value < 0:
        raise InputError(f'invalid memory value "{text}"')
    result = value * factor
    if isinstance(result, float) and result.is_integer():
        return int(result)
    return result


def format_memory(nbytes):
    """Compact memory text with the largest 1024 multiplier that fits (``1.500G``)."""
    if nbytes == INFINITY:
        return "INFINITY"
    for suffix, factor in (("T", 1024 ** 4), ("G", 1024 ** 3), ("M", 1024 ** 2), ("K", 1024)):
        if nbytes >= factor:
            value = nbytes / factor
            return f"{value:.3f}{suffix}" if not float(value).is_integer() else f"{int(value)}{suffix}"
    return str(int(nbytes)) if float(nbytes).is_integer() else f"{nbytes:.3f}"


def parse_bool(text):
    """TRUE/FALSE in any case, also 1/0, y/n, yes/no."""
    s = text.strip().lower()
    if s in ("true", "t", "1", "yes", "y"):
        return True
    if s in ("false", "f", "0", "no", "n"):
        return False
    raise InputError(f'invalid boolean value "{text}"')


def parse_number(text):
    """An int or float; raises InputError otherwise."""
    try:
        return _number(text.strip())
    except ValueError:
        raise InputError(f'invalid number "{text}"') from None
