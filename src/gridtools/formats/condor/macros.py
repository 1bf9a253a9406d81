"""Macro expansion in submit descriptions.

``$(name)`` is replaced by the expanded value of ``name`` (names are
case-insensitive; an undefined name gives nothing), ``$(name:default)``
gives ``default`` when ``name`` is undefined, and ``$$(...)`` is left for
match-time expansion; ``$(DOLLAR)``, unless the description defines ``DOLLAR``, is a
``$``. The function forms:

  ``$ENV(VAR[:default])``     an environment variable (``UNDEFINED`` when unset)
  ``$INT(name-or-expr[,fmt])`` the value as a ClassAd expression, an integer
  ``$REAL(name-or-expr[,fmt])`` likewise, a real
  ``$F<letters>(name)``       parts of a file name (see ``filename_part``)
  ``$SUBSTR(name,start[,len])`` a substring (negative start counts from the end)
  ``$CHOICE(index,a,b,...)``  the index-th item (0-based) of a list
  ``$RANDOM_CHOICE(a,b,...)`` one item at random
  ``$RANDOM_INTEGER(min,max[,step])`` an integer at random

A value assigned to a name that refers to that name (``foo = $(foo) more``) refers to
its earlier value: ``expand_self`` puts that in when the value is assigned.

Randomness comes from the ``rng`` handed to ``expand`` so that results can
be reproduced. The forms other than ``$F`` live in ``macrofuncs``, loaded
when a description uses one.
"""

from gridtools.errors import InputError

MAX_DEPTH = 64  # nesting of macro references before a definition counts as circular
MAX_LENGTH = 1 << 20  # characters an expansion may grow to

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def is_name(text):
    """True when ``text`` is a macro name: a letter or ``_``, then letters, digits,
    ``_`` and dots (one line end after it allowed)."""
    if text.endswith("\n"):
        text = text[:-1]
    return bool(text) and text[0] in _LETTERS and text.isascii() and text.replace(".", "_").isidentifier()


def reference_head(text, j):
    """(index after its ``(``, True for ``$$``, function name or "") of the reference
    ``$(``, ``$$(``, ``$NAME(`` or ``$$NAME(`` at ``text[j] == "$"``; None when no
    such reference starts there."""
    k = j + 1
    double = text.startswith("$", k)
    k += double
    start, size = k, len(text)
    while k < size and text[k] in _LETTERS:
        k += 1
    if k < size and text[k] == "(":
        return k + 1, double, text[start:k]
    return None


class MacroProblem(InputError):
    """A macro that cannot be expanded; the message is HTCondor's, after ``ERROR:``."""

    def __init__(self, message):
        super().__init__(f"ERROR: {message}")


def closing_paren(text, start):
    """Index of the ``)`` matching the ``(`` just before ``start``, or -1."""
    first = text.find(")", start)
    if first < 0 or text.find("(", start, first) < 0:
        return first                            # (no parenthesis inside: the first one closes)
    depth = 1
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _seeded_zero():
    """A ``random.Random(0)``: the draws of an expander given no ``rng``."""
    import random
    return random.Random(0)


class Expander:
    """Expands text against ``lookup(name) -> raw value or None``. ``environ``: what
    ``$ENV()`` reads, a dict or the function that gives it (called when ``$ENV()`` is
    first expanded: copying a process's environment costs a submission that never reads
    it more than its macros do). ``rng``: what ``$RANDOM_CHOICE()`` and
    ``$RANDOM_INTEGER()`` draw from, a ``random.Random`` or the function that gives
    it (called at the first draw: most descriptions draw nothing, and the random
    module costs a submission more than reading its description); None: one seeded
    with 0."""

    #: $SUBSTR's first argument names a macro, or nothing (as condor_submit reads it)
    names_only = True
    #: ``report(expander, message)``: the error that refuses a function form's problem,
    #: saying where it is (``macrofuncs.problem``); None: a MacroProblem. Set while
    #: condor_submit builds jobs.
    report = None

    def __init__(self, lookup, environ=None, rng=None):
        self.lookup = lookup
        self.environ = {} if environ is None else environ
        self.rng = rng or _seeded_zero

    def expand(self, text, depth=0):
        if depth > MAX_DEPTH:
            raise MacroProblem("macro expansion nested too deeply (circular definition?)")
        j = text.find("$")
        if j < 0 and len(text) <= MAX_LENGTH:
            return text                         # (most values refer to nothing)
        out, i = [], 0
        while True:
            if j < 0:
                out.append(text[i:])
                break
            out.append(text[i:j])
            i = self._reference(text, j, out, depth)
            j = text.find("$", i)
        result = "".join(out)
        if len(result) > MAX_LENGTH:
            raise MacroProblem("macro expansion is too long (circular definition?)")
        return result

    def _reference(self, text, j, out, depth):
        head = (j + 2, False, "") if text.startswith("(", j + 1) else reference_head(text, j)    # ($(name))
        end = closing_paren(text, head[0]) if head else -1
        if end < 0:
            out.append("$")
            return j + 1
        after, double, fname = head
        body = text[after:end]
        if double:
            out.append(text[j:end + 1])
        elif not fname:
            out.append(self._macro(body, text[j:end + 1], depth))
        else:
            out.append(self._function(fname, body, text[j:end + 1], depth))
        return end + 1

    def _macro(self, body, original, depth):
        name, colon, default = body.partition(":")
        if not is_name(name):
            return original
        raw = self.lookup(name)
        if raw is None and name.upper() == "DOLLAR":
            return "$"                          # (predefined, as in HTCondor: a literal dollar sign)
        if raw is None or colon and not raw.strip():
            return self.expand(default, depth + 1) if colon else ""   # (empty: the default too)
        return self.expand(raw, depth + 1)

    def _function(self, fname, body, original, depth):
        upper = fname.upper()
        if upper in _FUNCTIONS:
            from gridtools.formats.condor.macrofuncs import FUNCTIONS
            return FUNCTIONS[upper](self, upper, body, depth)
        if upper.startswith("F") and set(upper[1:]) <= set(_FILE_LETTERS):
            return _file_function(self, upper, body, depth)
        return original

    def value_of(self, arg, depth):
        """The expanded value of a macro name, or ``arg`` itself expanded."""
        raw = self.lookup(arg) if is_name(arg) else None
        return self.expand(arg if raw is None else raw, depth + 1)


def expand_self(text, name, earlier):
    """``text``, the value assigned to macro ``name``, with its references to ``name``
    itself replaced by ``earlier`` (the value ``name`` had, None when it had none), as
    HTCondor's configuration reader does at the assignment (``foo = $(foo) more``
    appends to ``foo``). Only ``$(name)``, ``$(name:default)`` (the default when
    ``earlier`` is none or empty) and ``$F...(name)`` (of the name itself when ``name``
    had no value) are replaced; every other reference
    is left for the job's expansion. ``earlier`` goes in as it is (its own references
    stay references)."""
    lowered = name.lower()
    out, i = [], 0
    j = text.find("$")
    while j >= 0:
        head = (j + 2, False, "") if text.startswith("(", j + 1) else reference_head(text, j)
        end = closing_paren(text, head[0]) if head else -1
        if end < 0 or head[1]:
            j = text.find("$", j + 1 if end < 0 else end + 1)
            continue
        after, _double, fname = head
        body = text[after:end]
        found = None
        if not fname:
            ref, colon, default = body.partition(":")
            if ref.lower() == lowered:
                if earlier is None or colon and not earlier.strip():
                    found = default if colon else ""
                else:
                    found = earlier
        elif fname.upper().startswith("F") and set(fname.upper()[1:]) <= set(_FILE_LETTERS) \
                and body.strip().lower() == lowered:
            found = _file_parts(fname.upper()[1:], body.strip() if earlier is None else earlier)
        if found is None:
            j = text.find("$", end + 1)
            continue
        out.append(text[i:j])
        out.append(found)
        i = end + 1
        j = text.find("$", i)
    if not out:
        return text
    out.append(text[i:])
    return "".join(out)


# ---------------------------------------------------------------- file names

_FILE_LETTERS = "FPDNXBQAUW"


def filename_part(path, letters):
    """The part of ``path`` that the ``$F`` letters select: ``p`` the
    directory (with its slash), ``d`` the last directory name (with its
    slash; ``dd`` the last two; it wins over ``p``), ``n`` the base name
    without its last extension, ``x`` the extension (with its dot; with a directory
    part of a name in a directory, the name too), ``b`` drops the trailing slash of a result that ends with a
    directory part, ``q`` wraps the result in double quotes (``qa`` in single quotes),
    ``w`` turns slashes into backslashes. No letter (or ``f``, ``u``) is
    the whole name. Quotes around the value are removed first."""
    letters = letters.lower()
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "\"'":
        path = path[1:-1]                   # a quoted value loses its quotes
    directory, _, base = path.rpartition("/")
    directory = directory + "/" if _ else ""
    stem, dot, ext = base.rpartition(".")
    if not dot:
        stem, ext = base, ""
    ext = "." + ext if dot else ""
    result = _select_parts(path, directory, stem, ext, letters)
    ends_with_directory = ("p" in letters or "d" in letters) and not ("n" in letters or "x" in letters)
    if "b" in letters and ends_with_directory and result.endswith("/") and len(result) > 1:
        result = result[:-1]
    if "w" in letters:
        result = result.replace("/", "\\")
    if "q" in letters:
        quote = "'" if "a" in letters else '"'
        result = quote + result + quote
    return result


def _select_parts(path, directory, stem, ext, letters):
    dirs = letters.count("d")
    has_p, has_n, has_x = "p" in letters, "n" in letters, "x" in letters
    if not (has_p or dirs or has_n or has_x):
        return path
    # (HTCondor's: a directory part and x give the name too, when there is a directory)
    has_n = has_n or has_x and (has_p or dirs > 0) and bool(directory)
    parts = []
    if dirs:
        names = [d for d in directory.split("/") if d]
        parts.append("/".join(names[-dirs:]) + "/" if names else "")
    elif has_p:
        parts.append(directory)
    if has_n:
        parts.append(stem)
    if has_x:
        parts.append(ext)
    return "".join(parts)


def _file_function(exp, fname, body, depth):
    return _file_parts(fname[1:], exp.value_of(body.strip(), depth))


def _file_parts(letters, path):
    """What ``$F<letters>`` gives of ``path``."""
    if path:
        return filename_part(path, letters)
    if "Q" not in letters:
        return ""
    # HTCondor's quoting of nothing: two quotes, but one when a directory, path or
    # extension part was asked for
    quote = "'" if "A" in letters else '"'
    return quote if set(letters) & set("DPX") else quote * 2


#: the function forms ``macrofuncs`` expands (loaded when a description uses one)
_FUNCTIONS = frozenset(("ENV", "INT", "REAL", "STRING", "EVAL", "SUBSTR", "CHOICE", "RANDOM_CHOICE",
                        "RANDOM_INTEGER", "BASENAME", "DIRNAME"))
