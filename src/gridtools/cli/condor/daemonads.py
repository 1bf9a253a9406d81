"""condor_status -collector and -negotiator: the ads of the pool's collector and
negotiator, which are the cell's daemon, and the tables HTCondor prints of them.

The collector's ad counts the jobs (running and idle, as the schedd's ad
counts them) and the slot ads it holds (``HostsTotal``, ``HostsClaimed``,
``HostsUnclaimed``, ``HostsOwner``; ``StartdAds``, ``SubmitterAds``); its
name is HTCondor's default, ``My Pool - <host>``. The negotiator's ad tells
of the last pass that decided (the negotiator's cycle, or Grid Engine's pass
when that order decides): when it ended and how long it took
(``LastNegotiationCycleEnd0``, ``...Duration0``), the slots it could give,
the submitters and jobs it looked at, its matches and rejections. The
tables are HTCondor's own print formats of these modes, read by ``printmask``,
with the column widths and the blank line after the heading of its built-in
views.
"""

from gridtools import cell
from gridtools.classad import ClassAd
from gridtools.formats.condor import VERSION

#: HTCondor's print format of condor_status -collector
COLLECTOR_FORMAT = """SELECT FROM Collector
Name WIDTH AUTO
Machine WIDTH AUTO
RunningJobs PRINTF %11d
IdleJobs AS '  IdleJobs' PRINTF %10d
HostsTotal PRINTF %10d
SUMMARY STANDARD
"""
#: HTCondor's print format of condor_status -negotiator
NEGOTIATOR_FORMAT = """SELECT
Name           AS Name         WIDTH AUTO
LastNegotiationCycleEnd0  AS LastCycleEnd WIDTH 12 PRINTAS DATE
LastNegotiationCycleDuration0 AS (Sec) PRINTF %5d
LastNegotiationCycleCandidateSlots0 AS '  Slots' PRINTF %7d
LastNegotiationCycleActiveSubmitterCount0 AS Submitrs PRINTF %8d
LastNegotiationCycleNumSchedulers0 AS Schedds PRINTF %7d
LastNegotiationCycleNumIdleJobs0 AS '   Jobs' PRINTF %7d
LastNegotiationCycleMatches0 AS Matches PRINTF %7d
LastNegotiationCycleRejections0 AS Rejections PRINTF %10d
SUMMARY NONE
"""


def collector_ads(snap, now):
    """The collector's ad (one: the cell's daemon)."""
    from gridtools.cli.condor import submitters
    host = cell.hostname()
    counts = submitters.job_counts(snap)
    slots = [values for values, _exprs in snap.get("slots") or []]
    states = [values.get("State") for values in slots]
    return [ClassAd({"MyType": "Collector", "Name": f"My Pool - {host}", "Machine": host,
                     "CondorVersion": VERSION, "CurrentTime": int(now),
                     "RunningJobs": sum(c["running"] for c in counts.values()),
                     "IdleJobs": sum(c["idle"] for c in counts.values()),
                     "HostsTotal": len(slots), "HostsClaimed": states.count("Claimed"),
                     "HostsUnclaimed": states.count("Unclaimed"), "HostsOwner": states.count("Owner"),
                     "StartdAds": len(slots), "SubmitterAds": len(counts)})]


def negotiator_ads(snap, now):
    """The negotiator's ad (one: the cell's daemon), with its last cycle's figures."""
    host = cell.hostname()
    cycle = (snap.get("negotiator") or {}).get("cycle") or {}
    attrs = {"MyType": "Negotiator", "Name": host, "Machine": host, "CondorVersion": VERSION,
             "CurrentTime": int(now)}
    if cycle:
        attrs.update({"LastNegotiationCycleEnd0": int(cycle.get("end") or 0),
                      "LastNegotiationCycleDuration0": int(cycle.get("duration") or 0),
                      "LastNegotiationCycleCandidateSlots0": int(cycle.get("slots") or 0),
                      "LastNegotiationCycleActiveSubmitterCount0": int(cycle.get("submitters") or 0),
                      "LastNegotiationCycleNumSchedulers0": 1,
                      "LastNegotiationCycleNumIdleJobs0": int(cycle.get("jobs") or 0),
                      "LastNegotiationCycleMatches0": int(cycle.get("matches") or 0),
                      "LastNegotiationCycleRejections0": int(cycle.get("rejections") or 0)})
    return [ClassAd(attrs)]


#: the width HTCondor counts for the columns after Name of -negotiator's table when it
#: fits the Name column to a display
NEGOTIATOR_FIXED = 12 + 5 + 7 + 8 + 7 + 7 + 7 + 10


def collector_machine_width(display, wide):
    """The width of -collector's Machine column (HTCondor's ppSetCollectorNormalCols):
    34 at least on a wide display, growing to the longest name; else 18, and on a
    display (``display``: its columns less one) over 79 columns a share of the columns
    beyond those (at most 30 more)."""
    if wide:
        return 34
    width = 18
    if display > 79:
        spare = min(display - 79, 50)
        width += min(30, spare - min(20, spare * 2 // 3))
    return width


def table(mode, ads, totals_only, width=None, wide=False):
    """The table condor_status prints of ``mode``'s ads: HTCondor's built-in view of the
    mode, its heading then a blank line then the rows (no summary: HTCondor keeps none
    for these ads). ``width``: the display's columns (None: a pipe or -wide, taken as 80
    columns unless ``wide``); ``wide``: HTCondor's wide display (-wide, -wide:N over 100).
    -negotiator's Name column is 12 wide at least and grows to the longest name, fitted
    to a terminal that is not wide as the slot table's (``cropped``); -collector's
    Machine column is ``collector_machine_width`` wide, a longer name overflowing it
    (growing it on a wide display)."""
    from gridtools.cli.condor import machineviews, printmask
    if not ads or totals_only:
        return ""
    mask = printmask.parse(COLLECTOR_FORMAT if mode == "collector" else NEGOTIATOR_FORMAT,
                           truncate=False, tool="condor_status")
    column = next(col for col in mask.columns if col.expr == ("Machine" if mode == "collector" else "Name"))
    column.left = True
    if mode == "collector":
        column.width = collector_machine_width(79 if width is None else width - 1, wide)
        column.auto = wide
    else:
        column.width = 12
        if width is not None and not wide:
            longest = max(column.width, *(len(_name(ad)) for ad in ads))
            fitted = machineviews.cropped(longest, NEGOTIATOR_FIXED, width - 1)
            if fitted < longest:            # (cut to what the display leaves it)
                column.width, column.auto, column.notrunc = fitted, False, False
    head, rows = mask.table(ads)
    return head + "\n" + "".join(rows)


def _name(ad):
    value = ad.eval("Name")
    return value if isinstance(value, str) else ""
