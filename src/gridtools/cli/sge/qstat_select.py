"""Which queue instances and jobs qstat shows when queues are selected.

``-q``, ``-qs``, ``-pe``, ``-U`` and ``-l`` select queue instances; a queue
is shown only when it meets all of them. Running jobs are then shown when
they occupy a selected queue; pending jobs when they could run in one of
them as far as their requests tell (hard queue list, parallel environment,
resource requests) and their project, without looking at free capacity.
Grid Engine's qstat judges a job's project by the queue's ``projects`` and
``xprojects`` lists alone (``project_admits``): a job submitted with ``-P``
is not shown for a queue whose ``projects`` is NONE.

A ``-q`` list that matches no queue instance, or a ``-pe`` list none of whose
names is a configured parallel environment, is an error (``check_names``), as
in Grid Engine; a list where some names match uses those and passes over the
others.
"""

from gridtools.cli.sge import loadvalues, qstat_queues
from gridtools import wildcards
from gridtools.errors import GridError

#: Grid Engine's message when none of the -pe names is a parallel environment
NO_SUCH_PE = "error: no such parallel environment"


class NothingNamed(GridError):
    """A -q or -pe list that names nothing configured: the command exits 1, saying
    the message when there is one (Grid Engine says nothing for -q)."""


def _host_match(host, pattern, snap):
    if pattern.startswith("@"):
        groups = snap.get("hostgroups") or {}
        return any(host in members for name, members in groups.items()
                   if wildcards.match(name, pattern))
    return wildcards.match(host.lower(), pattern.lower())


def queue_matches(row, spec, snap):
    """Does a queue instance match one ``-q`` entry (cq, cq@host, cq@@hostgroup, wildcards)?"""
    qpart, at, hpart = spec.partition("@")
    if not wildcards.match(row["queue"], qpart or "*"):
        return False
    return not at or _host_match(row["host"], hpart, snap)


def _in_list(user, entries):
    for entry in entries:
        if entry == user:
            return True
        if entry.startswith("@"):
            import grp
            try:
                if user in grp.getgrnam(entry[1:]).gr_mem:
                    return True
            except KeyError:
                continue
    return False


def user_has_access(row, user, snap):
    """Access lists of a queue (user_lists / xuser_lists) allow ``user``."""
    attrs = row.get("attrs") or {}
    lists = snap.get("access_lists") or {}
    allowed = attrs.get("user_lists") or []
    denied = attrs.get("xuser_lists") or []
    if any(_in_list(user, lists.get(name, ())) for name in denied):
        return False
    return not allowed or any(_in_list(user, lists.get(name, ())) for name in allowed)


def offered(row, name, snap):
    """The value a queue instance offers for complex ``name`` (None when it has none)."""
    attrs = row.get("attrs") or {}
    host_values = snap.get("host_values") or {}
    if name == "qname":
        return row["queue"]
    if name in ("hostname", "h"):
        return row["host"]
    for source in ((attrs.get("complex_values") or {}), attrs, host_values.get(row["host"], {}),
                   qstat_queues.host_load(snap, row["host"]), host_values.get("global", {})):
        if name in source and not isinstance(source[name], (dict, list)):
            return source[name]
    if name == "slots":
        return row["slots"]
    return None


def _full_name(name, complexes):
    if name in complexes:
        return name
    return next((full for full, cx in complexes.items() if cx[0] == name), name)


def meets_requests(row, requests, snap):
    """All -l requests are satisfied by the queue instance (unknown resources are ignored)."""
    complexes = snap.get("complexes") or {}
    for raw, wanted in requests.items():
        name = _full_name(raw, complexes)
        value = offered(row, name, snap)
        if value is None:
            continue
        if not loadvalues.matches_request(name, value, wanted, complexes):
            return False
    return True


def queue_selected(row, snap, opts):
    if opts.queues and not any(queue_matches(row, spec, snap) for spec in opts.queues):
        return False
    if opts.queue_states is not None:
        if not set(qstat_queues.states(row, snap)) & set(opts.queue_states):
            return False
    if opts.pes and not any(wildcards.match(pe, want) for pe in row.get("pe_list") or ()
                            for want in opts.pes):
        return False
    if opts.access_users and not any(user_has_access(row, u, snap) for u in opts.access_users):
        return False
    return meets_requests(row, opts.requests, snap)


def check_names(snap, opts):
    """Raise NothingNamed when no queue instance matches any ``-q`` entry (no message)
    or no configured parallel environment any ``-pe`` name (``NO_SUCH_PE``): qstat and
    qselect call it before they select queues."""
    if opts.queues and not any(queue_matches(row, spec, snap)
                               for row in snap.get("queues") or () for spec in opts.queues):
        raise NothingNamed("")
    if opts.pes:
        from gridtools.spool import config as spool_config
        configured = spool_config.names("pe")
        if not any(wildcards.match(name, want) for name in configured for want in opts.pes):
            raise NothingNamed(NO_SUCH_PE)


def selected_queues(snap, opts):
    """Queue rows in display order (by cluster queue, then host) that pass the selection
    (the commands call ``check_names`` first)."""
    rows = sorted(snap.get("queues") or [], key=lambda r: (r["queue"], r["host"]))
    return [r for r in rows if queue_selected(r, snap, opts)]


def project_admits(row, project):
    """Grid Engine's static test of a job's project against a queue instance, as its
    qstat makes it: a job without a project passes; one with a project passes only a
    queue whose ``projects`` list names it and whose ``xprojects`` list does not (a
    queue with ``projects NONE`` takes no job that has a project, here, though the
    scheduler lets such a job run there)."""
    if not project:
        return True
    attrs = row.get("attrs") or {}
    return project in (attrs.get("projects") or ()) and project not in (attrs.get("xprojects") or ())


def pending_fits(job, queues, snap, pe=None):
    """A pending job could run in one of the queue instances, judged by its requests
    (``pe``: a list to judge the row's parallel environment request by, not the job's)
    and its project (``project_admits``)."""
    pe = job.get("pe") if pe is None else pe
    for row in queues:
        if not project_admits(row, job.get("project")):
            continue
        if job.get("hard_queues") and not any(queue_matches(row, q, snap) for q in job["hard_queues"]):
            continue
        if pe and not any(wildcards.match(name, pe[0]) for name in row.get("pe_list") or ()):
            continue
        if not meets_requests(row, job.get("hard") or {}, snap):
            continue
        return True
    return False


def filter_rows(rows, snap, queues):
    """Job rows restricted to the selected queue instances."""
    names = {q["name"] for q in queues}
    out = []
    for row in rows:
        if "granted" in row:
            if any(f"{q}@{h}" in names for q, h, _ in row["granted"]):
                out.append(row)
        elif row["state"] == "z" or pending_fits(_row_job(snap["jobs"].get(row["id"], {}), row), queues, snap,
                                                      (row["req_pe"] or []) if "req_pe" in row else None):
            out.append(row)
    return out


def _row_job(job, row):
    """The facts of a row's job, with the hard requests of the row's tasks when they ask
    for others (``req_hard``: procs of an HTCondor cluster)."""
    return dict(job, hard=row["req_hard"]) if "req_hard" in row else job
