"""What a qstat listing contains, before it is rendered as text, XML or JSON.

``build(snap, opts)`` selects rows (owner, state, queue selection), splits
them into running, pending and finished jobs, distributes running tasks over
the queue instances they occupy (``-f``), expands array tasks (``-g d``) and
parallel tasks (``-g t``), and attaches the numbers the priority columns show.
Each listed line is an ``Entry``.
"""

from gridtools.cli.sge import qstat, qstat_select, qstatus


class Entry:
    """One line of a job listing."""

    __slots__ = ("row", "job", "label", "queue", "slots", "master", "print_id", "scores")

    def __init__(self, row, job, scores, label, queue, slots, master=None, print_id=True):
        self.row, self.job, self.scores = row, job, scores
        self.label, self.queue, self.slots = label, queue, slots
        self.master, self.print_id = master, print_id

    @property
    def id(self):
        return self.row["id"]

    @property
    def state(self):
        return self.row["state"]

    @property
    def running(self):
        return self.row["state"] in qstatus.ACTIVE

    @property
    def zombie(self):
        return self.row["state"] == "z"

    @property
    def array(self):
        return bool(self.job.get("array"))


class Scores:
    """Priority and urgency numbers of rows, normalized the way qstat -pri/-urg shows them.

    Held waiting rows and error rows were not considered by the scheduler: their
    numbers are zero, as in Grid Engine (a running task keeps its numbers when
    it is held). Urgency is normalized over the considered
    rows; tickets are not used, so every considered row has 0.5 normalized
    tickets.
    """

    def __init__(self, snap):
        self.jobs = snap["jobs"]
        urgs = [self._urg(r)[0] for r in snap["rows"] if self.considered(r)]
        self.low = min(urgs) if urgs else 0.0
        self.high = max(urgs) if urgs else 0.0

    @staticmethod
    def considered(row):
        state = row["state"]
        return state in qstatus.ACTIVE or not (state.startswith("h") or state in ("z", "Eqw"))

    def _urg(self, row):
        values = self.jobs.get(row["id"], {}).get("urgency") or (0.0, 0.0, 0.0, 0.0)
        return [float(v) for v in values]

    def of(self, row):
        job = self.jobs.get(row["id"], {})
        priority = int(job.get("priority", 0))
        scores = {"prio": float(row.get("prio", 0.0)), "ppri": priority, "nurg": 0.0,
                  "npprior": 0.0, "ntckts": 0.0, "urg": 0.0, "rrcontr": 0.0, "wtcontr": 0.0,
                  "dlcontr": 0.0, "tickets": (0.0, 0.0, 0.0, 0.0), "share": 0.0}
        order = job.get("order")
        if not self.considered(row):        # (the numbers of the last pass that ordered it)
            return self._published(scores, order) if order else scores
        if order:
            return self._published(scores, order)
        urg = self._urg(row)
        scores.update(urg=urg[0], rrcontr=urg[1], wtcontr=urg[2], dlcontr=urg[3], ntckts=0.5,
                      npprior=(priority + 1024) / 2048.0)
        span = self.high - self.low
        scores["nurg"] = (urg[0] - self.low) / span if span else 0.5
        return scores

    @staticmethod
    def _published(scores, order):
        """The numbers the scheduler's last pass published for the job."""
        urg = order.get("urg") or (0.0, 0.0, 0.0, 0.0)
        tickets = order.get("tickets") or (0.0, 0.0, 0.0, 0.0)
        scores.update(prio=float(order["prio"]), npprior=float(order["npprior"]),
                      nurg=float(order["nurg"]), ntckts=float(order["ntckts"]), urg=float(urg[0]),
                      rrcontr=float(urg[1]), wtcontr=float(urg[2]), dlcontr=float(urg[3]),
                      tickets=tuple(float(t) for t in tickets[:4]),
                      share=float(tickets[4]) if len(tickets) > 4 else 0.0)
        return scores


class Report:
    """Queue blocks (with -f), running, pending and finished entries."""

    def __init__(self):
        self.queues = None          # [(queue row, [Entry])] when the listing shows queues
        self.running = []
        self.pending = []
        self.finished = []

    def jobs(self):
        """All entries in listing order."""
        listed = [e for _, entries in self.queues or () for e in entries]
        return listed + self.running + self.pending + self.finished


def _task_label(row):
    return qstatus.task_label(row)


def _pe_lines(row, job, scores, queue, slots, first):
    """-g t lines of a running task in one queue instance: MASTER, then SLAVE per slot.
    On the master instance of a PE whose job_is_first_task is FALSE the master task holds
    no slot of its own: MASTER and then a SLAVE line for each slot (Grid Engine's
    ``slot_adjust``)."""
    lines = []
    count = max(1, slots)
    if first and row.get("pe"):
        from gridtools.cli.sge.cellfacts import job_is_first_task
        count += not job_is_first_task(row["pe"])
    for i in range(count):
        master = "MASTER" if first and i == 0 else "SLAVE"
        lines.append(Entry(row, job, scores, _task_label(row), queue, 1, master,
                           print_id=(first and i == 0)))
    return lines


def running_entries(row, job, scores, opts, queue_names=None):
    """Entries of one running task, in one queue instance or all (``queue_names`` None)."""
    granted = row.get("granted") or [[row["queue"].split("@")[0], row["queue"].partition("@")[2],
                                      row["slots"]]]
    if queue_names is None and "t" not in opts.group:
        return [Entry(row, job, scores, _task_label(row), row["queue"], row["slots"])]
    out = []
    for i, (q, h, n) in enumerate(granted):
        name = f"{q}@{h}"
        if queue_names is not None and name not in queue_names:
            continue
        if "t" in opts.group:
            out += _pe_lines(row, job, scores, name, n, i == 0)
        else:
            out.append(Entry(row, job, scores, _task_label(row), name, n))
    return out


def waiting_entries(row, job, scores, opts):
    """Entries of a pending or finished row; with -g d one per array task."""
    tasks = row.get("tasks")
    if "d" in opts.group and tasks:
        return [Entry(row, job, scores, str(n), "", row["slots"])
                for first, last, step in tasks for n in range(first, last + 1, step)]
    return [Entry(row, job, scores, _task_label(row), "", row["slots"])]


def build(snap, opts):
    rows = qstat.selected_rows(snap, opts)
    queues = None
    if opts.full or opts.selects_queues:
        queues = qstat_select.selected_queues(snap, opts)
    if opts.selects_queues:
        rows = qstat_select.filter_rows(rows, snap, queues)
    scores = Scores(snap)
    report = Report()
    jobs = snap["jobs"]
    running = [r for r in rows if r["state"] in qstatus.ACTIVE]
    for row in rows:
        job = jobs.get(row["id"], {})
        if row["state"] == "z":
            report.finished += waiting_entries(row, job, scores.of(row), opts)
        elif row["state"] not in qstatus.ACTIVE:
            report.pending += waiting_entries(row, job, scores.of(row), opts)
        elif not opts.full:
            report.running += running_entries(row, job, scores.of(row), opts)
    if "d" in opts.group:
        report.pending = _by_task(report.pending)
    if opts.full:
        report.queues = _queue_blocks(queues, running, jobs, scores, opts)
    return report


def _by_task(entries):
    """-g d entries with the tasks of each job's consecutive entries in task order (the
    rows of a cluster's procs that ask for other slots hold ranges that interleave)."""
    out, start = [], 0
    for i in range(1, len(entries) + 1):
        if i == len(entries) or entries[i].id != entries[start].id:
            block = entries[start:i]
            if len(block) > 1 and all(e.label.isdigit() for e in block):
                block.sort(key=lambda e: int(e.label))
            out += block
            start = i
    return out


def _queue_blocks(queues, running, jobs, scores, opts):
    blocks = []
    for qrow in queues:
        names = {qrow["name"]}
        entries = []
        for row in running:
            entries += running_entries(row, jobs.get(row["id"], {}), scores.of(row), opts, names)
        if entries or not opts.hide_empty:
            blocks.append((qrow, entries))
    return blocks
