"""The compact job listing of the published status: what plain ``qstat``,
``condor_q`` and ``qdel`` read instead of every job row and job fact.

The status snapshot (``spool.status``) carries, besides the full rows and
facts the detailed views read, a *listing*: the job rows in qstat's display
order (running tasks by job id, then waiting ones by priority, submission
time and id), where consecutive waiting jobs that show alike are one *run*.
Jobs of one owner with the same name, command, state, hold, priority, slots
and submission second, and consecutive ids, print as one line each but are
stored once: the listing of 10,000 jobs submitted by a loop holds a few
dozen runs and loads in well under a millisecond.

The listing comes with its runs' lines of the plain qstat table, rendered
by the daemon (``lines``: one text per run, a line per job), which qstat
writes as they are when it shows times in the same time zone (``zone``);
else it renders them from the runs, as it does for a listing without lines.

A run is a tuple indexed by the constants below; ``JOB`` is a tuple of the
facts its jobs share (indexed by the ``J_`` constants), one object for all
runs that share them. ``TASKS`` is the task number of a running array task,
the ranges of an array job's other rows, None for a job that is no array.
A running task, an array job's row and a row of finished tasks is a run of
one.
"""

import time

#: run fields
ID, COUNT, STATE, HOLD, PRIO, TIME, QUEUE, SLOTS, TASKS, SUBMITTED, JOB = range(11)
#: job fact fields: owner, name, and what condor_q shows: batch name, command, arguments,
#: JobPrio, universe, whether it was submitted as ClassAds, the tasks it was submitted
#: with, and the HTCondor bookkeeping of its tasks (kept, hold, per task; None if none)
J_OWNER, J_NAME, J_BATCH, J_CMD, J_ARGS, J_PRIO, J_UNIVERSE, J_ADS, J_SUBMITTED, J_BOOK = range(10)

#: qstat states of a task that holds (or is leaving) a slot
ACTIVE = ("r", "hr", "Rr", "t", "s", "S", "T", "dr", "dt")
#: how qstat shows a time
TIME_FORMAT = "%m/%d/%Y %H:%M:%S"


def _submitted(info):
    rng = info.get("tasks")
    return len(range(rng[0], rng[1] + 1, rng[2])) if rng else 1


def _job_facts(info, shared):
    """The facts tuple of a job's info: one object for the jobs whose facts are equal."""
    cinfo = info.get("condor") or {}
    book = None
    if "kept" in cinfo or "hold" in cinfo or "tasks" in cinfo:
        book = {k: cinfo[k] for k in ("kept", "hold", "tasks") if k in cinfo}
    facts = (info.get("owner", ""), info.get("name", ""), cinfo.get("batch"), cinfo.get("cmd") or "",
             tuple(cinfo.get("args") or ()), int(cinfo.get("prio") or 0), int(cinfo.get("universe") or 5),
             bool(cinfo.get("ads")), _submitted(info), book)
    return facts if book is not None else shared.setdefault(facts, facts)


_ACTIVE = frozenset(ACTIVE)


def display_key(row):
    """qstat's order of rows as a sort key: running rows first by job id, then waiting
    ones by priority, submission time and job id (each job's rows in task order)."""
    if row["state"] in _ACTIVE:
        return (0, row["id"], 0, 0, row["id"], row.get("task") or 0)
    return (1, 0, -row.get("prio", 0.0), row["time"], row["id"], row.get("task") or 0)


def _run(row, facts, info):
    task = row.get("task")
    return (row["id"], 1, row["state"], row.get("hold") or "", row.get("prio", 0.0), row["time"],
            row.get("queue", ""), row["slots"], task if task is not None else (row.get("tasks") or None),
            float(info.get("submit_time") or 0.0), facts)


def _entry(row, info, shared, by_condor):
    """(row, its priority, sort key, its run of one, what another row must look like to
    join its run (None: none may), the job's HTCondor facts object). ``by_condor``: facts
    found in this build by the identity of a job's HTCondor facts, which equal jobs share."""
    cinfo = info.get("condor")
    rng = info.get("tasks")
    key = (info.get("owner", ""), info.get("name", ""), id(cinfo), tuple(rng) if rng else None)
    facts = by_condor.get(key)
    if facts is None:
        facts = _job_facts(info, shared)
        if cinfo is not None and facts[J_BOOK] is None:
            by_condor[key] = facts
    run = _run(row, facts, info)
    look = None
    if run[TASKS] is None and run[STATE] not in _ACTIVE:
        look = (run[STATE], run[HOLD], run[PRIO], int(run[TIME]), run[QUEUE], run[SLOTS], facts)
    return (row, run[PRIO], display_key(row), run, look, cinfo)


def _merged(order):
    """The runs of ``order`` (entries in display order)."""
    runs, last, last_look, following = [], None, None, None
    for _key, _i, entry in order:
        run, look = entry[3], entry[4]
        if look is not None and look == last_look and run[ID] == following:
            last[COUNT] += 1
        else:
            last = list(run)
            runs.append(last)
            last_look = look
        following = run[ID] + 1
    return [tuple(run) for run in runs]


class Builder:
    """Builds listings. A daemon republishes the same row objects, and the same HTCondor
    facts object of their job, while their jobs do not change, and never changes them
    in place (``model.shared``) but for a row's priority: a builder it keeps remembers
    what it made of each row (by the row object, its priority and its job's HTCondor
    facts object) until the next build, so that a listing of 10,000 jobs is built again
    at a fraction of the first cost. A builder made for one build (``build``)
    remembers nothing."""

    def __init__(self):
        self.known = {}         # id(row) -> _entry
        self.shared = {}        # facts tuple -> itself

    def build(self, snapshot):
        """The listing of a status snapshot (a dict with ``rows``, ``jobs``, ``queues``)."""
        jobs = snapshot.get("jobs") or {}
        known, seen = self.known, {}
        if len(self.shared) > 4 * len(jobs) + 1000:
            self.shared = {}
        order, by_condor = [], {}
        for i, row in enumerate(snapshot.get("rows") or ()):
            info = jobs.get(row["id"])
            if info is None:
                continue
            entry = known.get(id(row))
            if entry is None or entry[0] is not row or entry[1] != row.get("prio", 0.0) \
                    or entry[5] is not info.get("condor"):
                entry = _entry(row, info, self.shared, by_condor)
            seen[id(row)] = entry
            order.append((entry[2], i, entry))
        self.known = seen
        order.sort()
        width = max([30] + [len(q["name"]) for q in snapshot.get("queues") or ()])
        return {"time": snapshot.get("time"), "qlen": width, "faults": snapshot.get("faults") or [],
                "runs": _merged(order), "zone": zone()}


def build(snapshot):
    """The listing of a status snapshot, made from scratch (see ``Builder``)."""
    return Builder().build(snapshot)


def line_format(qlen):
    """The ``%`` format of a line of the plain qstat table, with a queue column ``qlen``
    wide: job id, priority, name, owner, state, time, queue, slots, ja-task-ID."""
    return f"%7d %.5f %-10.10s %-12.12s %-5s %s %-{qlen}.{qlen}s %5d %s"


def zone():
    """What decides how this process shows times: its time zone's names and offsets."""
    return (tuple(time.tzname), time.timezone, time.altzone, time.daylight)


class Renderer:
    """The qstat lines of each run of a listing; remembers the texts it rendered last
    time, so that a daemon republishing a listing renders the runs that changed only."""

    def __init__(self):
        self.known = {}
        self.times = {}

    def when(self, epoch):
        second = int(epoch)
        text = self.times.get(second)
        if text is None:
            text = self.times[second] = time.strftime(TIME_FORMAT, time.localtime(second))
        return text

    def lines(self, listing):
        """One text per run of ``listing``: its jobs' lines, each ending in a newline."""
        tail = line_format(listing["qlen"])[3:] + "\n"
        known, self.known, self.times = self.known, {}, {}
        found = []
        for run in listing["runs"]:
            job = run[JOB]
            key = (run[ID], run[COUNT], run[PRIO], job[J_NAME], job[J_OWNER], run[STATE], int(run[TIME]),
                   run[QUEUE], run[SLOTS], str(run[TASKS]), tail)
            text = known.get(key)
            if text is None:
                rest = tail % (run[PRIO], job[J_NAME], job[J_OWNER], run[STATE], self.when(run[TIME]),
                               run[QUEUE], run[SLOTS], task_label(run))
                text = "".join([f"{n:7d}{rest}" for n in range(run[ID], run[ID] + run[COUNT])])
            self.known[key] = text
            found.append(text)
        return found


def task_label(run):
    """The ja-task-ID column text of a run's jobs (seven blanks for jobs that are no arrays)."""
    tasks = run[TASKS]
    if tasks is None:
        return "       "
    if type(tasks) is int:
        return str(tasks)
    return ",".join(str(first) if first == last else f"{first}-{last}:{step}" for first, last, step in tasks)
