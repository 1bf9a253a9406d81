"""-print-format FILE (-pr FILE) of condor_status and condor_q: a print-format file
(``printmask``) read as HTCondor's tools read it, and the tables they print with it.

``load`` reads the file ("-": standard input) and prints the warnings HTCondor
prints about it on standard error; a file that cannot be read is refused in
HTCondor's words, and so is, by condor_status, one that asks for an aggregation
(``SELECT FROM AUTOCLUSTER``, ``SELECT UNIQUE``). condor_q shows such a file's
columns for the autoclusters of the queue, or for the groups of jobs alike in
the attributes the file refers to and those its PRINTAS functions look at
(``aggregate_table``, ``unique_attrs``).
condor_status prints the heading line (unless NOHEADER) and the rows, then, with
SUMMARY STANDARD, the summary of its query mode after a blank line; condor_q prints its title
(unless NOTITLE), the heading line, the rows and, with SUMMARY STANDARD, its
totals line. GROUP BY is read and, as in HTCondor's condor_status, not used by
condor_status; condor_q sorts its rows by it, as HTCondor's does (``grouped``).
"""

import sys

from gridtools.cli.condor import printmask
from gridtools.errors import GridError, lines


def read(path):
    """The text of print-format file ``path`` ("-": standard input); OSError when it
    cannot be read."""
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def load(path, tool):
    """The Mask of print-format file ``path`` for ``tool`` ("condor_status" or
    "condor_q": its fixed widths cut what is longer)."""
    try:
        text = read(path)
    except OSError:
        raise GridError(lines(f"Can't open select file: {path}", f"Error: invalid select file {path}"), 1) from None
    mask = printmask.parse(text, truncate=tool == "condor_q", tool=tool)
    if mask.aggregate is not None and tool != "condor_q":
        raise GridError(lines("print-format aggregation not supported", f"Error: invalid select file {path}"), 1)
    for line in mask.messages:
        sys.stderr.write(line + "\n")
    if mask.where is not None:
        _check_where(mask, path)
    return mask


def _check_where(mask, path):
    from gridtools.classad import parse
    try:
        parse(mask.where, old=True)
    except Exception:  # noqa: BLE001 - any parse error of the file's WHERE
        raise GridError(lines(f"WHERE expression is not valid: {mask.where}",
                              f"Error: invalid select file {path}"), 1) from None


def where_expr(mask):
    """The WHERE expression of a mask (None without one)."""
    if mask.where is None:
        return None
    from gridtools.classad import parse
    return parse(mask.where, old=True)


def status_table(mask, ads, totals_only, summary):
    """condor_status's (table, summary) of a print-format file: the heading and the rows
    (none with -total); ``summary()`` when the file asks for the standard one and an ad
    matched, after a blank line unless it is all that is printed."""
    table = ""
    if not totals_only:
        head, rows = mask.table(ads)
        table = (head or "") + "".join(rows)
    text = summary() if ads and mask.summary else ""
    return table, ("\n" + text if text and not totals_only else text)


def q_table(mask, procs, ad_of, title, totals, cut, counted=None):
    """condor_q's text of a print-format file: ``title`` unless NOTITLE, the heading
    unless NOHEADER and the rows (``cut`` to the display), then ``totals()`` after a
    blank line with SUMMARY STANDARD; with a custom summary (a bare SUMMARY and its
    columns), as HTCondor's condor_q prints it, the summary's heading line right after
    the rows, then a blank line and its row of the summary ad (``summary_ad`` of
    ``counted()``), neither with separators."""
    ads = [ad_of(p) for p in procs]
    if mask.group_by:
        ads = grouped(mask, ads)
    head, rows = mask.table(ads)
    out = "" if mask.notitle else title
    out += cut((head or "") + "".join(rows))
    if mask.summary_mask is not None:
        sumy = mask.summary_mask
        shown, values = sumy.table([summary_ad(counted() if counted else [("", procs)])])
        out += (shown if sumy.columns else "") + "\n" + values[0] + "\n"
    elif mask.summary:
        out += "\n" + totals() + "\n"
    return out


def aggregate_table(mask, ads, ident, title, cut):
    """condor_q's text of a print-format file over autocluster or group ads (``SELECT
    FROM AUTOCLUSTER``, ``SELECT UNIQUE``, -autocluster, -group-by): ``title`` unless
    NOTITLE, the heading unless NOHEADER and a row per ad (``cut`` to the display).
    The summaries count the ads themselves, as condor_q counts the ads it is sent when
    its schedd sends no summary ad (which it does not with aggregates): each ad with a
    ProcId once, by its JobStatus and JobUniverse (``aggregate_counts``), whatever its
    JobCount. A custom summary shows those counts; SUMMARY STANDARD, of a file that
    does not aggregate (given with -autocluster or -group-by), their totals line after
    a blank line (``aggregate_totals``), and of one that aggregates, for which
    condor_q sets up no standard summary, two empty lines. The ads come in the order
    of their ``ident`` (AutoClusterId or Id)."""
    if mask.group_by:
        ads = grouped(mask, ads, ident)
    head, rows = mask.table(ads)
    out = "" if mask.notitle else title
    out += cut((head or "") + "".join(rows))
    if mask.summary_mask is not None:
        sumy = mask.summary_mask
        shown, values = sumy.table([summary_ad([("", aggregate_counts(ads))])])
        out += (shown if sumy.columns else "") + "\n" + values[0] + "\n"
    elif mask.summary:
        out += "\n" + (aggregate_totals(ads) if mask.aggregate is None else "") + "\n"
    return out


def aggregate_totals(ads):
    """The standard totals line condor_q makes of aggregate ads: of its summary ad of
    their counts (``aggregate_counts``), the jobs and those of each status, the
    scheduler universe's among them (``N jobs; N completed, ...``)."""
    from gridtools.cli.condor import queue as Q, qviews
    ad = summary_ad([("", aggregate_counts(ads))])

    def both(name):
        return ad.eval(name) + ad.eval("Scheduler" + name)
    counts = {Q.COMPLETED: both("Completed"), Q.REMOVED: both("Removed"), Q.IDLE: both("Idle"),
              Q.RUNNING: both("Running"), Q.HELD: both("Held"), Q.SUSPENDED: ad.eval("Suspended")}
    return qviews.tally_text(both("Jobs"), counts)


def unique_attrs(mask):
    """What ``SELECT UNIQUE`` groups the jobs by, sorted ignoring case: the query's
    projection as HTCondor's condor_q makes it from the file. That is, for each column,
    the other attributes its PRINTAS function looks at (``printas.Function.attrs``)
    and the attributes its expression refers to, whatever their scope (``TARGET.X``
    adds X); the attributes of the GROUP BY keys; and, of a file that does not
    aggregate (given with -group-by), JobStatus and JobUniverse when it asks for a
    summary (condor_q adds its ClusterId and ProcId itself)."""
    from gridtools.classad import parse
    from gridtools.cli.condor.qautocluster import _lower_sorted, _names
    found = []
    for text, fn in [(col.expr, col.fn) for col in mask.columns] + [(text, None) for text, _d in mask.group_by]:
        found += list(getattr(fn, "attrs", ()))
        try:
            expr = parse(text, old=True)
        except Exception:  # noqa: BLE001 - an expression that does not parse refers to nothing
            continue
        found += [name for _scope, name in _names(expr)]
    if mask.aggregate is None and mask.summary:
        found += ["JobStatus", "JobUniverse"]
    return _lower_sorted(found)


class _Counted:
    """An ad as ``summary_ad`` counts it: its status and universe."""

    __slots__ = ("status", "universe")

    def __init__(self, status, universe):
        self.status, self.universe = status, universe


def aggregate_counts(ads):
    """What condor_q counts of autocluster or group ads (or a file's ads): each one
    that has a ProcId, as a job of its JobStatus (none counted without a number) and
    its JobUniverse (vanilla without one), as HTCondor's condor_q counts each ad it
    receives (a real number cut to an integer, a boolean 0 or 1)."""
    found = []
    for ad in ads:
        if ad.lookup("ProcId") is not None:
            found.append(_Counted(_number(ad.eval("JobStatus"), 0), _number(ad.eval("JobUniverse"), 5)))
    return found


def _number(value, default):
    if type(value) in (int, bool):
        return int(value)
    if type(value) is float and value == value and abs(value) != float("inf"):
        return int(value)
    return default


def summary_ad(counted):
    """HTCondor's summary ad of condor_q: for each (prefix, procs) of ``counted`` (the
    query's without one, the caller's ``My``, everybody's ``Allusers``), the jobs
    (``Jobs``, ``Idle``, ``Running``, ``Held``, ``Removed``, ``Completed``,
    ``Suspended``) and the scheduler universe's (``SchedulerJobs``, ``SchedulerIdle``
    ...) by their status. A (name, text) pair sets attribute ``name`` (MyName)."""
    from gridtools.classad import ClassAd
    from gridtools.cli.condor import queue as Q
    names = {Q.IDLE: "Idle", Q.RUNNING: "Running", Q.TRANSFERRING: "Running", Q.HELD: "Held",
             Q.REMOVED: "Removed", Q.COMPLETED: "Completed", Q.SUSPENDED: "Suspended"}
    ad = ClassAd({"MyType": "Summary"})
    for prefix, procs in counted:
        if isinstance(procs, str):          # (an attribute's value: MyName)
            ad[prefix] = procs
            continue
        counts = dict.fromkeys(("Idle", "Running", "Held", "Removed", "Completed", "Suspended"), 0)
        sched = dict.fromkeys(("Idle", "Running", "Held", "Removed", "Completed"), 0)
        for p in procs:
            name = names.get(p.status)
            table = sched if p.universe == 7 else counts
            if name in table:
                table[name] += 1
        ad[prefix + "Jobs"] = sum(counts.values())
        for name, n in counts.items():
            ad[prefix + name] = n
        ad[prefix + "SchedulerJobs"] = sum(sched.values())
        for name, n in sched.items():
            ad[prefix + "Scheduler" + name] = n
    return ad


def grouped(mask, ads, ident=None):
    """The job ads in the order of condor_q's GROUP BY: by the text of the values of
    the GROUP BY expressions (strings in their quotes, each followed by a newline),
    then by the job id (of autocluster or group ads: their ``ident``), compared as
    HTCondor's condor_q compares its sort keys (as text; ASCENDING and DESCENDING, as
    in HTCondor, change nothing)."""
    from gridtools.classad import parse
    from gridtools.classad.values import unparse_value
    exprs = []
    for text, _descending in mask.group_by:
        try:
            exprs.append(parse(text, old=True))
        except Exception:  # noqa: BLE001 - an expression HTCondor could not evaluate: no key
            continue

    def key(ad):
        parts = [unparse_value(e.eval(ad), old=True) + "\n" for e in exprs]
        if ident is not None:
            number = ad.eval(ident)
            return "".join(parts) + "%016X" % ((number if type(number) is int else 0) & 0xFFFFFFFFFFFFFFFF)
        cluster, proc = ad.eval("ClusterId"), ad.eval("ProcId")
        cluster = cluster if type(cluster) is int else 0
        proc = proc if type(proc) is int else -1
        return "".join(parts) + "%016X" % (((cluster & 0xFFFFFFFF) << 32) | (proc & 0xFFFFFFFF))
    return sorted(ads, key=key)


def counted(chosen, everyone, user, mine=True):
    """The procs condor_q's summary ad counts: the query's, the caller's (only for a
    query of the caller's own jobs, ``mine``: then with MyName, the caller's name),
    everybody's."""
    made = [("", chosen)]
    if mine:
        made += [("My", [p for p in everyone if p.owner == user]), ("MyName", user)]
    return made + [("Allusers", everyone)]


def q_totals(chosen, everyone, user, mine=True):
    """condor_q's totals line of the chosen procs (``qviews.summary``); the caller's
    line only for a query of their own jobs (``mine``)."""
    from gridtools.cli.condor import qviews
    if not mine:
        return qviews.summary(chosen, None, everyone, user)
    own = [p for p in everyone if p.owner == user]
    return qviews.summary(chosen, own if len(own) != len(everyone) else everyone, everyone, user)
