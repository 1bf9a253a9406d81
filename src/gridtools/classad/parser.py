"""Parsing ClassAd text: expressions, bracketed ads and long-form ads.

A lone literal or name (most values in ads) is read here; any other text
goes to the reader of the grammar (``grammar``, imported on the first such
text only, through ``_parser``). Parsed expressions are cached by their
text. This module
imports neither ``re`` nor ``os``: reading and building a plain job's ad on
condor_submit's path costs no more than its own work.
"""

from gridtools.classad import nodes
from gridtools.classad.values import ERROR, UNDEFINED
from gridtools.errors import SyntaxProblem

MAX_DEPTH = 300  # deeper expressions are refused (as HTCondor refuses them: printing,
#                  compiling and evaluating them must fit in the usual recursion limit)
#: most brackets (parentheses, lists, ads, calls, subscripts) open at once: each level
#: of them costs printing more calls than a level of operators does
MAX_NESTING = 200
#: the words that are values, not names (in any case)
KEYWORDS = {"true": True, "false": False, "undefined": UNDEFINED, "error": ERROR}


class ClassAdSyntaxError(SyntaxProblem):
    """Text that is not a valid ClassAd expression or ad; carries a position.
    ``reason`` is the message without the position."""

    def __init__(self, message, line=None, column=None):
        super().__init__(message, line, column)
        self.reason = message


def _parser():
    """The reader of the grammar (loaded on first use)."""
    from gridtools.classad import grammar
    return grammar.parser()


def _run(text, start, old=False):
    """The node of ``text`` parsed by the grammar from rule ``start`` (in the old
    syntax with ``old``)."""
    from gridtools.classad import grammar
    return grammar.run(text, start, _parser, old)


def parse(text, old=False):
    """The expression in ``text``; raises ClassAdSyntaxError on bad input.
    With ``old``, the old ClassAd syntax HTCondor reads a submit description's
    expressions in (adjacent strings are not joined but refused). Results are cached
    by text (expressions are immutable)."""
    if not isinstance(text, str):
        raise ClassAdSyntaxError(f"expected text, not {type(text).__name__}")
    return _parse_cached(text, old)


#: parsed expressions by their text (cleared when it holds PARSED_KEPT); a text longer
#: than KEPT_CHARS is parsed each time (one, built by an expression, could weigh megabytes)
_PARSED = {}
PARSED_KEPT = 16384
KEPT_CHARS = 65536


def _parse_cached(text, old=False):
    key = (text,) if old else text      # (the old syntax has its own entries: the new joins strings)
    found = _PARSED.get(key)
    if found is None:
        found = _simple(text) or _run(text, "start_expr", old)
        if len(text) > KEPT_CHARS:
            return found
        if len(_PARSED) >= PARSED_KEPT:
            _PARSED.clear()
        _PARSED[key] = found
    return found


_LONG_LINE = []


def _long_line():
    """The pattern of a line of a long-form ad, compiled on first use (compiling a
    pattern costs a command as much as importing a module)."""
    if not _LONG_LINE:
        import re
        _LONG_LINE.append(re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?![=?!])\s*(.*?)\s*$"))
    return _LONG_LINE[0]


_DIGITS = frozenset("0123456789")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_REST = _NAME_START | _DIGITS


def _simple(text):
    """The node for a lone number (an integer of at most 18 digits, or digits, a dot and
    digits; a minus sign right before them is the number's), a string without escapes or a name, blanks around it allowed, without the
    parser (most values in ads are such literals); None for anything else."""
    body = text.strip()
    if not body:
        return None
    first = body[0]
    if first in _DIGITS:
        return _simple_number(body)
    if first == "-" and body[1:2] in _DIGITS:
        found = _simple_number(body[1:])
        return None if found is None else nodes.Literal(-found.value)
    if first == '"':
        inner = body[1:-1]
        if len(body) >= 2 and body[-1] == '"' and '"' not in inner and "\\" not in inner \
                and "\n" not in inner:
            return nodes.Literal(inner)
        return None
    if first in _NAME_START and _NAME_REST.issuperset(body):
        keyword = KEYWORDS.get(body.lower())
        if keyword is not None:
            return nodes.Literal(keyword)
        return None if body.lower() in ("is", "isnt") else nodes.Attr(body)
    return None


def _simple_number(body):
    whole, dot, fraction = body.partition(".")
    if not _DIGITS.issuperset(whole):
        return None
    if not dot:
        if len(whole) > 18 or (whole[0] == "0" and whole != "0"):
            return None
        return nodes.Literal(int(whole))
    if fraction and _DIGITS.issuperset(fraction):
        return nodes.Literal(float(body))
    return None


def parse_ad(text):
    """A ClassAd from its bracketed form ``[ a = 1; b = "x" ]`` or its long
    form (one ``Name = value`` per line; blank and ``#`` lines ignored), whose values
    are in the old syntax (a backslash in a string is itself, ``grammar.old_to_new``),
    as HTCondor writes and reads it."""
    from gridtools.classad.ad import ClassAd
    if not isinstance(text, str):
        raise ClassAdSyntaxError(f"expected text, not {type(text).__name__}")
    if text.lstrip().startswith("["):
        node = _run(text, "start_ad")
        return ClassAd._make({n.lower(): e for n, e in node.pairs},
                             {n.lower(): n for n, _ in node.pairs}, None)
    return _parse_long(text)


def _parse_long(text):
    from gridtools.classad.ad import ClassAd
    ad = ClassAd()
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _long_line().match(line)
        if not m:
            raise ClassAdSyntaxError("expected 'Name = expression'", lineno, 1)
        try:
            ad[m.group(1)] = parse(m.group(2), old=True)
        except ClassAdSyntaxError as exc:
            column = m.start(2) + exc.column if exc.column else None
            raise ClassAdSyntaxError(f"{m.group(1)}: {exc.reason}", lineno, column) from None
    if not len(ad):
        raise ClassAdSyntaxError("empty ClassAd")
    return ad


def parse_bracketed_ads(text):
    """The ads of a sequence of bracketed ads (``[ a = 1 ] [ b = 2 ]``, one or several
    to a line, or each over several lines, as HTCondor writes the "new" form): each
    outermost ``[...]`` (brackets inside strings are not counted) parsed by
    ``parse_ad``; text between them is skipped."""
    found, depth, start, in_string, escaped = [], 0, 0, False, False
    for at, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "[":
            if depth == 0:
                start = at
            depth += 1
        elif ch == "]" and depth:
            depth -= 1
            if depth == 0:
                found.append(parse_ad(text[start:at + 1]))
    return found


def parse_ads(text):
    """Several ads separated by blank lines (``condor_status -l`` output)."""
    blocks, current = [], []
    for line in text.splitlines():
        if line.strip():
            current.append(line)
        elif current:
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return [parse_ad(block) for block in blocks]
