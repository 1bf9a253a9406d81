"""The function forms of submit-description macros other than ``$F``: ``$ENV``,
``$INT``, ``$REAL``, ``$SUBSTR``, ``$CHOICE``, ``$RANDOM_CHOICE`` and
``$RANDOM_INTEGER`` (see ``macros``). Each takes the ``Expander`` at work, the
function's name in capitals, the text between its parentheses and the nesting
depth, and returns the text it expands to."""

from gridtools.formats.condor.macros import MacroProblem


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
    args = split_args(body)
    text = exp.value_of(args[0], depth)
    value = _evaluate(text)
    kind = "integer" if fname == "INT" else "real"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MacroProblem(f"${fname}() macro: {text} does not evaluate to an "
                           f"{'integer' if fname == 'INT' else 'real'}!")
    if kind == "integer":
        value = int(value)
        fmt = args[1] if len(args) > 1 else "%d"
    else:
        value = float(value)
        fmt = args[1] if len(args) > 1 else "%.16G"
    try:
        return fmt % value
    except (TypeError, ValueError):
        raise MacroProblem(f"${fname}() macro: bad format {fmt}") from None


def _substr(exp, _fname, body, depth):
    args = split_args(body)
    text = exp.value_of(args[0], depth)
    try:
        start = int(_evaluate(exp.expand(args[1], depth + 1)))
        length = int(_evaluate(exp.expand(args[2], depth + 1))) if len(args) > 2 else None
    except (IndexError, TypeError, ValueError):
        raise MacroProblem(f"$SUBSTR() macro: {body} is not valid") from None
    if start < 0:
        start = max(0, len(text) + start)
    if length is None:
        return text[start:]
    return text[start:start + length] if length >= 0 else text[start:length]


def _choice(exp, _fname, body, depth):
    args = split_args(exp.expand(body, depth + 1))
    index_text = exp.value_of(args[0], depth) if args else ""
    index = _evaluate(index_text)
    items = args[1:]
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(items):
        raise MacroProblem(f"$CHOICE() macro: {index_text} is invalid index!")
    return items[index]


def _random_choice(exp, _fname, body, depth):
    items = split_args(exp.expand(body, depth + 1))
    return _random(exp).choice(items)


def _random_integer(exp, _fname, body, depth):
    args = split_args(exp.expand(body, depth + 1))
    try:
        low, high = int(args[0]), int(args[1])
        step = int(args[2]) if len(args) > 2 else 1
    except (IndexError, ValueError):
        raise MacroProblem(f"$RANDOM_INTEGER() macro: invalid arguments: {body}") from None
    if step < 1 or high < low:
        raise MacroProblem(f"$RANDOM_INTEGER() macro: invalid arguments: {body}")
    return str(low + step * _random(exp).randint(0, (high - low) // step))


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
    "SUBSTR": _substr,
    "CHOICE": _choice,
    "RANDOM_CHOICE": _random_choice,
    "RANDOM_INTEGER": _random_integer,
}
