"""Built-in string functions: strings, string lists ("a, b, c") and version
comparison. Registered in ``functions.FUNCTIONS`` when first called
(``functions.lookup``); the regular-expression ones are in ``regexfuncs``.
Strings these functions build are at most ``budget.MAX_STRING`` characters
long (ERROR).
"""

from gridtools.classad.functions import builtin, exceptional, parse_c_real, to_string
from gridtools.classad.budget import LOOP_CHARS, MAX_STRING, STEP_CHARS, built, charge
from gridtools.classad.values import ERROR, UNDEFINED, Special, to_int64, wrap32

MANY = 1 << 30


def _strings(values):
    """All values converted to strings, or the first UNDEFINED/ERROR met."""
    out = []
    for value in values:
        text = to_string(value)
        if type(text) is Special:
            return text
        out.append(text)
    return out


@builtin("strcat", args=(0, MANY))
def fn_strcat(*values):
    parts = _strings(values)
    if type(parts) is Special:
        return parts
    if sum(len(part) for part in parts) > MAX_STRING:
        return ERROR
    return built("".join(parts))


@builtin("join", args=(0, MANY))
def fn_join(*values):
    """join(sep, a, b, ...), join(sep, list) or join(list). UNDEFINED items
    are left out; when nothing but UNDEFINED is left the result is UNDEFINED. A
    separator goes before an item only when the result so far is not empty (as
    HTCondor's: join(",", "", "a") is "a", join(",", "a", "", "b") is "a,,b")."""
    if not values:
        return ""
    if len(values) == 1:
        values = ("", *values[0]) if type(values[0]) is list else (values[0],)
    elif len(values) == 2 and type(values[1]) is list:
        values = (values[0], *values[1])
    if any(v is ERROR for v in values):
        return ERROR
    sep = "" if values[0] is UNDEFINED else to_string(values[0])
    items = [to_string(v) for v in values[1:] if v is not UNDEFINED]
    if not items and len(values) > 1 and UNDEFINED in values[1:]:
        return UNDEFINED
    if values[0] is UNDEFINED and len(values) == 1:
        return UNDEFINED
    if sum(len(item) for item in items) + len(sep) * len(items) > MAX_STRING:
        return ERROR
    first = next((i for i, item in enumerate(items) if item), len(items))
    return built(sep.join(items[first:]))   # (no separator while the result is empty)


@builtin("substr", args=(2, 3))
def fn_substr(text, offset, length=None):
    if any(v is UNDEFINED for v in (text, offset, length)):
        return UNDEFINED
    if type(text) is not str or type(offset) is not int or \
            (length is not None and type(length) is not int):
        return ERROR
    offset = wrap32(offset)             # (C ints, as HTCondor's)
    length = None if length is None else wrap32(length)
    size = len(text)
    start = max(size + offset, 0) if offset < 0 else min(offset, size)
    if length is None:
        end = size
    elif length < 0:
        end = max(size + length, start)
    else:
        end = min(start + length, size)
    return text[start:end]


def _compare_strings(fold):
    def apply(a, b):
        if a is UNDEFINED or b is UNDEFINED:
            return UNDEFINED            # (before an ERROR on either side, as HTCondor)
        parts = _strings((a, b))
        if type(parts) is Special:
            return parts
        x, y = (p.lower() for p in parts) if fold else parts
        return (x > y) - (x < y)
    return apply


builtin("strcmp", args=(2, 2))(_compare_strings(False))
builtin("stricmp", args=(2, 2))(_compare_strings(True))


def _change_case(upper):
    def apply(value):
        text = to_string(value)
        if type(text) is Special:
            return text
        return text.upper() if upper else text.lower()
    return apply


builtin("toUpper")(_change_case(True))
builtin("toLower")(_change_case(False))


@builtin("split", args=(1, 2))
def fn_split(text, delims=None):
    if type(text) is not str or (delims is not None and type(delims) is not str):
        return ERROR
    return split_tokens(text, " \t," if delims is None else delims)


def split_tokens(text, delims):
    """HTCondor's tokenizer for split(): white space among the delimiters
    separates without making empty tokens; another delimiter ends a token,
    and makes an empty one when it follows the same delimiter."""
    charge(len(text) // LOOP_CHARS)
    tokens, current, last = [], [], None
    for ch in text:
        if ch not in delims:
            current.append(ch)
            last = None
            continue
        if current:
            tokens.append("".join(current))
            current = []
        elif ch == last and ch not in " \t":
            tokens.append("")
        if ch not in " \t":
            last = ch
    if current:
        tokens.append("".join(current))
    return tokens


def _split_at(user_first):
    def apply(name):
        if type(name) is not str:
            return ERROR
        if "@" not in name:
            return [name, ""] if user_first else ["", name]
        left, right = name.split("@", 1)
        return [left, right]
    return apply


builtin("splitUserName")(_split_at(True))
builtin("splitSlotName")(_split_at(False))


@builtin("userHome", args=(1, 2))
def fn_user_home(name, default=UNDEFINED):
    """The home directory of user ``name`` (looked up as if HTCondor's
    CLASSAD_ENABLE_USER_HOME were true); a default that is no string or is empty is
    none, as HTCondor reads it: then an unknown user is UNDEFINED, a name that is no
    string ERROR (UNDEFINED for UNDEFINED)."""
    fallback = default if type(default) is str and default else None
    if type(name) is not str:
        if fallback is not None:
            return fallback
        return UNDEFINED if name is UNDEFINED else ERROR
    import pwd
    try:
        return pwd.getpwnam(name).pw_dir
    except (KeyError, ValueError):
        return UNDEFINED if fallback is None else fallback


# ------------------------------------------------------------ string lists

def string_list(text, delims=None):
    """The items of a string list ("a, b, c"); delimiters default to comma
    and space. Items are trimmed and empty items dropped."""
    if delims is None:
        delims = ", "
    charge(len(text) // STEP_CHARS)
    if not delims:
        return [text.strip()] if text.strip() else []
    items = [text]
    for delim in delims:
        items = [piece for item in items for piece in item.split(delim)]
        charge(len(items))              # (one step an item made: a list of many short items costs)
    return [item.strip() for item in items if item.strip()]


def list_args(values):
    """Arguments of the stringList functions: all must be strings."""
    return all(type(v) is str for v in values)


def _lists_or_empty(values):
    """Arguments of the membership and subset functions: strings, with
    UNDEFINED read as an empty list (when the other list is not UNDEFINED too);
    None when one is of another type."""
    if any(type(v) is not str and v is not UNDEFINED for v in values):
        return None
    return ["" if v is UNDEFINED else v for v in values]


#: the default separators of stringListMember and stringListSubsetMatch (and their I
#: forms): white space of any kind too, as HTCondor's
MEMBER_DELIMS = ", \t\r\n"


def _member_of(fold):
    def apply(item, text, delims=None):
        if delims is UNDEFINED:
            delims = None
        args = _lists_or_empty((item, text) if delims is None else (item, text, delims))
        if args is None:
            return ERROR
        if item is UNDEFINED or text is UNDEFINED:
            return UNDEFINED if item is text else False     # (both: UNDEFINED, as HTCondor)
        items = string_list(text, MEMBER_DELIMS if delims is None else delims)
        if fold:
            return item.lower() in (i.lower() for i in items)
        return item in items
    return apply


builtin("stringListMember", args=(2, 3))(_member_of(False))
builtin("stringListIMember", args=(2, 3))(_member_of(True))


def _subset_of(fold):
    def apply(first, second, delims=None):
        if delims is UNDEFINED:
            delims = None               # (the default separators, as HTCondor reads it)
        args = _lists_or_empty((first, second) if delims is None else (first, second, delims))
        if args is None:
            return ERROR
        if first is UNDEFINED and second is UNDEFINED:
            return UNDEFINED
        if args[0] == "":
            return True                 # (the empty string is a subset of anything)
        small, big = (string_list(t, MEMBER_DELIMS if delims is None else delims) for t in args[:2])
        if not small:
            return False                # (a string of delimiters only: HTCondor finds no match)
        if fold:
            small, big = [i.lower() for i in small], [i.lower() for i in big]
        return set(small) <= set(big)
    return apply


builtin("stringListSubsetMatch", args=(2, 3))(_subset_of(False))
builtin("stringListISubsetMatch", args=(2, 3))(_subset_of(True))


@builtin("stringListSize", args=(1, 2))
def fn_string_list_size(text, delims=None):
    if not list_args((text,) if delims is None else (text, delims)):
        return ERROR
    return len(string_list(text, delims))


def _int_text(item):
    """True when ``item`` is an integer (maybe a sign, then decimal digits; blanks around)."""
    body = item.strip()
    if body[:1] in ("+", "-"):
        body = body[1:]
    return body.isdecimal()


def _list_numbers(text, delims):
    """The numbers of a string list, each read as C's strtod reads it, and
    whether all of them are integers."""
    if not list_args((text,) if delims is None else (text, delims)):
        return ERROR, False
    numbers, integers = [], True
    for item in string_list(text, delims):
        real = parse_c_real(item)
        if real is None:
            return ERROR, False
        integers = integers and _int_text(item)
        numbers.append(real)
    return numbers, integers


def _list_reducer(reduce, empty):
    def apply(text, delims=None):
        numbers, integers = _list_numbers(text, delims)
        if type(numbers) is Special:
            return numbers
        if not numbers:
            return empty
        result = reduce(numbers)
        return to_int64(result) if integers else result
    return apply


builtin("stringListSum", args=(1, 2))(_list_reducer(sum, 0.0))
builtin("stringListAvg", args=(1, 2))(_list_reducer(lambda ns: sum(ns) / len(ns), 0.0))
#: where HTCondor's stringListMin and stringListMax start from, C's FLT_MAX and FLT_MIN (so
#: a list of numbers all above FLT_MAX has FLT_MAX as its least, and one of numbers all
#: below FLT_MIN, the negative ones among them, has FLT_MIN, as an integer 0, as its most)
FLT_MAX = 3.4028234663852886e+38
FLT_MIN = 1.1754943508222875e-38

builtin("stringListMin", args=(1, 2))(_list_reducer(lambda ns: min(FLT_MAX, *ns), UNDEFINED))
builtin("stringListMax", args=(1, 2))(_list_reducer(lambda ns: max(FLT_MIN, *ns), UNDEFINED))


@builtin("stringListsIntersect", args=(2, 3))
def fn_string_lists_intersect(first, second, delims=None):
    args = (first, second) if delims is None else (first, second, delims)
    bad = exceptional(*args)
    if bad is not None:
        return bad
    if not list_args(args):
        return ERROR
    return bool(set(string_list(first, delims)) & set(string_list(second, delims)))


# -------------------------------------------------------------- versions

def _digit_run(text, start):
    end = start
    while end < len(text) and text[end].isdigit():
        end += 1
    return end


def _leading_zeros(text, start):
    end = start
    while end < len(text) and text[end] == "0":
        end += 1
    if end > start and (end == len(text) or not text[end].isdigit()):
        end -= 1  # a lone final zero is a number, not a leading zero
    return end - start


def natural_cmp(a, b):
    """Compare version strings: lexicographic, except that a difference
    inside a run of digits compares the numbers (more leading zeros first)."""
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    charge(i // LOOP_CHARS)
    if i == len(a) and i == len(b):
        return 0
    ca, cb = (a[i] if i < len(a) else ""), (b[i] if i < len(b) else "")
    start = i
    while start > 0 and a[start - 1].isdigit():
        start -= 1
    diff = (ord(ca) if ca else 0) - (ord(cb) if cb else 0)
    if start == i and not (ca.isdigit() and cb.isdigit()):
        return diff
    za, zb = _leading_zeros(a, start), _leading_zeros(b, start)
    if za != zb:
        return zb - za
    if za:
        return diff
    length = (_digit_run(a, start) - start) - (_digit_run(b, start) - start)
    return length or diff


def _version_args(*values):
    if any(v is UNDEFINED for v in values):
        return UNDEFINED
    return _strings(values)


def _version_test(test):
    def apply(left, right):
        parts = _version_args(left, right)
        if type(parts) is Special:
            return parts
        return test(natural_cmp(*parts))
    return apply


builtin("versioncmp", args=(2, 2))(_version_test(lambda r: r))
builtin("versionGT", args=(2, 2))(_version_test(lambda r: r > 0))
builtin("versionLT", args=(2, 2))(_version_test(lambda r: r < 0))
builtin("versionGE", args=(2, 2))(_version_test(lambda r: r >= 0))
builtin("versionLE", args=(2, 2))(_version_test(lambda r: r <= 0))
builtin("versionEQ", args=(2, 2))(_version_test(lambda r: r == 0))


@builtin("version_in_range", args=(3, 3))
def fn_version_in_range(version, low, high):
    """HTCondor looks at the bounds first: an UNDEFINED bound gives UNDEFINED, then an
    ERROR bound ERROR; then a version that is not a value gives ERROR."""
    if low is UNDEFINED or high is UNDEFINED:
        return UNDEFINED
    if low is ERROR or high is ERROR or type(version) is Special:
        return ERROR
    v, lo, hi = _strings((version, low, high))
    return natural_cmp(lo, v) <= 0 and natural_cmp(v, hi) <= 0
