"""Small facts of the cell's configuration read by hand from etc/ (fast, no parsers):
attributes of one object file, and the access lists a user belongs to. Used by the
checks qsub, qrsub and qrstat make before they ask the daemon, among them qsub's
check of Grid Engine's admission rules (``formats.sge.admission``; the daemon checks
them again when it takes the job in).

The rules read only the global configuration's attributes in ``RULE_ATTRIBUTES``,
the owner's user object and the job's project and deadline: when none of them is
set, no rule can refuse the job or give it a project, and the rules are not even
imported (the common submission pays nothing for them)."""

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


def job_is_first_task(pe_name, _known={}):
    """The PE's job_is_first_task (TRUE unless its file says FALSE; TRUE for no PE)."""
    if not pe_name:
        return True
    if pe_name not in _known:
        value = attributes(cell.etc("pe", pe_name)).get("job_is_first_task", "TRUE")
        _known[pe_name] = value.strip().lower() not in ("false", "0", "no", "f", "n")
    return _known[pe_name]


def _listed(kind, user):
    """True when ``user`` is a line of etc/``kind`` (managers, operators)."""
    try:
        with open(cell.etc(kind), encoding="utf-8", errors="replace") as fh:
            return any(line.strip() == user for line in fh)
    except OSError:
        return False


def is_operator(user):
    """True when ``user`` is an operator or a manager (root always is)."""
    return user == "root" or _listed("managers", user) or _listed("operators", user)


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


# ---------------------------------------------------------------- admission rules

#: attributes of the global configuration that let the admission rules act on a job
#: without a project: a switch acts when "true", a value when set (not empty, 0 or NONE)
RULE_ATTRIBUTES = {"enforce_user": "switch", "enforce_project": "switch", "projects": "value",
                   "max_u_jobs": "value", "max_jobs": "value", "user_lists": "value",
                   "xuser_lists": "value"}


def _object(folder, name):
    if not name or "/" in name or name.startswith("."):
        return None
    path = cell.etc(folder, name)
    if not ospaths.isfile(path):
        return None
    return attributes(path)


def _counts():
    """(jobs per owner, all jobs) still in the cell, from the status the daemon published."""
    from gridtools.cli.sge import qstatus
    snap = qstatus.load()
    live = {r["id"] for r in snap["rows"] if r.get("state") != "z"}
    per_owner = {}
    for job_id in live:
        owner = (snap["jobs"].get(job_id) or {}).get("owner")
        per_owner[owner] = per_owner.get(owner, 0) + 1
    return per_owner, len(live)


def cell_view(conf=None):
    from gridtools.formats.sge import admission
    lists = {}
    counted = []

    def member(name, user, _group):
        if user not in lists:
            lists[user] = member_lists(user)
        return name in lists[user]

    def counts():
        if not counted:
            counted.append(_counts())
        return counted[0]

    if conf is None:
        conf = attributes(cell.etc("conf", "global"))
    return admission.CellView(
        conf=conf, user=lambda name: _object("users", name), project=lambda name: _object("projects", name),
        member=member, jobs_of=lambda user: counts()[0].get(user, 0), jobs_total=lambda: counts()[1])


def rules_set(conf):
    """True when the global configuration ``conf`` (name -> value) sets an attribute of
    RULE_ATTRIBUTES, so that the admission rules may refuse a job without a project.
    Values are either the file's text or the daemon's parsed values (booleans, numbers,
    lists)."""
    for name, kind in RULE_ATTRIBUTES.items():
        value = conf.get(name)
        if isinstance(value, (list, tuple)):
            value = " ".join(str(item) for item in value)
        value = str(value or "").strip().lower()
        if (value == "true") if kind == "switch" else value not in ("", "0", "none"):
            return True
    return False


def _rules_apply(req, owner, conf):
    """False when no admission rule can refuse the job nor change it (see the docstring)."""
    if req.get("project") or req.get("deadline") or _object("users", owner) is not None:
        return True
    return rules_set(conf)


def _group():
    """The caller's primary group name (its number when it has none)."""
    import grp
    import posix
    try:
        return grp.getgrgid(posix.getgid()).gr_name
    except KeyError:
        return str(posix.getgid())


def refusal(req, owner, conf=None):
    """The admission rules' refusal of a job request of ``owner`` (None: accepted); may
    set its project. ``conf``: the global configuration's attributes, when the caller
    has read them."""
    if conf is None:
        conf = attributes(cell.etc("conf", "global"))
    if not _rules_apply(req, owner, conf):
        return None
    from gridtools.formats.sge import admission
    spec = dict(req, owner=owner, group=_group(), submit_host=cell.hostname())
    why = admission.check(spec, cell_view(conf))
    if why is None and spec.get("project") != req.get("project"):
        req["project"] = spec["project"]
    return why
