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
those whose method is ``*``. An ``@include PATH`` line reads the map file PATH
names (relative to the including file's folder), or each file of that folder in
the order of their names (those HTCondor's LOCAL_CONFIG_DIR_EXCLUDE_REGEXP
passes over left out), in its place; an included file's own ``@include`` lines
are passed over. A map whose CLASSAD_USER_MAP_PREFIX_<name> is true is a
prefix map: its principals are plain texts, and the longest one a name starts
with gives the value.

``install`` makes the maps of a configuration the ones ``userMap()`` reads (the
daemon at each reading of its condor_config; condor_submit before it checks the
cell's submit requirements).
"""

import re

#: the knob that names the schedd's maps
NAMES = "SCHEDD_CLASSAD_USER_MAP_NAMES"


class UserMap:
    """One map: its entries, (method, principal: a text or a compiled pattern,
    canonical), in their order; ``prefix``: a prefix map, whose principals are texts
    a name starts with (the longest that does wins)."""

    def __init__(self, entries, prefix=False):
        self.entries, self.prefix = entries, prefix

    def lookup(self, method, name):
        """The canonical value of ``name`` under ``method``, or None."""
        if self.prefix:
            best = None
            for entry_method, principal, canonical in self.entries:
                if entry_method == method and name.startswith(principal) and \
                        (best is None or len(principal) > len(best[0])):
                    best = (principal, canonical)
            return best[1] if best is not None else None
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


def parse(text, prefix=False, source=None, problems=None, include=True, exclude=None):
    """The UserMap of a map's text (lines that do not read are passed over). ``prefix``:
    a prefix map (CLASSAD_USER_MAP_PREFIX_<name>). ``source``: the file it was read
    from, whose folder a relative ``@include`` path is taken from. An ``@include`` line
    (``include``: not in an included file) reads a file, or each file of a folder in
    order, in its place (the names ``exclude``, a compiled pattern, matches passed over:
    HTCondor's default LOCAL_CONFIG_DIR_EXCLUDE_REGEXP when None); what cannot be read
    is said in ``problems`` (a list)."""
    entries = []
    for line in text.splitlines():
        method, at, _r = _field_at(line, 0)
        if method == "@include":
            path, _at, _r = _field_at(line, at)
            if include and path:
                if exclude is None:
                    from gridtools.formats.condor_config import DEFAULT_DIR_EXCLUDE
                    exclude = re.compile(DEFAULT_DIR_EXCLUDE)
                entries.extend(_included(path, source, prefix, problems, exclude))
            continue
        principal, at, regex = _field_at(line, at, allow_regex=not prefix)
        canonical, _at, _r = _field_at(line, at)
        if not method or method.startswith("#") or not principal or not canonical:
            continue
        if regex is not None:
            try:
                principal = re.compile(principal, regex)
            except re.error:
                continue
        entries.append((method, principal, canonical))
    return UserMap(entries, prefix)


def _included(path, source, prefix, problems, exclude):
    """The entries of the file or folder ``path`` names (relative to ``source``'s folder;
    ``exclude``: the pattern of the names of a folder's files passed over)."""
    import os
    if not path.startswith("/") and source and "/" in source:
        path = os.path.join(os.path.dirname(source), path)
    if os.path.isdir(path):
        try:
            names = sorted(n for n in os.listdir(path) if not exclude.match(n))
        except OSError as exc:
            _said(problems, f"ERROR: Could not include dir {path} ({exc.strerror or exc})")
            return []
        files = [os.path.join(path, n) for n in names if os.path.isfile(os.path.join(path, n))]
    else:
        files = [path]
    entries = []
    for name in files:
        try:
            entries.extend(parse(_read(name), prefix, name, problems, include=False).entries)
        except OSError as exc:
            _said(problems, f"ERROR: Could not open included map file {name} ({exc.strerror or exc})")
    return entries


def _read(path):
    """A map file's text (its first 4 MiB)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read(1 << 22)


def _said(problems, line):
    if problems is not None:
        problems.append(line)


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
    exclude = None
    pattern = get("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP")
    if pattern and pattern.strip():
        try:
            exclude = re.compile(pattern.strip())
        except re.error:
            exclude = None
    for name in dict.fromkeys(re.split(r"[,\s]+", get(NAMES) or "")):
        if not name:
            continue
        prefix = _boolean(get, f"CLASSAD_USER_MAP_PREFIX_{name}")
        path = (get(f"CLASSAD_USER_MAPFILE_{name}") or "").strip()
        if path:
            try:
                found[name] = parse(_read(path), prefix, path, problems, exclude=exclude)
            except OSError as exc:
                problems.append(f"ERROR: Could not open classad userMap '{name}' file {path} "
                                f"({exc.strerror or exc})")
            continue
        data = get(f"CLASSAD_USER_MAPDATA_{name}")
        if data is not None:
            found[name] = parse(data, prefix, None, problems, exclude=exclude)
    return found, problems


def _boolean(get, name):
    """Boolean knob ``name`` (false when unset or not a boolean), as HTCondor's
    param_boolean reads it (``condor_config.boolean``)."""
    from types import SimpleNamespace
    from gridtools.formats.condor_config import boolean_or
    return boolean_or(SimpleNamespace(get=get), name, False)


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
