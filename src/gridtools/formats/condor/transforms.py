"""Job transforms: what the configuration changes in every new job's ad before the
schedd takes it in (``JOB_TRANSFORM_NAMES``), as HTCondor's schedd applies them.

Each name of ``JOB_TRANSFORM_NAMES`` (commas or blanks between them) is a
transform, ``JOB_TRANSFORM_<name>`` (read unexpanded; usually a multi-line
``@=end`` value), in HTCondor's native syntax: a statement a line (blank lines and
``#`` lines passed over), applied in order to each job whose ad meets its
requirements, the transforms in their order:

- ``REQUIREMENTS <expression>``: the transform applies only to a job whose ad
  makes it true (anywhere in the transform; the last one counts);
- ``UNIVERSE <name or number>``: only to jobs of that universe;
- ``SET <attr> <expression>``: set the attribute to the expression;
- ``DEFAULT <attr> <expression>``: the same, for a job whose ad does not have it;
- ``EVALSET <attr> <expression>``: set it to the expression's value in the ad;
- ``EVALMACRO <name> <expression>``: the macro ``name`` is the expression's value
  (a string's text, else the value as ClassAd text);
- ``COPY <attr> <new>``, ``RENAME <attr> <new>``, ``DELETE <attr>``; the first
  argument may be a regular expression between slashes (``/^Request(.*)/``, any
  case), which acts on every attribute whose name it matches, the new name made
  from the replacement text with ``\\0`` ... ``\\9`` for the match's groups;
- ``<name> = <text>``: a macro of the transform.

An ``=`` or ``,`` may stand between a statement's attribute and the rest
(``EVALSET AcctGroup = usermap(...)``, ``COPY Owner, Who``), as HTCondor reads it.

``$(name)`` in a statement stands for a macro of the transform, ``$(MY.attr)`` for
the ad's attribute as ClassAd text (an empty text when it has none); a
``$(name:default)`` for the default when the macro is not set. ``NAME`` and
``TRANSFORM`` lines are passed over. A transform whose statement does not read is
left out as a whole (the daemon's messages say so); one in ClassAd form (starting
with ``[``) is not read, as HTCondor 24's schedd no longer reads them.
"""

import re

#: the universes by name, as a transform's UNIVERSE line names them
_UNIVERSES = {"vanilla": 5, "scheduler": 7, "java": 10, "parallel": 11, "local": 12, "container": 5,
              "docker": 5, "vm": 13, "grid": 9, "standard": 1}
_ATTR = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
_MACRO = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.]*)(?::([^)]*))?\)")
_KEYWORDS = frozenset(("name", "requirements", "universe", "set", "default", "evalset", "evalmacro",
                       "copy", "rename", "delete", "transform"))


class Transform:
    """One transform: its ``name`` and ``statements`` ((keyword, args) each)."""

    def __init__(self, name, statements):
        self.name, self.statements = name, statements


def load(names, raw):
    """The transforms of JOB_TRANSFORM_NAMES's text ``names`` (``raw``: knob -> its
    unexpanded text or None), and the lines saying which were left out."""
    found, problems = [], []
    for name in dict.fromkeys((names or "").replace(",", " ").split()):
        if name.upper() == "NAMES":
            continue
        text = raw(f"JOB_TRANSFORM_{name}")
        if text is None or not text.strip():
            problems.append(f"JOB_TRANSFORM_{name} not defined, ignoring.")
            continue
        if text.lstrip().startswith("["):
            problems.append(f"JOB_TRANSFORM_{name} macro appears to be in ClassAd format, "
                            "which is no longer supported. Ignoring.")
            continue
        try:
            found.append(Transform(name, _statements(text)))
        except ValueError as exc:
            problems.append(f"JOB_TRANSFORM_{name} macro stream malformed, ignoring. {exc}")
    return found, problems


def _statements(text):
    statements = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, rest = (re.split(r"\s+", line, 1) + [""])[:2]
        key = word.lower()
        if key == "requirements" and rest.startswith("="):
            rest = rest[1:]
        if key not in _KEYWORDS or rest.startswith("=") or "=" in word:
            macro, eq, value = line.partition("=")
            if not eq or not _ATTR.match(macro.strip()):
                raise ValueError(f"line {number}: {line[:80]!r} is neither a statement nor a macro")
            statements.append(("macro", (macro.strip(), value.strip())))
            continue
        rest = rest.strip()
        if key in ("name", "transform"):
            continue
        if key in ("requirements", "universe"):
            if not rest:
                raise ValueError(f"line {number}: {word} needs a value")
            statements.append((key, rest))
            continue
        attr, value = _regex_and_rest(rest) if key in ("copy", "rename", "delete") else (None, None)
        if attr is not None:
            if not value.strip() and key != "delete":
                raise ValueError(f"line {number}: {word} needs a new name")
            statements.append((key + "_regex", (attr, value.strip())))
            continue
        attr, value = (re.split(r"\s+", rest, 1) + [""])[:2]
        attr, value = attr.rstrip(",="), value.strip()
        if value[:1] in ("=", ","):         # (``SET a = 1``, ``COPY a, b``: HTCondor reads these too)
            value = value[1:].strip()
        if not _ATTR.match(attr) or (key in ("set", "default", "evalset", "evalmacro", "copy", "rename")
                                     and not value) or (key in ("copy", "rename") and not _ATTR.match(value)):
            raise ValueError(f"line {number}: {line[:80]!r} does not read")
        statements.append((key, (attr, value)))
    return statements


def _regex_and_rest(text):
    """(the compiled regular expression ``/.../`` at the start of ``text``, what follows
    it), or (None, None) when ``text`` does not start with one; ValueError when it
    does not compile."""
    if not text.startswith("/"):
        return None, None
    end = text.find("/", 1)
    while end > 0 and text[end - 1] == "\\":
        end = text.find("/", end + 1)
    if end < 0:
        raise ValueError(f"{text[:80]!r}: a regular expression without its closing /")
    flags_end = end + 1
    while flags_end < len(text) and text[flags_end].isalpha():
        flags_end += 1
    try:
        found = re.compile(text[1:end], re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"invalid regex {text[1:end]!r}: {exc}") from None
    return found, text[flags_end:].strip()


def apply(transforms, ad):
    """Apply ``transforms`` to job ad ``ad`` (a ClassAd, changed in place); the names of
    those applied. ValueError when a statement's expression does not read."""
    applied = []
    for transform in transforms:
        if _matches(transform, ad):
            _run(transform, ad)
            applied.append(transform.name)
    return applied


def _matches(transform, ad):
    macros = {}
    ok = True
    for key, args in transform.statements:
        if key == "macro":
            macros[args[0].lower()] = args[1]
        elif key == "requirements":
            ok = _value(ad, _expand(args, macros, ad)) is True
        elif key == "universe":
            wanted = args.strip().lower()
            number = _UNIVERSES.get(wanted, int(wanted) if wanted.isdigit() else None)
            if ad.eval("JobUniverse") != number:
                return False
    return ok


def _run(transform, ad):
    from gridtools.classad.values import unparse_value
    macros = {}
    for key, args in transform.statements:
        if key == "macro":
            macros[args[0].lower()] = args[1]
            continue
        if key in ("requirements", "universe"):
            continue
        if key.endswith("_regex"):
            _regex_op(key[:-6], args[0], args[1], ad)
            continue
        attr, value = args
        value = _expand(value, macros, ad)
        if key == "set" or (key == "default" and ad.lookup(attr) is None):
            ad[attr] = _parsed(value)
        elif key == "evalset":
            ad[attr] = _value(ad, value)
        elif key == "evalmacro":
            got = _value(ad, value)
            macros[attr.lower()] = got if isinstance(got, str) else unparse_value(got)
        elif key in ("copy", "rename"):
            found = ad.lookup(attr)
            if found is not None:
                ad[value] = found
                if key == "rename" and value.lower() != attr.lower():
                    del ad[attr]
        elif key == "delete" and ad.lookup(attr) is not None:
            del ad[attr]


def _regex_op(key, pattern, replacement, ad):
    """COPY, RENAME or DELETE every attribute whose name ``pattern`` matches (the new
    name: ``replacement`` with ``\\N`` standing for group N of the match)."""
    matched = {}
    for name in list(ad):
        m = pattern.search(name)
        if m is None:
            continue
        matched[name] = re.sub(r"\\([0-9])", lambda g: (m.group(int(g.group(1))) or "")
                               if int(g.group(1)) <= (pattern.groups or 0) else g.group(0), replacement)
    for name, new in matched.items():
        found = ad.lookup(name)
        if key == "delete":
            del ad[name]
        elif found is not None and _ATTR.match(new):
            ad[new] = found
            if key == "rename" and new.lower() != name.lower():
                del ad[name]


def _parsed(text):
    """Expression ``text`` parsed (ValueError when it does not read)."""
    from gridtools.classad import ClassAdSyntaxError, parse
    try:
        return parse(text)
    except ClassAdSyntaxError as exc:
        raise ValueError(f"{text!r}: {exc}") from None


def _value(ad, text):
    """The value of expression ``text`` in ``ad`` (ValueError when it does not read)."""
    probe = ad.copy()
    probe["_TransformValue"] = _parsed(text)
    return probe.eval("_TransformValue")


def _expand(text, macros, ad, depth=0):
    """``text`` with its ``$(...)`` macros put in (see the module docstring)."""
    if "$(" not in text or depth > 20:
        return text

    def one(m):
        name, default = m.group(1), m.group(2)
        if name[:3].lower() == "my.":
            found = ad.lookup(name[3:])
            return found.unparse() if found is not None else (default or "")
        value = macros.get(name.lower())
        if value is None:
            return default or ""
        return _expand(value, macros, ad, depth + 1)
    return _MACRO.sub(one, text)

