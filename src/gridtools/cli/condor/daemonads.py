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
tables are HTCondor's own print formats of these modes, read by ``printmask``.
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


def table(mode, ads, totals_only):
    """The table condor_status prints of ``mode``'s ads (no summary: HTCondor keeps none
    for these ads)."""
    from gridtools.cli.condor import printformat, printmask
    mask = printmask.parse(COLLECTOR_FORMAT if mode == "collector" else NEGOTIATOR_FORMAT,
                           truncate=False, tool="condor_status")
    text, summary = printformat.status_table(mask, ads, totals_only, lambda: "")
    return text + summary
