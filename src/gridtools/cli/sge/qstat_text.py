"""Fixed-width text of qstat listings: job lines, headers, queue lines, banners.

Column layout as Grid Engine 8.1.9 prints it. Optional column groups appear
with -pri (nurg, npprior, ntckts, ppri), -urg (nurg, urg, rrcontr, wtcontr,
dlcontr, deadline), -ext (ntckts, project, department, usage, tickets) and
-t (master, task columns); the queue column is as wide as the longest queue
instance name (at least 30) and is left out with -f, where jobs are listed
under their queue instance.
"""

import time

from gridtools.model import perange

#: extra dashes of the job header rule per column group, as Grid Engine draws them
_RULE_EXTRA = {"group_t": 1, "ext": 79, "tasks": 53, "urg": 64, "pri": 35}
_FULL_RULE = 81
_FULL_RULE_EXT = 108
_HASHES = 76
_HASHES_EXT = 110
PENDING_BANNER = " - PENDING JOBS - PENDING JOBS - PENDING JOBS - PENDING JOBS - PENDING JOBS"
FINISHED_BANNER = " --  FINISHED JOBS  -  FINISHED JOBS  -  FINISHED JOBS  -  FINISHED JOBS  --  "
INDENT = "       "


def fmt_time(epoch):
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(epoch))


class Layout:
    """Which column groups a listing shows, derived from the options."""

    def __init__(self, opts, queue_names=()):
        self.pri, self.urg, self.ext = opts.pri, opts.urg, opts.ext
        self.tasks = opts.tasks
        self.group_t = "t" in opts.group
        self.full = opts.full
        self.show_time = (not self.ext) or self.tasks or self.urg or self.pri
        self.qlen = max([30] + [len(n) for n in queue_names])

    def header(self):
        a = ((" nurg   " if self.pri or self.urg else "") + (" npprior" if self.pri else "")
             + (" ntckts " if self.pri or self.ext else "")
             + (" urg      rrcontr  wtcontr  dlcontr " if self.urg else "") + ("  ppri" if self.pri else ""))
        b = "project          department " if self.ext else ""
        c = (("submit/start at     " if self.show_time else "")
             + (" deadline           " if self.urg else "")
             + ("cpu        mem     io      tckts ovrts otckt ftckt stckt share " if self.ext else ""))
        d = "task-ID state cpu        mem     io      stat failed " if self.tasks else ""
        master = "master" if self.group_t else "slots"
        return (f"{'job-ID':<7} prior  {a} {'name':<10} {'user':<12} {b}{'state':<5} {c}"
                f"{'queue':<{self.qlen}} {master} ja-task-ID {d}")

    def rule(self):
        width = 83 + self.qlen
        width += sum(extra for name, extra in _RULE_EXTRA.items() if getattr(self, name))
        return "-" * width

    def full_rule(self):
        return "-" * (_FULL_RULE + (_FULL_RULE_EXT if self.ext else 0) + self.qlen - 30)

    def hashes(self):
        return "#" * (_HASHES + (_HASHES_EXT if self.ext else 0))


def _opt8(value):
    return f"{value:8.3g} " if value > 99999999 else f"{value:8.0f} "


def _ext_columns(entry):
    text = None
    if entry.running and entry.master != "SLAVE":
        from gridtools.cli.sge import qstat_usage
        text = qstat_usage.ext_columns(entry.id, entry.row.get("task") or 1)
    if text is None:                    # (NA until the task's first usage report)
        blank_usage = "NA" if entry.running else ""
        text = f"{blank_usage:<10} {blank_usage:<7} {blank_usage:<7} "
    if entry.zombie:
        return text + "   NA " * 6
    override = int(entry.job.get("override_tickets") or 0)
    total, otckt, ftckt, stckt = entry.scores.get("tickets", (0.0, 0.0, 0.0, 0.0))
    return (text + f"{total:>5.0f} {override:>5} {otckt:>5.0f} {ftckt:>5.0f} {stckt:>5.0f} "
            + f"{entry.scores.get('share', 0.0):<5.2f} ")


def _numbers(entry, lay):
    s = entry.scores
    show = entry.print_id
    parts = [f"{s['prio']:7.5f} " if show else " " * 8]
    if lay.pri or lay.urg:
        parts.append(f"{s['nurg']:7.5f} " if show else " " * 8)
    if lay.pri:
        parts.append(f"{s['npprior']:7.5f} " if show else " " * 8)
    if lay.pri or lay.ext:
        parts.append(f"{s['ntckts']:7.5f} " if show else " " * 8)
    if lay.urg:
        parts.append("".join(_opt8(s[k]) for k in ("urg", "rrcontr", "wtcontr", "dlcontr"))
                     if show else " " * 36)
    if lay.pri:
        parts.append(f"{s['ppri']:5d} " if show else " " * 18)
    return "".join(parts)


def _who(entry, lay):
    job = entry.job
    if not entry.print_id:
        return " " * 24 + (" " * 28 if lay.ext else "") + " " * 6
    text = f"{job.get('name', '')[:10]:<10} {job.get('owner', '')[:12]:<12} "
    if lay.ext:
        project = job.get("project") or "NA"
        department = job.get("department") or "NA"
        text += f"{project[:16]:<16} {department[:10]:<10} "
    return text + f"{entry.state[:5]:<5} "


def _times(entry, lay):
    text = ""
    if lay.show_time:
        text += f"{fmt_time(entry.row['time'])} " if entry.print_id else " " * 20
    if lay.urg:
        deadline = entry.job.get("deadline")
        text += f"{fmt_time(deadline)} " if deadline and entry.print_id else " " * 20
    if lay.ext:
        text += _ext_columns(entry)
    return text


def job_line(entry, lay):
    """One job line of any listing."""
    parts = [f"{entry.id:>7} " if entry.print_id else " " * 8, _numbers(entry, lay),
             _who(entry, lay), _times(entry, lay)]
    if not lay.full:
        parts.append(f"{entry.queue[:lay.qlen]:<{lay.qlen}} ")
    if lay.group_t:
        parts.append(f"{entry.master[:6]:<7}" if entry.master else " " * 7)
    else:
        parts.append(f"{entry.slots:>5} ")
    parts.append(entry.label if entry.label and entry.array else " " * 7)
    return "".join(parts)


# ---------------------------------------------------------------- -r

def _label(name, value):
    return f"{INDENT}{name}:{' ' * max(1, 17 - len(name))}{value}"


def contribution(name, value, job, snap, row=None):
    """Urgency contribution of one hard resource request (complex urgency times amount,
    for each slot of the job, or of the tasks of ``row``: ``requested_pe``)."""
    from gridtools.cli.sge import loadvalues
    cx = (snap.get("complexes") or {}).get(name)
    if not cx or not cx[6]:
        return 0.0
    pe = requested_pe(row, job) if row is not None else job.get("pe")
    slots = perange.low(pe) if pe else 1
    if cx[1] in ("INT", "DOUBLE", "MEMORY", "TIME"):
        return cx[6] * (loadvalues.to_number(value) or 0.0) * slots
    return cx[6]


def granted_pe(row, pe):
    """The name of the parallel environment a running row's task was granted (the one
    its wildcard request ``pe`` matched), else the requested name."""
    return row.get("pe") or pe[0]


def requested_pe(row, job):
    """The parallel environment request of a row's tasks: the job's, or the one the
    row carries (``req_pe``: the procs of an HTCondor cluster that ask for another)."""
    return row["req_pe"] if "req_pe" in row else job.get("pe")


def requested_hard(row, job):
    """The hard resource requests of a row's tasks: the job's, or the ones the row
    carries (``req_hard``: the procs of an HTCondor cluster that ask for others)."""
    return row["req_hard"] if "req_hard" in row else job.get("hard") or {}


def resource_lines(entry, snap, live):
    """The lines -r prints under a job line."""
    job, row = entry.job, entry.row
    lines = [_label("Full jobname", job.get("name", ""))]
    if entry.running:
        lines.append(_label("Master Queue", row.get("queue", "")))
    pe = requested_pe(row, job)
    if pe:
        lines.append(_label("Requested PE", f"{pe[0]} {pe_range(pe)}"))
        if entry.running:
            lines.append(_label("Granted PE", f"{granted_pe(row, pe)} {sum(g[2] for g in row.get('granted') or [])}"))
    if job.get("ckpt"):
        lines.append(_label("Checkpoint Env.", job["ckpt"]))
    lines += _resource_block("Hard Resources:   ", [
        f"{n}={v} ({contribution(n, v, job, snap, row):f})" for n, v in requested_hard(row, job).items()])
    lines += _resource_block("Soft Resources:   ", [f"{n}={v}" for n, v in (job.get("soft") or {}).items()])
    for title, key in (("Hard requested queues", "hard_queues"), ("Soft requested queues", "soft_queues"),
                       ("Master task hard requested queues", "masterq")):
        if job.get(key):
            lines.append(f"{INDENT}{title}: {', '.join(job[key])}")
    lines += _predecessor_lines(job, live)
    lines.append(f"{INDENT}Binding:          {job.get('binding') or 'NONE'}")
    return lines


def _resource_block(title, items):
    if not items:
        return [INDENT + title]
    return [INDENT + title + items[0]] + [" " * 25 + item for item in items[1:]]


def _predecessor_lines(job, live):
    lines = []
    pairs = (("Predecessor Jobs (request)", job.get("hold_jid")),
             ("Predecessor Jobs", [str(p) for p in job.get("predecessors") or () if p in live]),
             ("Predecessor Array Jobs (request)", job.get("hold_jid_ad")),
             ("Predecessor Array Jobs", [str(p) for p in job.get("ad_predecessors") or () if p in live]))
    for title, items in pairs:
        if items:
            lines.append(f"{INDENT}{title}: {', '.join(str(i) for i in items)}")
    return lines


def pe_range(pe):
    """A PE slot range as qstat shows it: ``2``, ``2-4``, ``2-`` (no upper bound), ``1,2,4``."""
    return perange.text(pe)


# ---------------------------------------------------------------- queues

def queue_header(lay):
    return (f"{'queuename':<{lay.qlen}} {'qtype':<5} {'resv/used/tot.':<14} {'load_avg':<8} "
            f"{'arch':<13} states")


def queue_line(row, lay, qtype, load, states):
    counts = f"{row.get('resv', 0)}/{row['used']}/{row['slots']} "
    load_text = f"{load:2.2f} " if load is not None else "-NA- "
    arch = f"{row.get('arch') or '-NA-'} "
    return (f"{row['name'][:lay.qlen]:<{lay.qlen}} {qtype[:5]:<5} {counts[:14]:<14} "
            f"{load_text[:8]:<8} {arch[:13]:<13} {states}")


def banner(lay, text):
    return ["", lay.hashes(), text, lay.hashes()]


# ---------------------------------------------------------------- -g c

def cluster_header(qlen, ext):
    text = (f"{'CLUSTER QUEUE':<{qlen}} {'CQLOAD':>7} {'USED':>6} {'RES':>6} {'AVAIL':>6} "
            f"{'TOTAL':>6} {'aoACDS':>6} {'cdsuE':>6}  ")
    if ext:
        text += " ".join(f"{c:>5}" for c in "sASCuadDcoE")
    return text, "-" * (80 + (66 if ext else 0) + max(0, qlen - 36))


def cluster_line(info, qlen, ext):
    load = f"{info['load']:7.2f} " if info["load"] is not None else f"{'-NA-':>7} "
    text = f"{info['name'][:qlen]:<{qlen}} " + load
    text += "".join(f"{info[k]:6d} " for k in ("used", "resv", "available", "total",
                                               "temp_disabled", "manual_intervention"))
    if ext:
        text += "".join(f"{info['by_state'][c]:5d} " for c in "sASCuadDcoE")
    return text
