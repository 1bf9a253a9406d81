"""condor_q -factory: the clusters materialized late (``daemon.factory``), one ad each,
as HTCondor's condor_q lists its schedd's job factories.

A factory's ad is its cluster's: the ad of its first proc in the queue without the
proc's own attributes (ProcId, JobStatus, GlobalJobId), with what the cluster
counts: JobsPresent (its procs in the queue), JobsIdle, JobsRunning (suspended ones
too), JobsHeld, ClusterSize (the procs present), JobMaterializeNextProcId (the
procs made so far: the next one's id), JobMaterializePaused (0 while procs are
still to be made, 2 once all were) and JobMaterializeDigestFile (what the cluster's
procs are made from: here the job's description in the spool). A cluster with no
proc in the queue at the moment is not shown.

As HTCondor's ``-factory:OPTS`` (each a prefix of a word, split by commas):
``clusters_only`` alone shows the ad of every cluster with procs in the queue, a
factory or not (one that is not has no JobMaterialize* attributes);
``late_materialize`` alone shows the factories' ads and the ads of their procs
(which show their factory's JobMaterialize* attributes, as HTCondor's proc ads
chained to their cluster's do, but not its counts); both, as ``-factory``, the
factories' ads. Any other word is refused ("Error: unknown option WORD for
-factory", exit 1).

The table is HTCondor's (ID, OWNER, SUBMITTED, LIMIT, PRESNT, RUN, IDLE, HOLD,
NEXTID, MODE, DIGEST; MODE ``Norm`` or ``Done``), without totals; ``-af``,
``-format``, ``-l``, ``-json`` and ``-xml`` show the ads. Ids and users select
clusters as for the procs; ``-constraint`` is evaluated in the factories' ads.
"""

from gridtools.cli.condor import queue as Q
from gridtools.cli.condor.qviews import format_date
from gridtools.errors import UsageError

#: the attributes of a proc's ad that a cluster's ad has not
PROC_ONLY = ("ProcId", "JobStatus", "GlobalJobId")
#: JobMaterializePaused: procs still to be made, all made (HTCondor's factory modes)
RUNNING, DONE = 0, 2
#: the words of the MODE column, by JobMaterializePaused (HTCondor's JOB_FACTORY_MODE)
MODES = {-1: "Errs", 0: "Norm", 1: "Held", 2: "Done", 3: "Gone"}
#: -factory:OPTS: the ads of all clusters, of the factories and their procs (both: the
#: factories' ads)
CLUSTERS, LATE = 1, 2
#: the attributes a factory's procs show of it
FACTORY_ATTRS = ("JobMaterializeNextProcId", "JobMaterializePaused", "JobMaterializeDigestFile")


def kinds(arg):
    """The bits of ``-factory[:OPTS]`` (CLUSTERS | LATE without options)."""
    found = 0
    opts = arg.partition(":")[2]
    for word in (w.strip() for w in opts.split(",") if w.strip()):
        if "clusters_only".startswith(word):
            found |= CLUSTERS
        elif "late_materialize".startswith(word):
            found |= LATE
        else:
            raise UsageError(f"Error: unknown option {word} for -factory", 1)
    return found or CLUSTERS | LATE


def factory_ads(snap, procs, source, kind=CLUSTERS | LATE):
    """(cluster, ad) of each cluster with procs in ``procs`` that ``kind`` (the bits of
    ``kinds``) asks for: its cluster ad, and with LATE alone its procs' ads after it."""
    from gridtools import cell
    by_cluster = {}
    for p in procs:
        by_cluster.setdefault(p.cluster, []).append(p)
    found = []
    jobs = snap.get("jobs") or {}
    for cluster in sorted(by_cluster):
        made = ((jobs.get(cluster) or {}).get("condor") or {}).get("materialized")
        present = [p for p in by_cluster[cluster] if p.status not in (Q.COMPLETED, Q.REMOVED)]
        if not present or (made is None and kind & LATE):
            continue
        ad = source.ad(present[0]).copy()
        for name in PROC_ONLY:
            if name in ad:
                del ad[name]
        total = ad.eval("TotalSubmitProcs")
        ad["JobsPresent"] = ad["ClusterSize"] = len(present)
        ad["JobsIdle"] = sum(p.status == Q.IDLE for p in present)
        ad["JobsRunning"] = sum(p.status in (Q.RUNNING, Q.TRANSFERRING, Q.SUSPENDED) for p in present)
        ad["JobsHeld"] = sum(p.status == Q.HELD for p in present)
        if made is not None:
            ad["JobMaterializeNextProcId"] = int(made)
            ad["JobMaterializePaused"] = DONE if type(total) is int and made >= total else RUNNING
            ad["JobMaterializeDigestFile"] = f"{cell.spool()}/jobs/{cluster}/job.yaml"
        found.append((cluster, ad))
        if kind == LATE:                # (and the procs, which show what they chain to)
            for p in present:
                proc = source.ad(p).copy()
                for name in FACTORY_ATTRS:
                    proc[name] = ad[name]
                found.append((cluster, proc))
    return found


def select(opts, found, user):
    """The factories the command line asks for: the caller's (or everyone's, or those
    named), then those whose ads meet the constraints."""
    sel = opts.selection
    chosen = []
    for cluster, ad in found:
        owner = ad.eval("Owner")
        if sel.named:
            if not (cluster in sel.clusters or any(c == cluster for c, _p in sel.ids) or owner in sel.users):
                continue
        elif not (sel.allusers or user == "root" or owner == user):
            continue
        chosen.append(ad)
    if sel.constraints:
        exprs = Q.compile_constraints(sel.constraints)
        chosen = [ad for ad in chosen if Q.matches_all(ad, exprs)]
    return chosen


def _number(ad, name):
    value = ad.eval(name)
    return f"{int(value):6d}" if type(value) in (int, float) and type(value) is not bool else " " * 6


def table(ads):
    """HTCondor's -factory table of the ads."""
    modes = [MODES.get(ad.eval("JobMaterializePaused"), "Unk") if "JobMaterializePaused" in ad else "_"
             for ad in ads]
    width = max([4] + [len(m) for m in modes])
    lines = [f" ID  {'':3} {'OWNER':<14} {'  SUBMITTED':>11} {' LIMIT':<6} {'PRESNT':<6} {'  RUN ':<6} "
             f"{'  IDLE':<6} {'  HOLD':<6} {'NEXTID':<6} {'MODE':<{width}} DIGEST"]
    for ad, mode in zip(ads, modes):
        owner = ad.eval("Owner")
        qdate = ad.eval("QDate")
        proc = ad.eval("ProcId")
        digest = ad.eval("JobMaterializeDigestFile")
        lines.append(f"{int(ad.eval('ClusterId')):4d}.{proc if type(proc) is int else '':<3} "
                     f"{owner if isinstance(owner, str) else '??':<14} "
                     f"{format_date(qdate) if type(qdate) is int else '':>11} {_number(ad, 'JobMaterializeLimit')} "
                     f"{_number(ad, 'JobsPresent')} {_number(ad, 'JobsRunning')} {_number(ad, 'JobsIdle')} "
                     f"{_number(ad, 'JobsHeld')} {_number(ad, 'JobMaterializeNextProcId')} {mode:<{width}} "
                     f"{digest if isinstance(digest, str) else ''}".rstrip())
    return "\n".join(lines) + "\n"
