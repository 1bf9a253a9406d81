"""Grid Engine value syntax: time and memory specifiers, booleans, INFINITY.

Time, read as Grid Engine reads it (sge_parse_num_par.c): ``hours:minutes:seconds``
with exactly three fields, any of them empty or longer than two digits and each
a number as C's strtod reads it (``0:0:15``, ``00:5:00``, ``1::``, ``::30``);
or a number of seconds, decimal (``3600``, ``1.5``, ``2e3``), hexadecimal
(``0x10``) or octal after a leading zero (``010`` is 8), with an optional
multiplier ``k``/``m``/``g`` (powers of 1000) or ``K``/``M``/``G`` (powers of
1024); or ``INFINITY``. ``1:30`` (two fields) is no time value. Memory, read
the same way (a number of bytes: decimal, hexadecimal or octal, or three
colon-separated fields weighing 3600, 60 and 1), with ``t``/``T`` allowed
besides (powers of 1000 and 1024: what ``format_memory`` prints), or
``INFINITY``. ``true`` and ``false`` are 1 and 0 in both, as Grid Engine takes
them for any number. Parsing functions raise ``InputError`` with a one-line
message.
Kept free of imports beyond the standard library core: qsub uses it.
"""

from gridtools.errors import InputError

INFINITY = float("inf")

#: the largest time value in seconds (Grid Engine keeps times as unsigned 32-bit numbers)
TIME_MAX = 2 ** 32 - 1
#: the largest memory value in bytes (a 64-bit resource limit)
MEMORY_MAX = 2 ** 63 - 1
#: complex attribute type -> the words Grid Engine's "is not a ... value" message uses
TYPE_WORDS = {"INT": "integer value", "DOUBLE": "double value", "TIME": "time value",
              "MEMORY": "memory value", "BOOL": "boolean value"}
_DIGITS = frozenset("0123456789")

_MEM_FACTORS = {
    "k": 1000, "m": 1000 ** 2, "g": 1000 ** 3, "t": 1000 ** 4,
    "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4,
}


def _digits(text):
    return bool(text) and all(c in _DIGITS for c in text)


def _number(text):
    """An int or a finite float written in plain decimal (``12``, ``-1.5``, ``2e3``);
    ValueError for anything else (``inf``, ``nan``, ``1_000``, non-ASCII digits)."""
    body = text[1:] if text[:1] in ("+", "-") else text
    mantissa, e, exponent = body.lower().partition("e")
    whole, dot, fraction = mantissa.partition(".")
    if not (_digits(whole) or _digits(fraction)) or (whole and not _digits(whole)) \
            or (fraction and not _digits(fraction)):
        raise ValueError(text)
    if e and not _digits(exponent[1:] if exponent[:1] in ("+", "-") else exponent):
        raise ValueError(text)
    if not dot and not e:
        return int(text)
    value = float(text)
    if value in (INFINITY, -INFINITY):
        raise ValueError(text)
    return value


_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
#: the multipliers Grid Engine allows after a number of seconds (no t/T, unlike memory)
_TIME_FACTORS = {c: f for c, f in _MEM_FACTORS.items() if c not in "tT"}
#: the words Grid Engine reads as numbers (sge_parse_num_val)
_BOOLEANS = {"true": 1, "false": 0}


def _scan(text, i, allowed):
    while i < len(text) and text[i] in allowed:
        i += 1
    return i


def _strtod(text, i):
    """``(value, end)`` for the number at ``text[i:]`` as C's strtod reads it (blanks,
    a sign, decimal digits with a fraction and exponent, or ``0x`` hex digits); ``end``
    is ``i`` (and the value 0) when no number starts there."""
    j = _scan(text, i, " \t\n\v\f\r")
    sign = -1 if text[j:j + 1] == "-" else 1
    j += text[j:j + 1] in ("+", "-")
    if text[j:j + 2] in ("0x", "0X") and text[j + 2:j + 3] in _HEX and text[j + 2:j + 3]:
        k = _scan(text, j + 2, _HEX)
        return sign * int(text[j + 2:k], 16), k
    k = _scan(text, j, _DIGITS)
    whole = k > j
    if text[k:k + 1] == ".":
        m = _scan(text, k + 1, _DIGITS)
        if whole or m > k + 1:
            k = m
    if k == j or text[j:k] == ".":
        return 0, i
    if text[k:k + 1] in ("e", "E"):
        m = k + 1 + (text[k + 1:k + 2] in ("+", "-"))
        e = _scan(text, m, _DIGITS)
        if e > m:
            k = e
    number = text[j:k]
    return sign * (int(number) if _digits(number) else float(number)), k


def _seconds(text, factors=_TIME_FACTORS):
    """Seconds for the time ``text`` (stripped, not INFINITY), or the amount of another
    number Grid Engine reads the same way with multipliers ``factors``; ValueError when
    it is none."""
    if text.lower() in _BOOLEANS:
        return _BOOLEANS[text.lower()]
    if ":" in text:
        total, i = 0, 0
        for field, weight in enumerate((3600, 60, 1)):
            value, i = _strtod(text, i)
            if value < 0 or value != value or value == INFINITY:
                raise ValueError(text)
            total += value * weight
            if field < 2:
                if text[i:i + 1] != ":":
                    raise ValueError(text)
                i += 1
        if text[i:].strip():
            raise ValueError(text)
        return total
    if "." in text or text[:1] != "0":
        value, i = _strtod(text, 0)
        if i == 0 or value < 0 or value != value or value == INFINITY:
            raise ValueError(text)
    else:                                           # hexadecimal or octal, as strtol(.., 0)
        if text[:2] in ("0x", "0X") and text[2:3] and text[2:3] in _HEX:
            i = _scan(text, 2, _HEX)
            value = int(text[2:i], 16)
        else:
            i = _scan(text, 0, _OCTAL)
            value = int(text[:i], 8)
    rest = text[i:]
    if rest:
        if rest not in factors:
            raise ValueError(text)
        value *= factors[rest]
    return value


def parse_time(text):
    """Seconds (int, or float for a fractional value) for a time specifier; INFINITY."""
    s = text.strip()
    if s.upper() == "INFINITY":
        return INFINITY
    try:
        total = _seconds(s) if s else None
    except ValueError:
        total = None
    if total is None:
        raise InputError(f'invalid time value "{text}"')
    if total > TIME_MAX:
        raise InputError(f'"{text}" is out of range (at most {TIME_MAX} seconds)')
    if isinstance(total, float) and total.is_integer():
        return int(total)
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
    try:
        result = _seconds(s, _MEM_FACTORS) if s else None
    except ValueError:
        result = None
    if result is None:
        raise InputError(f'invalid memory value "{text}"')
    if result > MEMORY_MAX:
        raise InputError(f'"{text}" is out of range (at most {MEMORY_MAX} bytes)')
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
    """An int or finite float in decimal notation; raises InputError otherwise."""
    try:
        return _number(text.strip())
    except ValueError:
        raise InputError(f'invalid number "{text}"') from None


def parse_typed(type_name, text):
    """The value of ``text`` for a complex attribute of type ``type_name`` (complex(5)):
    a number, seconds, bytes or a bool; other types (strings, hosts) give the text.
    Raises InputError."""
    if type_name == "INT":
        value = parse_number(text)
        if not isinstance(value, int):
            raise InputError(f'invalid integer "{text}"')
        return value
    parse = {"DOUBLE": parse_number, "TIME": parse_time, "MEMORY": parse_memory,
             "BOOL": parse_bool}.get(type_name)
    return text if parse is None else parse(text)


def not_a_value(name, type_name):
    """Grid Engine's line for a value of the wrong type: attribute "h_rt" is not a time value."""
    return f'attribute "{name}" is not a {TYPE_WORDS.get(type_name, "valid value")}'
