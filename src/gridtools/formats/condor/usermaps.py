"""The schedd's ClassAd user maps, which the ``userMap()`` function reads
(``classad.envargs``): ``SCHEDD_CLASSAD_USER_MAP_NAMES`` names them, and each
name's map is the file ``CLASSAD_USER_MAPFILE_<name>`` names, else the text of
``CLASSAD_USER_MAPDATA_<name>``.

A map's lines are HTCondor's map file lines, ``method principal canonical``
(blank lines and those whose first word starts with ``#`` passed over; a field
may be put in double quotes to hold blanks): the principal is a word matched
whole, or ``/regex/`` (followed by ``i`` for any case) searched for in the
name, and ``\\1`` ... ``\\9`` in the canonical value stand for its groups. The
first line that matches gives the value, a comma-separated list. A map name of
the form ``name.method`` looks at the lines of that method only; a plain name at
those whose method is ``*``. ``@include`` lines are not read.

``install`` makes the maps of a configuration the ones ``userMap()`` reads (the
daemon at each reading of its condor_config; condor_submit before it checks the
cell's submit requirements).
"""

import re

#: the knob that names the schedd's maps
NAMES = "SCHEDD_CLASSAD_USER_MAP_NAMES"


class UserMap:
    """One map: its entries, (method, principal: a text or a compiled pattern,
    canonical), in their order."""

    def __init__(self, entries):
        self.entries = entries

    def lookup(self, method, name):
        """The canonical value of ``name`` under ``method``, or None."""
        for entry_method, principal, canonical in self.entries:
            if entry_method != method:
                continue
            if isinstance(principal, str):
                if principal == name:
                    return canonical
                continue
            found = principal.search(name)
            if found is not None:
                return re.sub(r"\\(\d)", lambda m: _group(found, int(m.group(1))), canonical)
        return None


def _group(found, number):
    try:
        return found.group(number) or ""
    except IndexError:
        return ""


def parse(text):
    """The UserMap of a map file's text (lines that do not read are passed over)."""
    entries = []
    for line in text.splitlines():
        fields, at = [], 0
        for _field in range(3):
            word, at, regex = _field_at(line, at, allow_regex=len(fields) == 1)
            fields.append((word, regex))
        (method, _r), (principal, regex), (canonical, _r2) = fields
        if not method or method.startswith("#") or method == "@include" or not principal or not canonical:
            continue
        if regex is not None:
            try:
                principal = re.compile(principal, regex)
            except re.error:
                continue
        entries.append((method, principal, canonical))
    return UserMap(entries)


def _field_at(line, at, allow_regex=False):
    """(the field starting at or after ``at``, where it ends, the regex flags when it is a
    ``/regex/``, else None)."""
    size = len(line)
    while at < size and line[at] in " \t":
        at += 1
    if at >= size:
        return "", at, None
    end_mark = line[at] if line[at] == '"' or (allow_regex and line[at] == "/") else None
    if end_mark is None:
        start = at
        while at < size and line[at] not in " \t":
            at += 1
        return line[start:at], at, None
    at += 1
    out = []
    while at < size and line[at] != end_mark:
        if line[at] == "\\" and at + 1 < size and line[at + 1] in (end_mark, "\\"):
            at += 1
        out.append(line[at])
        at += 1
    at += 1
    flags = None
    if end_mark == "/":
        flags = 0
        while at < size and line[at] in "iU":
            flags |= re.IGNORECASE if line[at] == "i" else 0
            at += 1
    return "".join(out), at, flags


def load(get):
    """({map name: UserMap}, [lines for the messages]) of a configuration (``get``: knob
    -> its expanded text or None)."""
    found, problems = {}, []
    for name in dict.fromkeys(re.split(r"[,\s]+", get(NAMES) or "")):
        if not name:
            continue
        path = (get(f"CLASSAD_USER_MAPFILE_{name}") or "").strip()
        if path:
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    found[name] = parse(fh.read(1 << 22))
            except OSError as exc:
                problems.append(f"ERROR: Could not open classad userMap '{name}' file {path} "
                                f"({exc.strerror or exc})")
            continue
        data = get(f"CLASSAD_USER_MAPDATA_{name}")
        if data is not None:
            found[name] = parse(data)
    return found, problems


_INSTALLED = {}


def install(maps):
    """Make ``maps`` ({name: UserMap}) the ones ``userMap()`` reads."""
    _INSTALLED.clear()
    _INSTALLED.update(maps)


def mapping(map_name, name):
    """The value of ``name`` in the installed map ``map_name`` (``name.method``: that
    method's lines; else those of method ``*``), or None."""
    base, dot, method = map_name.partition(".")
    found = _INSTALLED.get(base)
    return found.lookup(method if dot else "*", name) if found is not None else None
