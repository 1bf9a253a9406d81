"""The function forms of submit-description macros other than ``$F``: ``$ENV``,
``$INT``, ``$REAL``, ``$STRING``, ``$EVAL``, ``$SUBSTR``, ``$CHOICE``,
``$RANDOM_CHOICE``, ``$RANDOM_INTEGER``, ``$BASENAME`` and ``$DIRNAME`` (see
``macros``). Each takes the ``Expander`` at work, the function's name in
capitals, the text between its parentheses and the nesting depth, and returns
the text it expands to. A problem is refused in HTCondor's words (its
condor_submit stops there too); while condor_submit builds jobs
(``Expander.report`` set) the refusal says where, as HTCondor 24's does (see
``problem``).

The format of ``$INT``, ``$REAL`` and ``$STRING`` (what follows the first
comma, blanks kept) is C's printf format as HTCondor accepts it: exactly one
conversion of the value's type (``d i o u x X c`` or ``p`` for an integer,
``e E f F g G a A`` or ``p`` for a real, ``s`` for a text; flags, a width, a
precision and length letters allowed, no ``*``), with any text and ``%%``
around it.
"""

import re

from gridtools.formats.condor.macros import MacroProblem, filename_part, is_name


def problem(exp, message):
    """The error to raise for a function's problem ``message``: ``exp.report``'s (the
    refusal that says the queue statement and the job, see ``submit.MacroReport``), or
    a MacroProblem when the expansion has none."""
    report = getattr(exp, "report", None)
    return MacroProblem(message) if report is None else report(exp, message)


def split_args(body):
    return [part.strip() for part in body.split(",")]


def _env(exp, _fname, body, depth):
    name, colon, default = exp.expand(body, depth + 1).partition(":")
    environ = exp.environ
    if callable(environ):                   # (the function that gives it: see Expander)
        environ = exp.environ = environ()
    value = environ.get(name.strip())
    if value is None:
        return default if colon else "UNDEFINED"
    return value


def _evaluate(text):
    from gridtools.classad import ERROR, UNDEFINED, parse
    try:
        return parse(text).eval()
    except Exception:  # any text that is no expression
        return ERROR if text else UNDEFINED


def _number(exp, fname, body, depth):
    name, comma, fmt = body.partition(",")
    spec = _conversion(fmt, _INT_CONVERSIONS if fname == "INT" else _REAL_CONVERSIONS) if comma else None
    if comma and spec is None:
        raise problem(exp, f"${fname}() macro: '{fmt}' is not a valid format specifier!")
    text = exp.value_of(name.strip(), depth)
    value = _evaluate(text)
    if not isinstance(value, (int, float)) or (fname == "INT" and isinstance(value, float)
                                                and (value != value or abs(value) == float("inf"))):
        # (true and false count as 1 and 0; an infinite or undefined real has no integer)
        raise problem(exp, f"${fname}() macro: {text} does not evaluate to an "
                      f"{'integer' if fname == 'INT' else 'real'}!")
    if fname == "INT":
        return c_format(fmt, spec, int(value)) if comma else str(int(value))
    if not comma:
        return _c_conversion("%.16G", float(value))
    found = c_format(fmt, spec, float(value))
    return found if "." in found else found + ".0"      # (HTCondor's: it looks like a real)


def _string(exp, _fname, body, depth):
    """``$STRING(name[,format])``: the macro's value (or the text itself), and when that
    is an expression that evaluates to a string, the string."""
    name, comma, fmt = body.partition(",")
    spec = _conversion(fmt, "sS") if comma else None
    if comma and spec is None:
        raise problem(exp, f"$STRING macro: '{fmt}' is not a valid format specifier!")
    text = exp.value_of(name.strip(), depth)
    value = _evaluate(text)
    if isinstance(value, str):
        text = value
    return c_format(fmt, spec, text) if comma else text


def _eval(exp, _fname, body, depth):
    """``$EVAL(name or expression)``: what the expression evaluates to in an empty ad, a
    string as it is, any other value unparsed; nothing when it does not parse (but the
    expansion of a text that referred to macros)."""
    from gridtools.classad import parse, unparse_value
    key = body.strip()
    raw = exp.lookup(key) if is_name(key) else None
    raw = body if raw is None else raw
    text = exp.expand(raw, depth + 1)
    try:
        value = parse(text).eval()
    except Exception:  # noqa: BLE001 - a text that is no expression
        return text if "$" in raw else ""
    return value if isinstance(value, str) else unparse_value(value)


def _path_part(exp, fname, body, depth):
    """``$BASENAME(name[, suffix])``: the file name of the macro's value (or of the text
    itself), without ``suffix`` when it ends with it (in any case); ``$DIRNAME(name)``:
    its folder, with the slash."""
    suffix = None
    if fname == "BASENAME":
        head, comma, tail = body.rpartition(",")
        if comma:
            body, suffix = head, tail.lstrip()
    path = exp.value_of(body.strip(), depth)
    if fname == "DIRNAME":
        return filename_part(path, "p")
    name = filename_part(path, "nx")
    if suffix is not None and len(name) >= len(suffix) and name.lower().endswith(suffix.lower()):
        name = name[:len(name) - len(suffix)]
    return name


# ---------------------------------------------------------------- C formats

#: one printf conversion: flags, width, precision, length letters, the conversion letter
_SPEC = re.compile(r"%([-+ #0']*)(\d*)(?:\.(\d*))?([hlLqjzt]*)([a-zA-Z%])")
_INT_CONVERSIONS = "diouxXcCp"
_REAL_CONVERSIONS = "eEfFgGaAp"
#: bits an integer conversion prints by its length letters (C converts the value to them)
_BITS = {"": 32, "h": 16, "hh": 8}


def _conversion(fmt, allowed):
    """The match of the one conversion of ``fmt`` (``%%`` aside) when it is one of
    ``allowed``; None when ``fmt`` has none, another, or more than one."""
    found, at = None, fmt.find("%")
    while at >= 0:
        spec = _SPEC.match(fmt, at)
        if spec is None:
            return None
        if spec.group(5) != "%":
            if found is not None or spec.group(5) not in allowed:
                return None
            found = spec
        at = fmt.find("%", spec.end())
    return found


def c_format(fmt, spec, value):
    """``fmt`` applied to ``value`` as C's printf does (``spec``: its one conversion, as
    ``_conversion`` found it for the value's type)."""
    return (fmt[:spec.start()].replace("%%", "%") + _c_conversion(spec.group(0), value)
            + fmt[spec.end():].replace("%%", "%"))


def _c_conversion(text, value):
    flags, width, precision, length, letter = _SPEC.match(text).groups()
    flags = flags.replace("'", "")                  # (no grouping in the C locale)
    if letter == "p":                               # (the value as an address)
        letter, flags, value = "x", flags + "#", int(value)
    elif letter == "C":
        letter = "c"
    if letter == "S":
        letter = "s"
    if isinstance(value, int) and letter in "diouxXc":
        bits = _BITS.get(length, 64)
        value &= (1 << bits) - 1
        if letter in "di" and value >= 1 << (bits - 1):
            value -= 1 << bits
        if letter == "c":
            return ("%" + flags + width + "s") % chr(value & 0xFF)
        letter = "d" if letter in "iu" else letter
    if letter in "aA":
        return ("%" + flags + width + "s") % _hex_real(value, letter == "A")
    return ("%" + flags + width + ("." + precision if precision is not None else "") + letter) % value


def _hex_real(value, upper):
    """C's %a of ``value``: its hexadecimal form, without trailing zeros."""
    text = float(value).hex()
    if "." in text:
        mantissa, _, exponent = text.partition("p")
        text = mantissa.rstrip("0").rstrip(".") + "p" + exponent
    return text.upper() if upper else text


def _substr(exp, _fname, body, depth):
    """``$SUBSTR(name, start[, length])`` of the macro ``name``; one not defined is the
    text itself in a configuration, and nothing in a submit description, as HTCondor
    reads them (``exp.names_only``)."""
    args = split_args(body)
    if getattr(exp, "names_only", False):
        raw = exp.lookup(args[0]) if args and is_name(args[0]) else None
        text = exp.expand(raw, depth + 1) if raw is not None else ""
    else:
        text = exp.value_of(args[0], depth)
    if len(args) < 2:
        raise problem(exp, "$SUBSTR() macro: no length specified!")
    start, length = (_substr_number(exp, arg, depth) for arg in (args[1], args[2] if len(args) > 2 else "0"))
    if start is None:
        raise problem(exp, f"$SUBSTR() macro: {exp.expand(args[1], depth + 1)} is invalid start index!")
    if length is None:
        raise problem(exp, f"$SUBSTR() macro: {exp.expand(args[2], depth + 1)} is invalid length !")
    if len(args) < 3:
        length = None
    if start < 0:
        start = max(0, len(text) + start)
    if length is None:
        return text[start:]
    return text[start:start + length] if length >= 0 else text[start:length]


def _substr_number(exp, arg, depth):
    """The whole number a $SUBSTR position argument expands to, or None."""
    try:
        return int(_evaluate(exp.expand(arg, depth + 1)))
    except (TypeError, ValueError):
        return None


def _choice(exp, _fname, body, depth):
    """``$CHOICE(index, item, item ...)``, or ``$CHOICE(index, name)`` of the macro that
    holds the items; the items are separated by commas."""
    first, _, rest = body.partition(",")
    index_text = exp.value_of(first.strip(), depth)
    index = _evaluate(index_text)
    if not isinstance(index, (int, float)) or index < 0:
        raise problem(exp, f"$CHOICE() macro: {index_text} is invalid index!")
    items = split_args(exp.expand(rest, depth + 1))
    if len(items) == 1:                             # the name of the macro of the list
        raw = exp.lookup(items[0]) if is_name(items[0]) else None
        if raw is None:
            raise problem(exp, f'$CHOICE() macro: no list named "{items[0]}"!')
        items = split_args(exp.expand(raw, depth + 1))
    if int(index) >= len(items):
        raise problem(exp, f"$CHOICE() config macro: index {int(index)} is out of range!")
    return items[int(index)]


def _random_choice(exp, _fname, body, depth):
    items = split_args(exp.expand(body, depth + 1))
    return _random(exp).choice(items)


def _random_integer(exp, _fname, body, depth):
    return random_integer(exp.expand(body, depth + 1), _random(exp), exp)


def _leading_long(text):
    """The whole number C's strtol reads at the start of ``text``, or None."""
    m = re.match(r"\s*[+-]?[0-9]+", text)
    return int(m.group()) if m else None


def random_integer(body, rng, exp=None):
    """``$RANDOM_INTEGER(min,max[,step])`` of its expanded arguments ``body``: a multiple
    of step above min, up to max, drawn from ``rng`` (a ``random.Random``). As
    HTCondor's expansion of configurations and submit descriptions (one code, its
    words say "config macro" in both) reads it: the arguments are separated by
    commas, empty ones left out, each read as C's strtol reads a number; one that is
    not a number is refused, as is a step below 1 and a min above max (through
    ``problem`` of ``exp``, the expansion at work, if any)."""
    args = [part.strip() for part in body.split(",")]
    args = [part for part in args if part]
    low = _leading_long(args[0]) if args else None
    if low is None:
        raise problem(exp, "$RANDOM_INTEGER() config macro: invalid min!")
    high = _leading_long(args[1]) if len(args) > 1 else None
    if high is None:
        raise problem(exp, "$RANDOM_INTEGER() config macro: invalid max!")
    step = _leading_long(args[2]) if len(args) > 2 else 1
    if step is None or step < 1:
        raise problem(exp, "$RANDOM_INTEGER() config macro: invalid step!")
    if low > high:
        raise problem(exp, "$RANDOM_INTEGER() config macro: min > max!")
    return str(low + rng.randrange((step + high - low) // step) * step)


def _random(exp):
    """The expander's ``random.Random`` (made at the first draw from the function it was
    given, see macros.Expander)."""
    rng = exp.rng
    if callable(rng):
        rng = exp.rng = rng()
    return rng


FUNCTIONS = {
    "ENV": _env,
    "INT": _number,
    "REAL": _number,
    "STRING": _string,
    "EVAL": _eval,
    "SUBSTR": _substr,
    "CHOICE": _choice,
    "BASENAME": _path_part,
    "DIRNAME": _path_part,
    "RANDOM_CHOICE": _random_choice,
    "RANDOM_INTEGER": _random_integer,
}
