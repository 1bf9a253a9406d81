"""Small facts of the cell's configuration read by hand from etc/ (fast, no parsers):
attributes of one object file, and the access lists a user belongs to. Used by the
checks qsub, qrsub and qrstat make before they ask the daemon."""

import posix

from gridtools import cell, ospaths


def attributes(path):
    """name -> value text of a Grid Engine object file (continuation lines joined); {} if absent."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read().replace("\\\n", " ")
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        parts = line.split(None, 1)
        if parts and not parts[0].startswith("#"):
            found[parts[0]] = parts[1].strip() if len(parts) > 1 else ""
    return found


def names(text):
    """The names of a list value (``NONE`` and blanks dropped)."""
    return [n for n in (text or "").replace(",", " ").split() if n.lower() != "none"]


def groups_of(user):
    """Unix group names of ``user`` (primary and supplementary)."""
    import grp
    import pwd
    try:
        found = {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
        found.add(grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name)
    except KeyError:
        return set()
    return found


def member_lists(user):
    """Names of the access lists (etc/usersets) whose entries name ``user`` or one of its groups."""
    groups = groups_of(user)
    folder = cell.etc("usersets")
    try:
        lists = posix.listdir(folder)
    except FileNotFoundError:
        return set()
    found = set()
    for name in lists:
        entries = names(attributes(ospaths.join(folder, name)).get("entries"))
        if user in entries or any(f"@{g}" in entries for g in groups):
            found.add(name)
    return found
