"""condor_q -batch:0: the batch view's columns without the batch reduction.

HTCondor's -batch:N takes N as its batch mode, and 0 turns the reduction of
rows into batches off while the batch view's layout stays: each job is a row
of its own attributes, unreduced, in the order of the job ids. The columns
show what HTCondor's batch print format names, raw: OWNER (as wide as the
longest owner, OWNER at least), BATCH_NAME (JobBatchName; a scheduler
universe job's ``DAG: CLUSTER``; a DAG node's ``NODE: NAME``; else empty; 12
characters at least), SUBMITTED, then DONE the JobStatus number, RUN the
JobUniverse number, IDLE DAG_NodesQueued, HOLD DAG_NodesDone, TOTAL
DAG_NodesTotal or else TotalSubmitProcs (``_`` for a value the ad does not
have), and JOB_IDS the job's status letter. The totals follow as in the
batch view.
"""

from gridtools.cli.condor import qviews, queue as Q

SCHEDULER_UNIVERSE = 7


def _count(value):
    if type(value) in (int, float) and not isinstance(value, bool):
        return f"{int(value):6d}"
    return f"{'_':>6}"


def _batch_name(ad):
    name = ad.eval("JobBatchName")
    if isinstance(name, str):
        return name
    if ad.eval("JobUniverse") == SCHEDULER_UNIVERSE:
        return f"DAG: {ad.eval('ClusterId')}"
    node = ad.eval("DAGNodeName")
    if ad.lookup("DAGManJobId") is not None and isinstance(node, str):
        return f"NODE: {node}"
    return ""


def rows(procs, ad_of):
    """The unreduced batch view of ``procs`` (``ad_of``: a proc's job ad)."""
    owner_w = max([len("OWNER")] + [len(p.owner) for p in procs])
    lines = [f"{'OWNER':<{owner_w}} {'BATCH_NAME':<12} {'   SUBMITTED':>12}   DONE   RUN    IDLE   HOLD"
             "  TOTAL JOB_IDS"]
    for p in sorted(procs, key=lambda proc: (proc.cluster, proc.proc)):
        ad = ad_of(p)
        total = ad.eval("DAG_NodesTotal")
        if type(total) not in (int, float) or isinstance(total, bool):
            total = ad.eval("TotalSubmitProcs")
        letter = Q.STATUS_LETTER.get(p.status, "?")
        lines.append(f"{p.owner:<{owner_w}} {_batch_name(ad):<12} {qviews.format_date(p.qdate):>12} "
                     f"{_count(ad.eval('JobStatus'))} {_count(ad.eval('JobUniverse'))} "
                     f"{_count(ad.eval('DAG_NodesQueued'))} {_count(ad.eval('DAG_NodesDone'))} "
                     f"{_count(total)} {letter} ")
    return "\n".join(lines) + "\n"
