"""Built-in regular-expression functions: regexp(), regexps(), replace(),
replaceAll(), regexpMember() and stringList_regexpMember(). Registered in
``functions.FUNCTIONS`` when first called (``functions.lookup``).

Regular expressions are HTCondor's, PCRE2's (in byte mode: ``\\d``, ``\\w``, ``\\s``
and the POSIX classes are ASCII), run by Python's ``re``: a pattern is first
rewritten into ``re``'s spelling (``pcre_to_re``) where PCRE writes things
``re`` does not read or reads otherwise: POSIX classes in brackets
(``[[:digit:]]``, ``[[:^alpha:]]``), named groups ``(?<n>...)`` and
``(?'n'...)`` and their references ``\\k<n>``, ``\\k'n'``, ``\\k{n}``,
``\\g{n}``, literal text ``\\Q...\\E``, ``\\z``, ``\\Z`` (the end, or before a last
newline), ``\\h``, ``\\H``, ``\\v``, ``\\V``, ``\\R``, ``\\N``, ``\\e``, ``\\cX``, ``\\x{hh}``,
``\\o{oo}``, and option settings such as ``(?i)`` in the middle of a pattern.
Atomic groups and possessive quantifiers ``re`` reads as they are. What
neither reads (``\\p{..}``, recursion, ``\\K``) is not a valid expression.
Options are letters: ``i`` ignore case, ``m`` multi-line ``^``/``$``, ``s``
dot matches newline, ``x`` extended; for substitution ``f`` returns the
whole target with the substitution applied and ``g`` replaces every match.

``re`` backtracks: a pattern such as ``^(a|aa)*$`` takes exponential time on a
target it does not match; every match is timed (``timing``). Strings these
functions build are at most ``budget.MAX_STRING`` characters long (ERROR).
"""

from gridtools.classad.functions import builtin, exceptional
from gridtools.classad.strfuncs import list_args, string_list
from gridtools.classad.timing import timed
from gridtools.classad.budget import LOOP_CHARS, MAX_STRING, built, charge
from gridtools.classad.values import ERROR, UNDEFINED

#: the option letters and the flags of ``re`` they stand for (by name: ``re`` is imported
#: when the first pattern is compiled)
_FLAGS = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL", "x": "VERBOSE"}
#: compiled patterns by (pattern, options); cleared when it holds REGEX_KEPT
_REGEXES = {}
REGEX_KEPT = 1024
#: longest pattern kept compiled (longer ones are compiled at each use, and cost steps)
REGEX_KEPT_CHARS = 4096


def compile_regex(pattern, options=""):
    """A compiled pattern (None when it is not a valid expression)."""
    key = (pattern, options)
    if key in _REGEXES:
        return _REGEXES[key]
    charge(len(pattern) // LOOP_CHARS)  # (re reads a pattern in Python, a character at a time)
    import re
    import warnings
    flags = re.ASCII
    for letter in options:
        flags |= getattr(re, _FLAGS[letter]) if letter in _FLAGS else 0
    try:
        with warnings.catch_warnings():     # (re warns of what may change meaning in a later Python)
            warnings.simplefilter("ignore")
            found = re.compile(pcre_to_re(pattern, "x" in options), flags)
    except (re.error, _NotPcre, OverflowError, RecursionError, ValueError, IndexError):
        found = None
    if len(pattern) <= REGEX_KEPT_CHARS:
        if len(_REGEXES) >= REGEX_KEPT:
            _REGEXES.clear()
        _REGEXES[key] = found
    return found


class _NotPcre(Exception):
    """A pattern PCRE refuses (an unknown POSIX class, a bracket left open)."""


#: the POSIX classes, as the inside of a bracket of ``re`` (ASCII, as PCRE's byte mode)
_POSIX = {
    "alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
    "space": "\\t\\n\\x0b\\f\\r ", "blank": "\\t ", "punct": "!-/:-@\\[-`{-~", "xdigit": "0-9A-Fa-f",
    "word": "a-zA-Z0-9_", "cntrl": "\\x00-\\x1f\\x7f", "print": "\\x20-\\x7e", "graph": "\\x21-\\x7e",
    "ascii": "\\x00-\\x7f",
}
#: PCRE's horizontal and vertical blanks (byte mode), as the inside of a bracket
_HSPACE = "\\t \\xa0"
_VSPACE = "\\n\\x0b\\f\\r\\x85"
_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_HEX = frozenset("0123456789abcdefABCDEF")


def _char(code):
    """Character ``code`` as ``re`` reads it anywhere (in a bracket too)."""
    return "\\x%02x" % code if code < 256 else "\\U%08x" % code


def _braced(pattern, at, digits):
    """(the number in ``{...}`` at ``at`` in base ``digits``, the index after it)."""
    end = pattern.index("}", at)
    return int(pattern[at + 1:end], digits), end + 1


def _escape(pattern, i, in_bracket):
    """(``re``'s text, negated bracket text or None, the index after it) of the escape at
    ``i`` (its backslash). In a bracket a negated class (``\\H``) comes back as the inside
    of the bracket it is not in."""
    n = len(pattern)
    if i + 1 >= n:
        raise _NotPcre("a backslash at the end")
    c = pattern[i + 1]
    if c == "Q":
        end = pattern.find("\\E", i + 2)
        end = n if end < 0 else end
        text = "".join(_char(ord(ch)) if not ch.isalnum() else ch for ch in pattern[i + 2:end])
        return text, None, min(end + 2, n)
    if c == "E":
        return "", None, i + 2
    if c == "x" and pattern.startswith("{", i + 2):
        code, after = _braced(pattern, i + 2, 16)
        return _char(code), None, after
    if c == "x":
        j = i + 2
        while j < n and j < i + 4 and pattern[j] in _HEX:
            j += 1
        return _char(int(pattern[i + 2:j] or "0", 16)), None, j
    if c == "o" and pattern.startswith("{", i + 2):
        code, after = _braced(pattern, i + 2, 8)
        return _char(code), None, after
    if c == "e":
        return "\\x1b", None, i + 2
    if c == "c" and i + 2 < n:
        return _char(ord(pattern[i + 2].upper()) ^ 0x40), None, i + 3
    if c in "hv":
        chars = _HSPACE if c == "h" else _VSPACE
        return (chars if in_bracket else f"[{chars}]"), None, i + 2
    if c in "HV":
        chars = _HSPACE if c == "H" else _VSPACE
        return ("", chars, i + 2) if in_bracket else (f"[^{chars}]", None, i + 2)
    if in_bracket:
        return pattern[i:i + 2], None, i + 2
    if c == "z":
        return "\\Z", None, i + 2
    if c == "Z":
        return "(?=\\n?\\Z)", None, i + 2
    if c == "R":
        return "(?:\\r\\n|[" + _VSPACE + "])", None, i + 2
    if c == "N" and not pattern.startswith("{", i + 2):
        return "[^\\n]", None, i + 2
    if c == "k" and i + 2 < n and pattern[i + 2] in "<'{":
        close = {"<": ">", "'": "'", "{": "}"}[pattern[i + 2]]
        end = pattern.index(close, i + 3)
        return f"(?P={pattern[i + 3:end]})", None, end + 1
    if c == "g" and i + 2 < n:
        if pattern[i + 2] == "{":
            end = pattern.index("}", i + 3)
            ref, after = pattern[i + 3:end], end + 1
        else:
            j = i + 2
            while j < n and pattern[j].isdigit():
                j += 1
            ref, after = pattern[i + 2:j], j
        if ref.isdigit():
            return f"(?:\\{int(ref)})", None, after
        if ref and set(ref) <= _WORD:
            return f"(?P={ref})", None, after
    return pattern[i:i + 2], None, i + 2


def _bracket(pattern, i):
    """(``re``'s text, the index after it) of the bracket at ``i``: the POSIX classes in it
    spelled out; one negated (``[:^alpha:]``) as the union (or, in a negated bracket,
    the intersection) of brackets ``re`` reads."""
    n = len(pattern)
    j = i + 1
    negated = pattern.startswith("^", j)
    if negated:
        j += 1
    items, nots, first = [], [], True
    while True:
        if j >= n:
            raise _NotPcre("a bracket left open")
        c = pattern[j]
        if c == "]" and not first:
            break
        first = False
        if c == "[" and pattern.startswith(("[:", "[.", "[="), j):
            end = pattern.find(pattern[j + 1] + "]", j + 2)
            if end < 0:
                items.append("\\[")
                j += 1
                continue
            if pattern[j + 1] != ":":
                raise _NotPcre("a collating element")
            name = pattern[j + 2:end]
            inside = _POSIX.get(name.lstrip("^"))
            if inside is None:
                raise _NotPcre("an unknown POSIX class")
            (nots if name.startswith("^") else items).append(inside)
            j = end + 2
            continue
        if c == "\\":
            text, other, j = _escape(pattern, j, True)
            items.append(text)
            if other:
                nots.append(other)
            continue
        items.append("\\" + c if c in "[]^&~|" else c)
        j += 1
    body = "".join(items)
    if not nots:
        return ("[^" if negated else "[") + body + "]", j + 1
    if not negated:                     # (any of the items, or not in one of the classes)
        parts = ([f"[{body}]"] if body else []) + [f"[^{x}]" for x in nots]
        return "(?:" + "|".join(parts) + ")", j + 1
    # none of the items, and in every one of the classes
    checks = ([f"(?![{body}])"] if body else []) + [f"(?=[{x}])" for x in nots[:-1]]
    return "(?:" + "".join(checks) + f"[{nots[-1]}])", j + 1


def pcre_to_re(pattern, extended=False):
    """``pattern`` (PCRE2's syntax) in the syntax of Python's ``re`` (see the module's
    text). ``extended``: the ``x`` option (``#`` begins a comment); raises _NotPcre for
    what PCRE refuses."""
    if not any(c in pattern for c in "\\[(|"):
        return pattern
    out, n, i = [], len(pattern), 0
    levels = [[]]                       # (per open group: the option settings open in it)
    while i < n:
        c = pattern[i]
        if c == "\\":
            text, _, i = _escape(pattern, i, False)
            out.append(text)
        elif c == "[":
            text, i = _bracket(pattern, i)
            out.append(text)
        elif c == "#" and extended:
            end = pattern.find("\n", i)
            end = n if end < 0 else end + 1
            out.append(pattern[i:end])
            i = end
        elif c == "(":
            i = _group(pattern, i, out, levels)
        elif c == ")":
            out.append(")" * len(levels[-1]) + ")")
            if len(levels) > 1:
                levels.pop()
            i += 1
        elif c == "|":                  # (an option setting holds in the alternatives after it)
            out.append(")" * len(levels[-1]) + "|" + "".join(f"(?{f}:" for f in levels[-1]))
            i += 1
        else:
            out.append(c)
            i += 1
    out.append(")" * len(levels[0]))
    return "".join(out)


def _group(pattern, i, out, levels):
    """The group (or option setting) opening at ``i``: written to ``out``; the index after
    its opening."""
    n = len(pattern)
    if pattern.startswith("(?#", i):
        end = pattern.find(")", i)
        end = n if end < 0 else end + 1
        out.append(pattern[i:end])
        return end
    if pattern.startswith(("(?<", "(?P<"), i):
        at = i + (3 if pattern[i + 2] == "<" else 4)
        if at < n and pattern[at] not in "=!":
            out.append("(?P<")
            levels.append([])
            return at
    if pattern.startswith("(?'", i):
        end = pattern.index("'", i + 3)
        out.append(f"(?P<{pattern[i + 3:end]}>")
        levels.append([])
        return end + 1
    if pattern.startswith("(?", i):
        j = i + 2
        while j < n and (pattern[j].isalpha() or pattern[j] == "-"):
            j += 1
        flags = pattern[i + 2:j]
        if j < n and pattern[j] == ")" and flags and flags != "-":
            if i == 0 and "-" not in flags:
                out.append(pattern[i:j + 1])    # (at the start: for the whole pattern)
            else:
                out.append(f"(?{flags}:")       # (``re`` takes them for a group only)
                levels[-1].append(flags)
            return j + 1
    out.append("(")
    levels.append([])
    return i + 1


def _regex_args(*values):
    """The common checks: ERROR first, then UNDEFINED, then string types."""
    bad = exceptional(*values)
    if bad is not None:
        return bad
    return None if all(type(v) is str for v in values) else ERROR


@builtin("regexp", args=(2, 3))
def fn_regexp(pattern, target, options=""):
    bad = _regex_args(pattern, target, options)
    if bad is not None:
        return bad
    regex = compile_regex(pattern, options)
    return ERROR if regex is None else timed(lambda: regex.search(target)) is not None


def _groups(match):
    """How many groups PCRE counts in a match: one more than the highest that took part."""
    highest = max((i for i in range(1, (match.re.groups or 0) + 1) if match.start(i) != -1), default=0)
    return highest + 1


def expand_template(match, template):
    """The substitution text, as HTCondor writes it: a backslash and a digit name that
    group (ERROR, as None, for one past those that took part); any other backslash
    stays as it is."""
    charge(len(template) // LOOP_CHARS)
    out, i, count = [], 0, None
    while i < len(template):
        ch = template[i]
        if ch == "\\" and i + 1 < len(template) and "0" <= template[i + 1] <= "9":
            count = _groups(match) if count is None else count
            group = ord(template[i + 1]) - ord("0")
            if group >= count:
                return None
            out.append(match.group(group) or "")
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _substitute(pattern, target, template, options):
    bad = _regex_args(pattern, target, template, options)
    if bad is not None:
        return bad
    regex = compile_regex(pattern, options.replace("f", "").replace("g", ""))
    if regex is None:
        return ERROR
    return timed(lambda: _replaced(regex, target, template, "f" in options, "g" in options))


def _replaced(regex, target, template, full, every):
    """HTCondor's regexp_helper with a replacement: the first match (``every``: each
    match after the last, none overlapping) replaced by the template, with the rest of
    the target around them (``full``) or alone. After an empty match the next must
    start there and not be empty, else the next character is copied; past the end of
    the target (a pattern that matches empty there) HTCondor reads beyond it: ERROR (so
    is a result longer than MAX_STRING)."""
    out, size, at, after_empty, end = [], 0, 0, False, len(target)
    while True:
        if after_empty:
            match = regex.match(target, at)
            if match is None or match.end() == at:
                if at >= end:
                    return ERROR
                out.append(target[at])
                at, after_empty, size = at + 1, False, size + 1
                continue
        else:
            match = regex.search(target, at)
            if match is None:
                break
        if full:
            out.append(target[at:match.start()])
        text = expand_template(match, template)
        if text is None:
            return ERROR
        out.append(text)
        size += len(text) + (match.start() - at if full else 0)
        if size > MAX_STRING:
            return ERROR
        at, after_empty = match.end(), match.start() == match.end()
        if not every:
            break
    if full:
        out.append(target[at:])
        if size + end - at > MAX_STRING:
            return ERROR
    return built("".join(out))


@builtin("regexps", args=(3, 4))
def fn_regexps(pattern, target, template, options=""):
    return _substitute(pattern, target, template, options)


@builtin("replace", args=(3, 4))
def fn_replace(pattern, target, template, options=""):
    if type(options) is str:
        options += "f"
    return _substitute(pattern, target, template, options)


@builtin("replaceAll", args=(3, 4))
def fn_replace_all(pattern, target, template, options=""):
    if type(options) is str:
        options += "fg"
    return _substitute(pattern, target, template, options)


@builtin("regexpMember", args=(2, 3))
def fn_regexp_member(pattern, items, options=""):
    # (HTCondor's matchPatternMember: ERROR in any argument first, then UNDEFINED, then
    # the types: the options' before the pattern's and the list's)
    bad = exceptional(pattern, items, options)
    if bad is not None:
        return bad
    if type(options) is not str or type(pattern) is not str or type(items) is not list:
        return ERROR
    regex = compile_regex(pattern, options)     # (None: a pattern that does not compile)
    return timed(lambda: _member_matches(regex, items))


def _member_matches(regex, items):
    """True when ``regex`` matches a string of ``items``; a pattern that did not compile
    (``regex`` None) matches none, as HTCondor's matchPatternMember finds; ERROR for an
    item that is no string, UNDEFINED when one is undefined and none matched."""
    saw_undefined = False
    for item in items:
        if item is UNDEFINED:
            saw_undefined = True
        elif type(item) is not str:
            return ERROR
        elif regex is not None and regex.search(item):
            return True
    return UNDEFINED if saw_undefined else False


@builtin("stringList_regexpMember", args=(2, 4))
def fn_string_list_regexp_member(pattern, text, delims=None, options=""):
    args = [pattern, text, options] + ([delims] if delims is not None else [])
    if not list_args(args):
        return ERROR
    regex = compile_regex(pattern, options)
    if regex is None:
        return ERROR
    items = string_list(text, delims)
    if not items:                       # (an empty list: HTCondor's UNDEFINED)
        return UNDEFINED
    return timed(lambda: any(regex.search(item) for item in items))
