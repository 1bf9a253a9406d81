"""Built-in regular-expression functions: regexp(), regexps(), replace(),
replaceAll(), regexpMember() and stringList_regexpMember(). Registered in
``functions.FUNCTIONS`` when first called (``functions.lookup``).

Regular expressions use Python's ``re``, which reads the common PCRE subset.
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
    flags = 0
    for letter in options:
        flags |= getattr(re, _FLAGS[letter]) if letter in _FLAGS else 0
    try:
        found = re.compile(pattern, flags)
    except (re.error, OverflowError, RecursionError):
        found = None
    if len(pattern) <= REGEX_KEPT_CHARS:
        if len(_REGEXES) >= REGEX_KEPT:
            _REGEXES.clear()
        _REGEXES[key] = found
    return found


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
