"""condor_q -userlog FILE: the jobs of a job event log instead of the queue.

The ads are those ``logads`` rebuilds from the log's events (every job the
log saw submitted, the finished ones included, as HTCondor's condor_q shows
them); the views are condor_q's own (``qviews``, ``formatting``) over them:
the selection by ids, users, ``-constraint``, ``-run``, ``-hold`` and
``-idle`` is the queue's; ``-limit``, which bounds what the schedd sends,
does not apply (HTCondor's condor_q shows every job of the log). The title names the log, ``-- Userlog: FILE @
DATE``, and the views that count jobs end with one line of the query's
totals (``N jobs; ... suspended``): a log knows no other users' jobs;
``-analyze`` matches them against the cell's slots, as the queue's. The
log is read with the caller's own rights; no daemon is asked anything. A log
that cannot be opened: ``Can't open user log: FILE``, exit 1.
"""

import time

from gridtools.cli.condor import cut, logads, qviews, queue as Q
from gridtools.errors import GridError, lines


class LogAds:
    """The ads of the log's procs, by proc id (what ``queue.AdSource`` is to the queue)."""

    def __init__(self, ads):
        self.by_id = {f"{ad.eval('ClusterId')}.{ad.eval('ProcId')}": ad for ad in ads}

    def ad(self, proc):
        return self.by_id[proc.id]


def _number(value, default=0):
    return value if type(value) in (int, float) and not isinstance(value, bool) else default


def _text(value, default=""):
    return value if isinstance(value, str) else default


def host_shown(remote):
    """What the HOST(S) column of ``-run`` shows of a ``RemoteHost``, as HTCondor's
    condor_q renders it: a sinful string (a log's execute host, such as
    ``<127.0.0.1:0?alias=node1>``) by the name of its address, ``??`` when the
    address has none; any other text as it is."""
    if not (remote.startswith("<") and remote.endswith(">")):
        return remote
    import re
    import socket
    m = re.match(r"^<(\[[^\]]*\]|[^:?>]*)(?::\d*)?(?:\?.*)?>$", remote)
    if not m or not m.group(1):
        return remote
    try:
        return socket.getnameinfo((m.group(1).strip("[]"), 0), socket.NI_NAMEREQD)[0] or "??"
    except (OSError, ValueError):
        return "??"


def proc_of(ad):
    """The ``queue.Proc`` condor_q's tables show of a rebuilt ad."""
    status = _number(ad.eval("JobStatus"), Q.IDLE)
    # RUN_TIME: the log says nothing of the current run's shadow; an idle or held job
    # shows its last run's time
    wall = _number(ad.eval("LastRemoteWallClockTime")) if status in (Q.IDLE, Q.HELD) else 0
    proc = Q.Proc(int(ad.eval("ClusterId")), int(ad.eval("ProcId")), _text(ad.eval("Owner"), "??"),
                  status, _number(ad.eval("QDate")), host=_text(ad.eval("RemoteHost")),
                  prio=int(_number(ad.eval("JobPrio"))), cmd=_text(ad.eval("Cmd")),
                  batch=_text(ad.eval("JobBatchName")) or None, wall=wall, image=int(_number(ad.eval("ImageSize"))))
    used = ad.eval("MemoryUsage")
    if type(used) is int:
        proc.size = {"MemoryUsage": used}
    if status == Q.HELD:
        proc.hold = [_text(ad.eval("HoldReason")), _number(ad.eval("HoldReasonCode")),
                     _number(ad.eval("HoldReasonSubCode")), _number(ad.eval("EnteredCurrentStatus"))]
    return proc


def read(path, user, now):
    try:
        ads = logads.read(path, user, now)
    except OSError:
        raise GridError(lines("", f"Can't open user log: {path}"), 1) from None
    return [proc_of(ad) for ad in ads], LogAds(ads)


def run(opts, select, attributes):
    """condor_q's text for the log ``opts.userlog``; ``select`` and ``attributes`` are
    condor_q's own (``q.select``, ``q._attributes``)."""
    user, now = Q.me(), time.time()
    everyone, source = read(opts.userlog, user, now)
    if opts.autocluster:            # (the log's job ads, as HTCondor's condor_q shows them)
        from gridtools.cli.condor import qautocluster
        return qautocluster.from_file(opts, [source.ad(p) for p in everyone], attributes,
                                      f"Userlog: {opts.userlog}", now)
    return show(opts, select, attributes, everyone, source, f"Userlog: {opts.userlog}", user, now)


def show(opts, select, attributes, everyone, source, label, user, now, submitted=None):
    """condor_q's views of jobs read from a file (a log, or ads: ``qjobads``) rather
    than the queue, titled ``-- LABEL @ DATE``; ``submitted``: cluster -> the procs
    it was submitted with (unknown: 0)."""
    from gridtools.cli.condor.q import _clock, dag_order, table_width
    chosen = select(opts, everyone, user, source)       # (-limit bounds the schedd's answer only)
    view = opts.view
    if view in ("long", "json", "xml", "af", "format"):
        return attributes(opts, chosen, source)
    if view == "analyze":           # against the cell's slots, as the queue's jobs are
        from gridtools.cli import status
        from gridtools.cli.condor import analyze
        snap = status.load()
        return f"\n\n-- {label}\n" + analyze.report(snap, chosen, Q.procs(snap), source, opts, now)
    head = f"\n\n-- {label} @ {time.strftime('%m/%d/%y %H:%M:%S', time.localtime(now))}\n"
    width = None if opts.aaf and opts.wide is None else table_width(opts)     # (-aaf: whole rows)
    if view == "print":             # -print-format
        from gridtools.cli.condor import printformat
        mask = opts.print_format
        if opts.aaf:
            from gridtools.cli.condor import qappend
            mask = qappend.extend(mask, opts.aaf_columns)
        return printformat.q_table(mask, chosen, source.ad, head,
                                   lambda: qviews.tally_text(len(chosen), qviews._counts(chosen)),
                                   lambda body: cut(body, width))
    totals = "\n" + qviews.tally_text(len(chosen), qviews._counts(chosen)) + "\n"
    if view == "totals":
        return head + totals
    clock = _clock(opts, source)

    def fit(table, whole=False):
        """A table with -aaf's columns, cut to the width (not ``whole``)."""
        if opts.aaf:
            from gridtools.cli.condor import qappend
            rows = [source.ad(p) for p in qappend.procs_of_rows(opts, chosen, source)]
            table = qappend.append(table, rows, opts.aaf_columns)
        return table if whole else cut(table, width)
    if view == "run":
        for proc in chosen:
            proc.host = host_shown(proc.host)
        return head + fit(qviews.running(chosen, user, now, clock))
    if view == "idle":
        return head + fit(qviews.idle(chosen, source.ad))
    if view == "grid":
        return head + fit(qviews.grid(chosen, source.ad, opts.ec2))
    if view == "hold" and opts.grouped:
        return head + fit(qviews.hold_codes(chosen), whole=True)
    if view == "hold":
        body = fit(qviews.held(chosen), whole=True)
    elif view == "io":
        body = fit(qviews.io(chosen, source.ad))
    elif view == "nobatch" and opts.dag:
        chosen_dag, names = dag_order(chosen, source)
        body = fit(qviews.nobatch(chosen_dag, user, now, names, clock))
    elif view == "nobatch":
        body = fit(qviews.nobatch(chosen, user, now, clock=clock))
    elif opts.unreduced:            # (-batch:0)
        from gridtools.cli.condor import qbatchraw
        body = fit(qbatchraw.rows(chosen, source.ad))
    else:               # the log says not how many procs a cluster was submitted with
        table = qviews.batch_view(chosen, submitted or {p.cluster: 0 for p in chosen},
                                  opts.zero, opts.fold_dags)
        body = cut(table, width)
    return head + body + totals
