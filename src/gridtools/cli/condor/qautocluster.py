"""condor_q -autocluster and -group-by: the jobs aggregated as HTCondor's schedd does.

An autocluster is the jobs with the same values of the significant
attributes. As HTCondor's negotiator and schedd make the list, those are
the job attributes the slots' Requirements and Rank refer to (``TARGET.x``,
or a name the slot does not define; minus those HTCondor never takes, such
as CurrentTime or RemoteUser), sorted ignoring case, then those of
Requirements, Rank, ConcurrencyLimits and FlockTo that are not among them;
each job adds the attributes those refer to in its own ad (followed through
the ad, and names defined nowhere), sorted ignoring case. The signature is
``Name = value`` of each (empty when the job has none); the jobs of one
signature are one autocluster, numbered from 1 in the order of the jobs, and
its ad has the attributes the signature defines, ``AutoClusterId``,
``JobIds`` (``job_ids``) and ``JobCount``. The jobs are those of the queue
not completed or removed, whoever owns them; ``-constraint``, ids and users
select among the autocluster ads, as HTCondor's schedd tests its query on
them.

``-group-by`` aggregates on the attributes of ``-af``, ``-format`` or
``-attributes`` instead (every job of the queue, ``-constraint`` testing the
jobs and then the groups), the groups numbered by ``Id``; without those
views, on the attributes of the per-job table, shown in it (``group_table``).

The default view is HTCondor's autocluster table (``   ID COUNT UNIVERSE CPUS
MEMORY     DISK REQUIREMENTS``, no totals); ``-long``, ``-json``, ``-xml``,
``-af`` and ``-format`` show the ads, and ``-print-format FILE`` its columns of
them (``SELECT FROM AUTOCLUSTER`` in the file asks for the autoclusters,
``SELECT UNIQUE`` for the groups of the attributes its columns refer to).
With ``-jobads FILE`` the file's ads are taken as autocluster or group ads,
and with ``-userlog`` the log's job ads (``from_file``).
"""

import time

from gridtools.cli.condor import queue as Q

#: references the negotiator leaves out of the significant attributes (lower case)
BANNED = frozenset(name.lower() for name in (
    "CurrentTime", "LastHeardFrom", "RemoteUser", "RemoteOwner", "RemoteUserFloor", "RemoteUserPrio",
    "RemoteUserResourcesInUse", "RemoteGroupResourcesInUse", "SubmittorPrio", "SubmitterUserPrio",
    "SubmitterUserResourcesInUse", "SubmitterGroupResourcesInUse", "TotalJobRunTime",
    "MachineLastMatchTime", "JobCurrentStartDate", "JobState", "Mips", "KFlops", "SlotID",
    "DSlotId", "PartitionableSlot", "DynamicSlot", "Offline", "PelicanPluginVersion"))

#: the attributes the schedd always takes
REQUIRED = ("ConcurrencyLimits", "FlockTo", "Rank", "Requirements")

#: the views that show the ads themselves
AD_VIEWS = ("long", "json", "xml", "af", "format")

#: what -group-by groups on for the per-job table: the attributes HTCondor's default
#: table asks its schedd for (its columns and what they are worked out from)
TABLE_ATTRS = ("ClusterId", "ProcId", "Owner", "QDate", "RemoteUserCpu", "JobStatus", "ServerTime",
               "ShadowBday", "RemoteWallClockTime", "LastRemoteWallClockTime", "JobPrio", "ImageSize",
               "Cmd", "Args", "Arguments", "JobDescription", "MATCH_EXP_JobDescription")

#: the columns of HTCondor's autocluster table
HEAD = "   ID COUNT UNIVERSE CPUS MEMORY     DISK REQUIREMENTS"

#: JobUniverse as HTCondor's JOB_UNIVERSE column names it
UNIVERSES = {1: "Standard", 4: "PVM", 5: "Vanilla", 6: "PVMD", 7: "Scheduler", 8: "MPI", 9: "Grid",
             10: "Java", 11: "Parallel", 12: "Local", 13: "VM"}


def _children(node):
    for cls in type(node).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot in ("_fn", "_text", "_old_text", "depth"):
                continue
            value = getattr(node, slot, None)
            if isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, tuple):
                        yield from (part for part in item if hasattr(part, "depth"))
                    elif hasattr(item, "depth"):
                        yield item
            elif hasattr(value, "depth") and not isinstance(value, (str, int, float)):
                yield value


def _names(expr):
    """(scope or None, name) of every attribute reference of ``expr``."""
    from gridtools.classad.nodes import Attr, Scoped
    stack, found = [expr], []
    while stack:
        node = stack.pop()
        if isinstance(node, Attr):
            found.append((None, node.name))
        elif isinstance(node, Scoped):
            found.append((node.scope.lower(), node.name))
        else:
            stack.extend(_children(node))
    return found


def _lower_sorted(names):
    unique = {}
    for name in names:
        unique.setdefault(name.lower(), name)
    return [unique[key] for key in sorted(unique)]


def significant(machines):
    """The significant attributes the slots make (the negotiator's list and the
    schedd's own)."""
    refs = []
    for machine in machines:
        for attr in ("Requirements", "Rank"):
            expr = machine.lookup(attr)
            seen, todo = set(), [expr] if expr is not None else []
            while todo:
                for scope, name in _names(todo.pop()):
                    if scope == "target" or (scope is None and machine.lookup(name) is None):
                        refs.append(name)
                    elif scope in (None, "my") and name.lower() not in seen:
                        seen.add(name.lower())       # (the slot's own: followed through it)
                        todo.append(machine.lookup(name))
    found = [name for name in _lower_sorted(refs) if name.lower() not in BANNED]
    have = {name.lower() for name in found}
    return found + [name for name in REQUIRED if name.lower() not in have]


def _expanded(job, names):
    """The attributes the values of ``names`` refer to in the job: its own (followed
    through the ad) and names it does not define, sorted ignoring case."""
    found, seen = [], set()
    todo = [job.lookup(name) for name in names if job.lookup(name) is not None]
    while todo:
        for scope, name in _names(todo.pop()):
            if scope not in (None, "my") or name.lower() in seen:
                continue
            seen.add(name.lower())
            found.append(name)
            expr = job.lookup(name)
            if expr is not None:
                todo.append(expr)
    listed = {name.lower() for name in names}
    return [name for name in _lower_sorted(found) if name.lower() not in listed]


def _signature(job, names):
    every = list(names) + _expanded(job, names)
    return tuple((name, job.lookup(name).unparse(True) if job.lookup(name) is not None else "")
                 for name in every)


def aggregate(jobs, names, id_attr):
    """The aggregate ads of ``jobs`` on the attributes ``names``, in the order of their ids."""
    from gridtools.classad import ClassAd, parse
    groups = {}
    for job in jobs:
        groups.setdefault(_signature(job, names), []).append(job)
    found = []
    for number, (signature, members) in enumerate(groups.items(), 1):
        ad = ClassAd()
        for name, text in signature:
            if text:
                ad[name] = parse(text, old=True)
        ad[id_attr] = number
        ad["JobIds"] = job_ids(members)
        ad["JobCount"] = len(members)
        found.append(ad)
    return found


#: how many job ids condor_q asks its schedd to list in an aggregate ad (MaxReturnedJobIds)
RETURNED_IDS = 2


def job_ids(jobs, limit=RETURNED_IDS):
    """``JobIds`` of an aggregate ad, as HTCondor's schedd writes it: the ids of its
    jobs in order (by cluster, then proc), ``cluster.proc`` apart by spaces, the
    first and the last always, those between them only while ``limit`` leaves room
    for them (``...`` for the rest): "1.0", "1.0 1.1", "1.0 ... 1.4"."""
    ids = sorted({(job.eval("ClusterId"), job.eval("ProcId")) for job in jobs},
                 key=lambda pair: tuple(v if type(v) is int else -1 for v in pair))
    shown = [ids[0]] if ids else []
    room = limit - 2
    for pair in ids[1:-1]:
        room -= 1
        if room < 0:
            shown.append("...")
            break
        shown.append(pair)
    if len(ids) > 1:
        shown.append(ids[-1])
    return " ".join(item if isinstance(item, str) else _id_text(*item) for item in shown)


def _id_text(cluster, proc):
    """A job id as HTCondor's schedd writes one (a cluster's own ad: ``0CLUSTER.-1``)."""
    if proc == -1:
        return f"0{cluster}.-1"
    return f"{cluster}.{proc}"


def _cell(value, width, fmt, missing="??"):
    if type(value) in (int, float) and not isinstance(value, bool):
        return format(int(value), fmt)
    return missing.rjust(width)


def table(ads):
    """HTCondor's autocluster table of the autocluster ads."""
    lines = [HEAD]
    for ad in ads:
        universe = ad.eval("JobUniverse")
        name = UNIVERSES.get(universe, "Unknown") if type(universe) is int else "??"
        req = ad.lookup("Requirements")
        lines.append(f"{_cell(ad.eval('AutoClusterId'), 5, '5d', '')} {_cell(ad.eval('JobCount'), 5, '5d', '')} {name:<8} "
                     f"{_cell(ad.eval('RequestCpus'), 4, '4d')} {_cell(ad.eval('RequestMemory'), 6, '6d')} "
                     f"{_cell(ad.eval('RequestDisk'), 8, '8d')} {req.unparse(True) if req is not None else ''}")
    return "\n".join(lines) + "\n"


def _selected(opts, ads):
    sel = opts.selection
    if sel.constraints:
        exprs = Q.compile_constraints(sel.constraints)
        ads = [ad for ad in ads if Q.matches_all(ad, exprs)]
    if sel.named:
        def named(ad):
            owner, cluster, proc = ad.eval("Owner"), ad.eval("ClusterId"), ad.eval("ProcId")
            return ((isinstance(owner, str) and owner in sel.users) or cluster in sel.clusters
                    or (cluster, proc) in sel.ids)
        ads = [ad for ad in ads if named(ad)]
    return ads


def from_file(opts, ads, attributes, label, now):
    """-autocluster or -group-by with -jobads or -userlog: as HTCondor's condor_q reads
    them, the file's ads are taken as autocluster ads (as ``condor_q -autocluster -l``
    writes them) or group ads, in the order of their AutoClusterId or Id (those
    without one after them, in the file's order), and shown as the queue's are:
    the autocluster table or the per-job table (titled ``-- LABEL @ DATE``), or the
    ads' forms."""
    ident = "Id" if opts.autocluster == "group-by" else "AutoClusterId"
    ads = _by_id(_selected(opts, ads), ident)
    if opts.view in AD_VIEWS:
        return attributes(opts, ads, _Own())
    title = f"\n\n-- {label} @ {time.strftime('%m/%d/%y %H:%M:%S', time.localtime(now))}\n"
    if opts.view == "print":
        return _print_table(opts, ads, title)
    if opts.autocluster == "group-by":
        return group_table(opts, ads, attributes, label, now)
    return title + table(ads)


def run(opts, attributes, render_title):
    """condor_q's text of -autocluster or -group-by; ``attributes`` is condor_q's own
    (``q._attributes``), ``render_title`` the title of its tables."""
    from gridtools.cli import status
    snap = status.load()
    for line in status.warnings(snap):
        import sys
        sys.stderr.write(line + "\n")
    everyone = Q.procs(snap)
    source = Q.AdSource(snap, Q.me())
    now = time.time()
    if opts.autocluster == "group-by":
        names = list(opts.af_attrs or [attr for _fmt, attr in opts.formats] or opts.attributes or [])
        if opts.view == "print":
            names = _print_attrs(opts.print_format)
        elif opts.view not in AD_VIEWS:
            names = list(TABLE_ATTRS)
        jobs = [source.ad(p) for p in everyone]
        if opts.selection.constraints:
            exprs = Q.compile_constraints(opts.selection.constraints)
            jobs = [ad for ad in jobs if Q.matches_all(ad, exprs)]
        ads = _selected(opts, aggregate(jobs, names, "Id"))
        if opts.view == "print":
            return _print_table(opts, ads, render_title(now))
        if opts.view not in AD_VIEWS:
            return group_table(opts, ads, attributes, render_title(now).partition("-- ")[2].partition(" @ ")[0], now)
    else:
        from gridtools.cli.condor import analyze
        machines = analyze.slots(snap, everyone, now, opts)
        live = [p for p in everyone if p.status not in (Q.COMPLETED, Q.REMOVED)]
        ads = _selected(opts, aggregate([source.ad(p) for p in live], significant(machines), "AutoClusterId"))
    if opts.view in ("long", "json", "xml", "af", "format"):
        return attributes(opts, ads, _Own())
    if opts.view == "print":
        return _print_table(opts, ads, render_title(now))
    return render_title(now) + table(ads)


def _print_attrs(mask):
    """What -group-by groups on with a print-format file: the attributes the file refers
    to (with ``SELECT UNIQUE`` alone; else with the job ids, as HTCondor's condor_q adds
    them to its query)."""
    from gridtools.cli.condor import printformat
    names = printformat.unique_attrs(mask)
    if mask.aggregate is None:
        names = _lower_sorted(names + ["ClusterId", "ProcId"])
    return names


def _print_table(opts, ads, title):
    """The autocluster or group ads in the columns of -print-format's file (``SELECT
    FROM AUTOCLUSTER``, ``SELECT UNIQUE``, or a file given with -autocluster or
    -group-by), cut to the display as condor_q cuts its tables."""
    from gridtools.cli import condor
    from gridtools.cli.condor import printformat
    width = condor.table_width(opts.wide)
    ident = "Id" if opts.autocluster == "group-by" else "AutoClusterId"
    return printformat.aggregate_table(opts.print_format, ads, ident, title, lambda body: condor.cut(body, width))


def group_table(opts, ads, attributes, label, now):
    """-group-by without -af, -format, -long, -json or -xml: condor_q's per-job table
    (-nobatch) over the group ads, in the order of their ``Id``, titled ``-- LABEL @
    DATE`` and followed by the totals of the rows, as HTCondor's condor_q shows the
    ads its schedd sends (those without a ClusterId and ProcId left out, as -jobads
    leaves them out)."""
    from gridtools.cli.condor import qjobads, qlog
    ads = [ad for ad in _by_id(ads, "Id") if qjobads._has_ids(ad)]
    opts.view, opts.dag = "nobatch", False
    procs = [qjobads.proc_of(ad) for ad in ads]
    return qlog.show(opts, lambda _o, everyone, _u, _s: everyone, attributes, procs, qlog.LogAds(ads),
                     label, Q.me(), now)


def _by_id(ads, attr):
    """The ads in the order of their ``attr``, those without one after them (HTCondor's
    condor_q keys each by the id, or by a count beyond any id)."""
    numbered = sorted((ad for ad in ads if type(ad.eval(attr)) is int), key=lambda ad: ad.eval(attr))
    return numbered + [ad for ad in ads if type(ad.eval(attr)) is not int]


class _Own:
    """The ads themselves as condor_q's source of ads."""

    @staticmethod
    def ad(item):
        return item
