"""condor_q's tables, in HTCondor's layouts, from ``queue.Proc`` records.

Every table starts with two empty lines and the title ``-- Schedd: NAME :
<ADDRESS> @ DATE``, then its heading; columns are separated by one blank.
The batch view (the default) has one row per batch: the procs of one
cluster, or of one owner's clusters with the same ``JobBatchName``; DONE
counts procs that left the queue, RUN running ones, IDLE idle and suspended
ones, HOLD held ones (the column only when some are held), TOTAL the procs
submitted; a zero is shown as ``_``. ``-nobatch`` has a row per proc (ID,
OWNER, SUBMITTED, RUN_TIME, ST, PRI, SIZE, CMD), ``-run`` running procs and
their hosts, ``-hold`` held procs with their hold reasons, ``-dag`` DAG node
jobs under their DAGMan job. The summary below counts the procs of the
query, the caller's and everybody's by state.
"""

import time

from gridtools import ospaths
from gridtools.cli.condor import queue as Q


def format_date(when):
    """HTCondor's ``M/D HH:MM`` (month right-aligned, day left-aligned)."""
    if when < 0:
        return "    ???    "
    minute = int(when) // 60
    text = _MINUTES.get(minute)
    if text is None:
        t = time.localtime(minute * 60)
        text = _MINUTES[minute] = f"{t.tm_mon:2d}/{t.tm_mday:<2d} {t.tm_hour:02d}:{t.tm_min:02d}"
    return text


#: minute -> its text, and command -> its base name, as worked out before (a query of
#: thousands of procs shows few distinct ones)
_MINUTES, _BASES = {}, {}


def forget():
    """Drop the texts worked out before when they are many (a daemon that makes tables
    for days would keep every minute it showed)."""
    for known in (_MINUTES, _BASES):
        if len(known) > 4096:
            known.clear()


def format_time(seconds):
    """Elapsed time as ``DDD+HH:MM:SS`` (days right-aligned in three places)."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    return f"{days:3d}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def title(schedd, now):
    stamp = time.strftime("%m/%d/%y %H:%M:%S", time.localtime(now))
    return f"\n\n-- Schedd: {schedd} : <127.0.0.1:9618?... @ {stamp}\n"


def run_time(proc, now):
    """RUN_TIME: the seconds of the proc's earlier runs (RemoteWallClockTime) and of the
    one it is in."""
    current = now - proc.start if proc.start and proc.status in (Q.RUNNING, Q.SUSPENDED, Q.HELD) else 0
    return proc.wall + current


def current_run(proc, now):
    """RUN_TIME of ``-currentrun``: the seconds of the run the proc is in (none when it
    is not running or suspended)."""
    running = proc.start and proc.status in (Q.RUNNING, Q.TRANSFERRING, Q.SUSPENDED)
    return now - proc.start if running else 0


class Clock:
    """The time column of the per-proc tables: its heading and the seconds of a proc
    (RUN_TIME by default; ``-currentrun`` the current run only; ``-cputime``
    CPU_TIME, the user CPU seconds of the proc's ad, ``RemoteUserCpu``)."""

    def __init__(self, head="RUN_TIME", seconds=None):
        self.head, self.seconds = head, seconds or run_time


def base_name(cmd):
    text = _BASES.get(cmd)
    if text is None:
        text = _BASES[cmd] = ospaths.basename(cmd) or cmd
    return text


def _id_cells(proc):
    return id_cells(proc.cluster, proc.proc)


def id_cells(cluster, proc):
    """The ID column of the per-proc tables: ``cluster.proc``, the cluster right-aligned in
    four places, the proc left-aligned in three."""
    return f"{cluster:4d}.".ljust(5) + f"{proc:<3d}"


def command_text(proc, user):
    """The CMD column: the command's base name and its arguments (another user's
    arguments are private: see ``spool.status``); a DAGMan job's command is
    ``condor_dagman`` (the published ``cmd``: ``spool.rows``)."""
    text, args = base_name(proc.cmd), proc.args
    if args and (user in (proc.owner, "root")):
        text += " " + " ".join(args)
    return text


# ---------------------------------------------------------------- per proc

_RUN_TIME = Clock()


def nobatch_layout(prio_width, clock_head="RUN_TIME", dag=False):
    """(heading, format of a row) of the per-proc table, its PRI column ``prio_width``
    wide: a row's fields are the id cells (``id_cells``), owner, submission date, time
    column, status letter, priority, size (``size_text``) and command."""
    owner_head, width = ("OWNER/NODENAME", 17) if dag else ("OWNER", 14)
    head = (f" ID  {'':3} {owner_head:<{width}} {'  SUBMITTED':>11} {clock_head:>12} ST "
            f"{'PRI':<{prio_width}} SIZE CMD")
    return head, f"{{}} {{:<{width}}} {{:>11}} {{:>12}} {{:<2}} {{:<{prio_width}}} {{:>4}} {{}}".format


def size_text(size, image):
    """condor_q's SIZE of a proc, in MiB with one decimal, as HTCondor's MEMORY_USAGE shows
    it: its MemoryUsage when its run's starter reported one (``size``: the figures its
    task's bookkeeping holds, ``daemon.condorjob.note_size``), else its ImageSize
    (``image``, KiB)."""
    used = size.get("MemoryUsage") if size else None
    return f"{float(int(used)) if used is not None else image / 1024.0:.1f}"


def nobatch(procs, user, now, dag_names=None, clock=None):
    """One row per proc; ``dag_names``: proc id -> node label (``-dag``); ``clock``: the
    time column (``Clock``), RUN_TIME by default."""
    clock = clock or _RUN_TIME
    width = 17 if dag_names is not None else 14
    head, row = nobatch_layout(max([3] + [len(str(p.prio)) for p in procs]), clock.head, dag_names is not None)
    lines = [head]
    dates, idle, letters, seconds = {}, format_time(0), Q.STATUS_LETTER, clock.seconds
    for p in procs:
        who = (dag_names or {}).get(p.id) or p.owner
        date = dates.get(p.qdate)
        if date is None:
            date = dates[p.qdate] = format_date(p.qdate)
        spent = seconds(p, now)
        lines.append(row(_id_cells(p), who[:width] if dag_names is not None else who, date,
                         format_time(spent) if spent else idle, letters.get(p.status, "?"), str(p.prio),
                         size_text(p.size, p.image), command_text(p, user)))
    return "\n".join(lines) + "\n"


def running(procs, user, now, clock=None):
    clock = clock or _RUN_TIME
    lines = [f" ID  {'':3} {'OWNER':<14} {'  SUBMITTED':>11} {clock.head:>12} HOST(S)"]
    for p in procs:
        lines.append(f"{_id_cells(p)} {p.owner:<14} {format_date(p.qdate):>11} "
                     f"{format_time(clock.seconds(p, now)):>12} {p.host}")
    return "\n".join(lines) + "\n"


def held(procs):
    lines = [f" ID  {'':3} {'OWNER':<14} {'HELD_SINCE':<11} CODE/SUB HOLD_REASON"]    # (headings: left)
    for p in procs:
        hold = p.hold or ["", 0, 0]
        since = hold[3] if len(hold) > 3 else p.qdate
        lines.append(f"{_id_cells(p)} {p.owner:<14} {format_date(since):>11} "
                     f"{int(hold[1]):4d}/{int(hold[2]):<3d} {hold[0]}")
    return "\n".join(lines) + "\n"


IO_WHEN = ("TransferQueued", "TransferringOutput", "TransferringInput")


def moving_files(ad):
    """True for a proc ``-io`` lists: one whose files are being moved or wait to be."""
    return any(ad.eval(name) is True for name in IO_WHEN)


def _bytes(value):
    """HTCondor's readable bytes: ``%.1f`` of a unit from B to TB (the B with a blank)."""
    if type(value) not in (int, float):
        return "??"
    for unit in ("B ", "KB", "MB", "GB"):
        if value <= 1024.0:
            return f"{value:.1f} {unit}"
        value /= 1024.0
    return f"{value:.1f} TB"


def io(procs, ad_of):
    """``-io``: the runs and the bytes moved of each proc (``moving_files``)."""
    lines = [f" ID  {'':3} {'OWNER':<14} RUNS ST {' INPUT'} {' OUTPUT'} {' RATE':<10} MISC"]
    for p in procs:
        ad = ad_of(p)
        runs, got, sent = ad.eval("NumJobStarts"), ad.eval("BytesRecvd"), ad.eval("BytesSent")
        both = got + sent if type(got) in (int, float) and type(sent) in (int, float) else None
        flags = [w for w, name in zip(("in", "out", "queued"), IO_WHEN[::-1]) if ad.eval(name) is True]
        misc = f" transfer={','.join(flags)}" if flags else ""
        lines.append(f"{_id_cells(p)} {p.owner:<14} "
                     f"{runs if type(runs) is int else '?':>4} {Q.STATUS_LETTER.get(p.status, '?'):<2} "
                     f"{_bytes(got)} {_bytes(sent)} {_bytes(both):>10} {misc}")
    return "\n".join(lines) + "\n"


def grid(procs, ad_of, ec2=False):
    """``-grid`` (``ec2``: ``-grid:ec2``): grid universe procs with the state, resource
    and id their grid gave (``GridJobStatus``, ``GridResource``, ``GridJobId``)."""
    def text(ad, name):
        value = ad.eval(name)
        return value if isinstance(value, str) else "??"
    if ec2:
        tail_head = "INSTANCE ID CMD"

        def tail(p, ad):
            return f"{text(ad, 'GridJobId')} {base_name(p.cmd)}"
    else:
        tail_head = f"{'GRID->MANAGER    HOST':<27} GRID_JOB_ID"

        def tail(_p, ad):
            return f"{text(ad, 'GridResource')[:27]:<27} {text(ad, 'GridJobId')}"
    lines = [f" ID  {'':3} {'OWNER':<14} {'STATUS':<10} {tail_head}"]
    for p in procs:
        ad = ad_of(p)
        lines.append(f"{_id_cells(p)} {p.owner:<14} {text(ad, 'GridJobStatus'):<10} {tail(p, ad)}")
    return "\n".join(lines) + "\n"


def hold_codes(procs):
    """``-hold-codes``: a row for each hold code and subcode of the held ``procs``, with
    how many are held so and the first of them (its owner, id, date and reason)."""
    lines = [f"{'OWNER':<14} CODE/SUB {'   COUNT '} OLDEST_JOB_ID {'HELD_SINCE':<11} HOLD_REASON"]
    groups = {}
    for p in procs:
        hold = p.hold or ["", 0, 0]
        groups.setdefault((int(hold[1]), int(hold[2])), []).append(p)
    for (code, sub), held in sorted(groups.items()):
        first = min(held, key=lambda p: (p.cluster, p.proc))
        hold = first.hold or ["", 0, 0]
        since = hold[3] if len(hold) > 3 else first.qdate
        lines.append(f"{first.owner:<14} {code:4d}/{sub:<3d} {len(held):9d} {first.id} "
                     f"{format_date(since):>11} {hold[0]}")
    return "\n".join(lines) + "\n"


#: HTCondor's -idle layout (condor_q's jobIdle print format): the universe by its name
#: (JOB_UNIVERSE), the shadow's starts, and blank cells for what a job does not define
IDLE_FORMAT = """SELECT
   ClusterId     AS ' ID'  NOSUFFIX WIDTH 5 PRINTF '%4d.'
   ProcId        AS ' '    NOPREFIX WIDTH 3 PRINTF '%-3d'
   Owner         AS  OWNER          WIDTH -14 PRINTAS OWNER OR ??
   JobUniverse   AS 'UNIVERSE '  PRINTAS JOB_UNIVERSE
   RequestCpus   AS CPUS         PRINTF '%4d'
   RequestMemory AS MEMORY       PRINTF '%6d'
   NumShadowStarts?:0 AS STARTS  PRINTF '%6d'
   LastRemoteHost AS LAST_HOST WIDTH 0
SUMMARY NONE
"""


def idle(procs, ad_of):
    """``-idle``: the procs in HTCondor's -idle layout (``IDLE_FORMAT``, printed as a
    print-format file is)."""
    from gridtools.cli.condor import printmask
    mask = printmask.parse(IDLE_FORMAT, truncate=True, tool="condor_q")
    head, rows = mask.table([ad_of(p) for p in procs])
    return head + "".join(rows)


# ---------------------------------------------------------------- batches

class Batch:
    """The procs of one row of the batch view."""

    def __init__(self, owner, name):
        self.owner, self.name = owner, name
        self.procs = []
        self.totals = {}            # cluster -> procs it was submitted with
        self.unmade = {}            # cluster -> its procs not in the queue yet (daemon.factory)
        self.manager = None         # the DAG manager's proc, when the batch is a DAG's
        self.dag = None             # its [total, done, failed] nodes

    def counts(self):
        """(done, running, idle, held, total) procs (of a DAG: its node jobs, and the
        nodes done and in all, as its manager counts them)."""
        run = idle = hold = 0
        for p in self.procs:
            status = p.status
            if status in (Q.RUNNING, Q.TRANSFERRING):
                run += 1
            elif status in (Q.IDLE, Q.SUSPENDED):
                idle += 1
            elif status == Q.HELD:
                hold += 1
        if self.dag is not None:
            return self.dag[1], run, idle, hold, self.dag[0]
        total = sum(self.totals.values())
        return max(0, total - len(self.procs) - sum(self.unmade.values())), run, idle, hold, total

    def qdate(self):
        return (self.manager or self.procs[0]).qdate

    def ids(self):
        if not self.procs:
            return self.manager.id
        first, last = self.procs[0], self.procs[-1]
        if first is last:
            return first.id
        if first.cluster == last.cluster:
            return f"{first.id}-{last.proc}"
        return f"{first.id} ... {last.id}"


def _dag_of(proc):
    """A DAG manager's node counts (None for any other proc)."""
    return proc._source[2].get("dag") if proc._source is not None and proc._source[2] else None


def batches(procs, totals, fold_dags=False, unmade=None):
    """The batches of ``procs`` (sorted by id) in the order of their first proc;
    ``totals``: cluster -> procs submitted; ``unmade``: cluster -> its procs not in the
    queue yet (a cluster materialized late), which are not done. As HTCondor's condor_q links them: the
    clusters of one owner's batch name are one row, the first to use the name; a DAG
    (its manager and node jobs) is a row of its own, which later clusters of its name
    join, but not another DAG of the name, unless ``fold_dags`` (-batch:2, HTCondor's
    experimental form): then the DAGs of a name are one row, their nodes added up."""
    found, dags, named = {}, {}, {}
    for p in procs:
        cinfo = p._source[2] if p._source is not None else None
        if cinfo and cinfo.get("dagman") in dags:           # a node job: in its DAG's row
            key = dags[cinfo["dagman"]]
        elif p.batch:
            name = (p.owner, p.batch)
            if cinfo and cinfo.get("dag") is not None:      # a DAG's manager
                if fold_dags:
                    key = named.setdefault(name, name)
                else:
                    key = ("dag", p.cluster)
                    named.setdefault(name, key)
                dags[p.cluster] = key
            else:
                key = named.setdefault(name, name)
        else:
            key = ("", p.cluster)
        batch = found.get(key)
        if batch is None:
            batch = found[key] = Batch(p.owner, p.batch or f"ID: {p.cluster}")
        batch.procs.append(p)
        batch.totals[p.cluster] = totals.get(p.cluster, 1)
        if unmade:
            batch.unmade[p.cluster] = unmade.get(p.cluster, 0)
    for batch in found.values():        # a DAG's manager comes first, submitted before its nodes
        managers = [p for p in batch.procs if _dag_of(p) is not None]
        if managers:
            batch.manager = managers[0]
            batch.dag = _dag_of(managers[0])
            for other in managers[1:]:      # (-batch:2: the other DAGs of the name)
                batch.dag = [a + b for a, b in zip(batch.dag, _dag_of(other))]
            batch.procs = [p for p in batch.procs if _dag_of(p) is None]
    return list(found.values())


def batch_view(procs, totals, zero="_", fold_dags=False, unmade=None):
    return batch_table([(b.owner, b.name, b.qdate(), b.counts(), b.ids())
                        for b in batches(procs, totals, fold_dags, unmade)], zero)


def batch_table(rows, zero="_"):
    """The batch view of ``rows``: (owner, batch name, submission time, (done, running,
    idle, held, total) counts, job ids) of each batch; a count of 0 shows as ``zero``
    (-batch:MARK)."""
    longest = max([len(r[0]) for r in rows] or [0])
    owner_w = longest if longest >= len("OWNER") else 8
    name_w = max([10] + [len(r[1]) for r in rows])
    columns = list(zip(*[r[3] for r in rows])) or [()] * 5     # (the counts are whole numbers)
    show_hold = any(columns[3]) or not rows
    widths = [max(6, len(str(max(column, default=0)))) for column in columns]
    heads = ["  DONE", "  RUN ", "  IDLE", "  HOLD", " TOTAL"]
    cols = [i for i in range(5) if i != 3 or show_hold]
    head = f"{'OWNER':<{owner_w}} {'BATCH_NAME':<{name_w}} {'   SUBMITTED':>12} " + \
        " ".join(heads[i].rjust(widths[i]) for i in cols) + " JOB_IDS"
    lines = [head]
    start = f"{{:<{owner_w}}} {{:<{name_w}}} ".format
    middle = ("{:>12} " + " ".join(f"{{:>{widths[i]}}}" for i in cols) + " ").format
    made = {}               # (submission time, counts) -> the middle of the line: rows share them
    for owner, name, qdate, count, ids in rows:
        mid = made.get((qdate, count))
        if mid is None:
            mid = made[qdate, count] = middle(format_date(qdate), *[count[i] or zero for i in cols])
        lines.append(start(owner, name) + mid + ids)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- summary

_TALLIED = (Q.COMPLETED, Q.REMOVED, Q.IDLE, Q.RUNNING, Q.HELD, Q.SUSPENDED)


def _counts(procs):
    counts = dict.fromkeys(_TALLIED, 0)
    for p in procs:
        counts[p.status] = counts.get(p.status, 0) + 1
    return counts


def _tally(procs, counts=None):
    counts = _counts(procs) if counts is None else counts
    return tally_text(len(procs), counts)


def tally_text(total, counts):
    """A line of the totals: ``total`` procs, ``counts`` of them by JobStatus."""
    running = counts.get(Q.RUNNING, 0) + counts.get(Q.TRANSFERRING, 0)
    counts = dict.fromkeys(_TALLIED, 0) | counts
    return (f"{total} jobs; {counts[Q.COMPLETED]} completed, {counts[Q.REMOVED]} removed, "
            f"{counts[Q.IDLE]} idle, {running} running, {counts[Q.HELD]} held, "
            f"{counts[Q.SUSPENDED]} suspended")


#: JobUniverse of the scheduler universe (a DAG's manager): the schedd counts its jobs
#: apart (SchedulerJobs...), in counts the standard summary does not show
SCHEDULER_UNIVERSE = 7


def _universe(proc):
    """The JobUniverse of a proc; one made from the published status is read from its
    job's facts, without working out the rest of its row (``queue.Proc``)."""
    source = getattr(proc, "_source", None)
    if source is not None:
        return int(source[2].get("universe") or 5)
    return proc.universe


def counted(procs):
    """The procs of ``procs`` the standard summary counts: all but the scheduler
    universe's (``procs`` itself when none is)."""
    kept = [p for p in procs if _universe(p) != SCHEDULER_UNIVERSE]
    return procs if len(kept) == len(procs) else kept


def summary(query, mine, everyone, user):
    """The totals of the query, of the caller's procs and of everybody's (a list that
    is another's counted once), scheduler universe jobs left out. ``mine`` None: the
    query was not for the caller's own jobs, and its line is left out."""
    known = {}

    def tally(procs):
        text = known.get(id(procs))
        if text is None:
            text = known[id(procs)] = _tally(counted(procs))
        return text
    return totals_text(tally(query), None if mine is None else tally(mine), tally(everyone), user)


def totals_text(query, mine, everyone, user):
    """The totals below a table: the lines (``tally_text``) of the query's procs, the
    caller's and everybody's. The caller's line (``mine``) is shown only for a query of
    the caller's own jobs (None otherwise), as the schedd sends the caller's counts
    (MyName) only then: not for a queue super user, nor when owners, job ids or
    -allusers are given."""
    middle = "" if mine is None else f"Total for {user}: {mine} \n"
    return (f"Total for query: {query} \n"
            f"{middle}"
            f"Total for all users: {everyone}\n")
