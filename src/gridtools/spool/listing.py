"""The compact job listing of the published status: what plain ``qstat``,
``condor_q`` and ``qdel`` read instead of every job row and job fact.

The status snapshot (``spool.status``) carries, besides the full rows and
facts the detailed views read, a *listing*: the job rows in qstat's display
order (running tasks by job id, then waiting ones by priority, submission
time and id, then finished ones in the order they ended), where consecutive
waiting jobs that show alike are one *run*.
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
#: job fact fields: owner, name, and what condor_q shows: batch name, command's base name,
#: arguments (always empty: they are private to the job's owner, see ``spool.status``),
#: JobPrio, universe, whether it was submitted as ClassAds, the tasks it was submitted
#: with, the HTCondor bookkeeping of its tasks (kept, hold, per task, the JobPrio of the
#: procs whose own differs, the procs made so far of a cluster materialized late; None
#: if none), of a
#: DAG's manager the DAG's (total, done, failed) nodes (None for other jobs), of a
#: DAG's node job its manager's cluster (0 for other jobs), and the ImageSize its ad was
#: submitted with (KiB; 0 when none)
(J_OWNER, J_NAME, J_BATCH, J_CMD, J_ARGS, J_PRIO, J_UNIVERSE, J_ADS, J_SUBMITTED, J_BOOK, J_DAG,
 J_DAGMAN, J_IMAGE) = range(13)



def _running_states():
    """Every state ``rows.running_state`` gives: d, S, T, h in that order, then s for a
    suspension by qmod -sj, nothing for one by the queue or a threshold alone, else r
    (Rr when restarted)."""
    out = set()
    for deleting in ("", "d"):
        for queue in ("", "S"):
            for threshold in ("", "T"):
                for hold in ("", "h"):
                    lead = deleting + queue + threshold + hold
                    out.add(lead + "s")
                    if queue or threshold:
                        out.add(lead)
                    else:
                        out.update([lead + "r"] + ([lead + "Rr"] if not deleting else []))
    return out


#: qstat states of a task that holds (or is leaving) a slot (see ``rows.running_state``)
ACTIVE = tuple(sorted(_running_states() | {"t", "dt"}))
#: those of a suspended task (``qstat -s s``)
SUSPENDED = tuple(sorted(st for st in ACTIVE if set(st) & set("sST")))
#: how qstat shows a time
TIME_FORMAT = "%m/%d/%Y %H:%M:%S"


def _submitted(info):
    rng = info.get("tasks")
    return len(range(rng[0], rng[1] + 1, rng[2])) if rng else 1


def _job_facts(info, shared):
    """The facts tuple of a job's info: one object for the jobs whose facts are equal."""
    cinfo = info.get("condor") or {}
    book = None
    if "kept" in cinfo or "hold" in cinfo or "tasks" in cinfo or "procs" in cinfo:
        book = {k: cinfo[k] for k in ("kept", "hold", "tasks", "procs", "materialized") if k in cinfo}
    facts = (info.get("owner", ""), info.get("name", ""), cinfo.get("batch"), cinfo.get("cmd") or "",
             tuple(cinfo.get("args") or ()), int(cinfo.get("prio") or 0), int(cinfo.get("universe") or 5),
             bool(cinfo.get("ads")), _submitted(info), book,
             tuple(cinfo["dag"]) if cinfo.get("dag") else None, int(cinfo.get("dagman") or 0),
             int(cinfo.get("image") or 0))
    return facts if book is not None else shared.setdefault(facts, facts)


_ACTIVE = frozenset(ACTIVE)


def _run(row, facts, submitted):
    task = row.get("task")
    return [row["id"], 1, row["state"], row.get("hold") or "", row.get("prio", 0.0), row["time"],
            row.get("queue", ""), row["slots"], task if task is not None else (row.get("tasks") or None),
            float(submitted or 0.0), facts]


def _parts(entry):
    """(facts, submission time) of a job's entry in a snapshot's ``jobs`` (a mapping, or
    the daemon's three parts: see ``spool.status``)."""
    if type(entry) is tuple:
        return entry[0], entry[1]
    return entry, entry.get("submit_time")


def _active_key(row):
    return (row["id"], row.get("task") or 0)


def _waiting_key(row):
    return (-row.get("prio", 0.0), row["time"], row["id"], row.get("task") or 0)


def display_order(rows, jobs):
    """The rows of known jobs in qstat's order: running rows first by job id, then
    waiting ones by priority, submission time and job id (each job's rows in task
    order; rows that tie keep their order), then finished ones (``finished_order``).
    Waiting rows are sorted by keys taken in C (``operator.itemgetter``), by time and
    id, then by priority (a sort keeps the order of equal keys): a daemon sorts 10,000
    of them at every publication."""
    from operator import itemgetter
    known = [row for row in rows if row["id"] in jobs]
    active = sorted((row for row in known if row["state"] in _ACTIVE), key=_active_key)
    waiting = [row for row in known if row["state"] not in _ACTIVE and row["state"] != "z"]
    try:
        waiting.sort(key=itemgetter("time", "id"))
        waiting.sort(key=itemgetter("prio"), reverse=True)
    except (KeyError, TypeError):       # a row without a priority (or task rows out of order)
        waiting.sort(key=_waiting_key)
    return active + waiting + finished_order(known)


def finished_order(rows):
    """The finished rows (state z) of ``rows`` as Grid Engine lists its finished jobs:
    in the order they joined that list, when their first task ended (``ended``), not by
    priority."""
    return sorted((row for row in rows if row["state"] == "z"),
                  key=lambda row: (row.get("ended") or 0.0, row["id"]))


#: what a waiting row of a job that is no array must share with the run before it to join
#: it (besides the next job id, the submission second and the job's facts)
_LOOK = ("state", "hold", "prio", "queue", "slots")


class Builder:
    """Builds listings, one facts object for the jobs whose facts are equal (kept from
    one build to the next, at most a few per job: a daemon keeps its builder). A row
    joins the run before it when it is the next job's, looks alike (``_LOOK``, the
    submission second) and its job's owner, name and HTCondor facts are the run's
    job's (equal jobs share their HTCondor facts object, ``model.shared``, so that
    comparing them is mostly comparing two references)."""

    def __init__(self):
        self.shared = {}        # facts tuple -> itself

    def _facts(self, info, found):
        cinfo = info.get("condor")
        rng = info.get("tasks")
        key = (info.get("owner", ""), info.get("name", ""), id(cinfo), tuple(rng) if rng else None)
        facts = found.get(key)
        if facts is None:
            facts = _job_facts(info, self.shared)
            if cinfo is not None and facts[J_BOOK] is None:
                found[key] = facts
        return facts

    def build(self, snapshot):
        """The listing of a status snapshot (a dict with ``rows``, ``jobs``, ``queues``)."""
        from operator import itemgetter
        jobs = snapshot.get("jobs") or {}
        if len(self.shared) > 4 * len(jobs) + 1000:
            self.shared = {}
        look_of = itemgetter(*_LOOK)
        runs, found, last, last_sign = [], {}, None, None
        for row in display_order(snapshot.get("rows") or (), jobs):
            info, submitted = _parts(jobs[row["id"]])
            sign = None
            if row["state"] not in _ACTIVE and row.get("task") is None and not row.get("tasks") \
                    and info.get("tasks") is None and "hold" in row \
                    and "dag" not in (info.get("condor") or ()):       # (a DAG is a row of its own)
                sign = (look_of(row), int(row["time"]), info.get("condor"), info.get("owner"), info.get("name"))
            if sign is not None and sign == last_sign and row["id"] == last[ID] + last[COUNT]:
                last[COUNT] += 1
                continue
            last, last_sign = _run(row, self._facts(info, found), submitted), sign
            runs.append(last)
        width = max([30] + [len(q["name"]) for q in snapshot.get("queues") or ()])
        return {"time": snapshot.get("time"), "qlen": width, "faults": snapshot.get("faults") or [],
                "runs": [tuple(run) for run in runs], "zone": zone()}


def build(snapshot):
    """The listing of a status snapshot (see ``Builder``)."""
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
    return tasks_text(tasks)


def tasks_text(runs):
    """Task runs [[first, last, step], ...] as qstat writes them, comma-separated: a run
    of one task as its number, of two tasks as both numbers (``1,3``, ``5,6``), of more
    as ``first-last:step`` (Grid Engine's range_to_dstring)."""
    parts = []
    for first, last, step in runs:
        if first == last:
            parts.append(str(first))
        elif first + step == last:
            parts.append(f"{first},{last}")
        else:
            parts.append(f"{first}-{last}:{step}")
    return ",".join(parts)
