"""ClassAd values: the UNDEFINED and ERROR singletons, type helpers, and the
canonical spelling of every value (strings with escapes, reals as HTCondor
prints them, lists and nested ads).

A value is a Python ``bool``, ``int``, ``float``, ``str``, ``list``, a
``ClassAd``, or one of the two singletons. ``bool`` is tested before ``int``
everywhere (``type(v) is bool``), because in the ClassAd language booleans
and integers are different types.
"""

INT64_MIN = -(1 << 63)
INT64_MASK = (1 << 64) - 1


class Special:
    """The type of UNDEFINED and ERROR: ordinary values, never exceptions."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name.upper()

    def __bool__(self):
        raise TypeError(f"the ClassAd value {self.name.upper()} has no Python truth value")

    def __reduce__(self):
        return (_special, (self.name,))


def _special(name):
    return UNDEFINED if name == "undefined" else ERROR


UNDEFINED = Special("undefined")
ERROR = Special("error")

NUMBER_TYPES = (int, float, bool)


def wrap64(value):
    """Wrap an integer to a signed 64-bit value, as the C++ library's arithmetic does."""
    if INT64_MIN <= value <= ~INT64_MIN:
        return value
    value &= INT64_MASK
    return value - (1 << 64) if value >> 63 else value


def is_number(value):
    """True for int and float (booleans are not numbers here)."""
    t = type(value)
    return t is int or t is float


def truth(value):
    """True/False for values that count as booleans (bool, int, real); None otherwise."""
    t = type(value)
    if t is bool:
        return value
    if t is int or t is float:
        return value != 0
    return None


def format_real(value):
    """A real as HTCondor prints it: ``%.15E`` (``1.500000000000000E+00``),
    except that zero is ``0.0`` or ``-0.0`` and the values with no digits are
    ``real("INF")``, ``real("-INF")`` and ``real("NaN")``."""
    if value == 0.0:
        return "-0.0" if str(float(value))[0] == "-" else "0.0"
    if value != value:
        return 'real("NaN")'
    if value in _INFINITIES:
        return 'real("INF")' if value > 0 else 'real("-INF")'
    return "%.15E" % value


_INFINITIES = (float("inf"), float("-inf"))     # (``math`` is not imported: it costs a command 50 µs)


def wrap32(number):
    """An integer as a C int holds it (the low 32 bits, signed)."""
    return ((number + 2147483648) & 0xFFFFFFFF) - 2147483648


def to_int32(real):
    """A real converted to a C int as x86-64 does it (INT32_MIN when out of range)."""
    if real != real or not -2147483648.0 <= real < 2147483648.0:
        return -2147483648
    return int(real)


def format_real_old(value):
    """A real as the long form of an ad prints it (``condor_q -l``):
    ``%.16G`` with ``.0`` added when it would read as an integer; zero, infinities and
    NaN as ``format_real`` writes them (HTCondor's unparser tests for those first)."""
    if value != value or value in _INFINITIES or value == 0.0:
        return format_real(value)
    text = "%.16G" % value
    if "." not in text and "E" not in text:
        text += ".0"
    return text


def to_int64(real):
    """A real converted to a 64-bit integer as a C cast on x86-64 does it:
    truncated toward zero, and INT64_MIN when it is out of range or NaN."""
    if real != real or not -9.2233720368547758e18 <= real < 9.2233720368547758e18:
        return INT64_MIN
    return int(real)


_ESCAPES = {
    "\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r",
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\v": "\\v",
}


def quote_string(text, delimiter='"'):
    """A string literal with the escapes the parser understands."""
    out = [delimiter]
    for ch in text:
        if ch == delimiter:
            out.append("\\" + ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append("\\%03o" % ord(ch))
        else:
            out.append(ch)
    out.append(delimiter)
    return "".join(out)


RESERVED_WORDS = frozenset(("true", "false", "undefined", "error", "is", "isnt", "parent"))


#: names quote_name has spelled (cleared when it holds QUOTED_NAMES_KEPT)
_QUOTED = {}
QUOTED_NAMES_KEPT = 4096


def quote_name(name):
    """An attribute name, quoted with single quotes when it is not an identifier
    (remembered: the same few names are written again and again)."""
    found = _QUOTED.get(name)
    if found is None:
        if name.isascii() and name.isidentifier() and name.lower() not in RESERVED_WORDS:
            found = name
        else:
            found = quote_string(name, "'")
        if len(_QUOTED) >= QUOTED_NAMES_KEPT:
            _QUOTED.clear()
        _QUOTED[name] = found
    return found


def quote_selected(name):
    """A name after a dot (``MY.parent``, ``x.name``), quoted as ``quote_name`` quotes
    but for ``parent``, which HTCondor's unparser prints bare there."""
    if name.lower() == "parent":
        return name
    return quote_name(name)


#: the evaluation going on (None outside of one), whose cost ``budget`` counts: here so
#: that spelling a list (below) charges it without loading ``budget`` for commands that
#: evaluate nothing
_CURRENT = [None]


def _old_string(text):
    """A string in the long form's spelling: only its quotes escaped (a backslash is
    itself in the old syntax), but a character that ends a line (``str.splitlines``)
    written as an escape, which the old syntax reads as the characters of the escape:
    the long form holds one attribute a line, and a value must not add lines to it (a
    job's history). HTCondor writes them as they are."""
    text = text.replace('"', '\\"')
    if text and text.splitlines() != [text]:
        text = "".join(("\\%03o" % ord(ch) if ord(ch) < 256 else "\\u%04x" % ord(ch))
                       if ch.splitlines() != [ch] else ch for ch in text)
    return '"' + text + '"'


def unparse_value(value, old=False):
    """The canonical spelling of a value (``"a"``, ``1``, ``1.5``, ``{ 1,2 }``);
    with ``old`` the long form's spelling (reals ``%.16G``, strings with only
    their quotes escaped and the characters that end a line as escapes,
    ``_old_string``)."""
    t = type(value)
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return str(value)
    if t is float:
        return format_real_old(value) if old else format_real(value)
    if t is str:
        return _old_string(value) if old else quote_string(value)
    if t is list:
        if _CURRENT[0] is not None:     # (a list may hold the same list many times over)
            from gridtools.classad.budget import LOOP_CHARS, charge
            charge(len(value) + sum(len(v) for v in value if type(v) is str) // LOOP_CHARS)
        return "{ " + ",".join(unparse_value(v, old) for v in value) + " }"
    if t is Special:
        return value.name
    unparse = getattr(value, "unparse", None)
    if unparse is not None:
        return unparse(old)
    raise TypeError(f"not a ClassAd value: {value!r}")


def type_name(value):
    """The ClassAd type name of a value, for messages."""
    t = type(value)
    names = {bool: "boolean", int: "integer", float: "real", str: "string", list: "list"}
    if t in names:
        return names[t]
    if t is Special:
        return value.name
    return "classad"
