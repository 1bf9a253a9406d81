"""Reading the cell's status for queries of both dialects: the daemon's snapshot,
or the spool.

``load()`` returns the published snapshot (see daemon.publish) merged with
submit requests the daemon has not taken in yet, so a job shows up in qstat
the moment qsub returned: the requests are read *before* the snapshot, and
the daemon removes a request only after publishing a snapshot that shows
it, so every job is in one or the other. Without a snapshot (no daemon has
run yet) the rows are built from the spool's job files. While no daemon
runs, the snapshot is marked ``stale``: jobs no longer in the spool are left
out and jobs the snapshot does not know are read from the spool.
"""

import posix
import time

from gridtools import cell
from gridtools.spool import daemonctl, status as spool_status
from gridtools.spool.listing import ACTIVE, SUSPENDED, tasks_text  # noqa: F401 - the views name them from here


def load_listing(lines=False, tables=()):
    """The published job listing (``spool.listing``; with its rendered qstat ``lines``
    when asked for, and the ready-made ``tables`` named: ``spool.status.read_listing``)
    when it is the whole of what the queries would show: a daemon runs and no submit
    request of the caller's waits to be taken in (``load`` merges those). None
    otherwise: the caller loads the status."""
    if _own_submits_wait():
        return None
    listing = spool_status.read_listing(lines, tables)
    if listing is None or not _daemon_running():
        return None
    return listing


def from_listing(listing, ids=None):
    """The part of a status snapshot that names jobs, made from a job listing: ``jobs``
    (owner, name and whether it is an array, of each job) and ``rows`` (id, state and
    task or tasks), of the jobs ``ids`` (every job: None). Enough for ``cli/sge/jobsel``."""
    from gridtools.spool import listing as L
    jobs, rows = {}, []
    for run in listing["runs"]:
        first, count, tasks = run[L.ID], run[L.COUNT], run[L.TASKS]
        if ids is None:
            members = range(first, first + count)
        elif count > len(ids):
            members = sorted(j for j in ids if first <= j < first + count)
        else:
            members = [j for j in range(first, first + count) if j in ids]
        job = run[L.JOB]
        for jid in members:
            info = jobs.get(jid)
            if info is None:
                info = jobs[jid] = {"owner": job[L.J_OWNER], "name": job[L.J_NAME], "array": False}
            row = {"id": jid, "state": run[L.STATE]}
            if tasks is not None:
                info["array"] = True
                row["task" if type(tasks) is int else "tasks"] = tasks
            rows.append(row)
    return {"jobs": jobs, "rows": rows}


#: the folders a submit request not answered yet is in, in the order they are looked at:
#: queued, then taken by the daemon (a request moves from the first to the second, and
#: leaves the second once the status shows its job)
SUBMIT_FOLDERS = ("requests", "taken")


def _own_submits_wait():
    """True when a submit request ``load`` would merge waits (the caller's; anyone's for root)."""
    me = None if posix.geteuid() == 0 else posix.getuid()
    for folder in map(cell.spool, SUBMIT_FOLDERS):
        try:
            names = posix.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith(".submit"):
                try:
                    if me is None or posix.lstat(f"{folder}/{name}").st_uid == me:
                        return True
                except OSError:
                    continue            # taken or answered meanwhile: in the folder or status read next
    return False


def load():
    pending = _submit_requests()
    snap = spool_status.read()
    if snap is None:
        snap = _from_spool()
    elif not _daemon_running():
        _reconcile(snap)
    _merge_requests(snap, pending)
    return snap


def _daemon_running():
    return daemonctl.running()


def _job_parts(job_ids, private, public=None):
    """(rows, info) of the given jobs, read from the spool (those the caller may read:
    their private facts go to ``private``, job id -> facts, and the public text of the
    ad of those submitted as one to ``public``: ``spool.rows.public_ad``)."""
    from gridtools.spool.rows import ad_done_of, job_info, job_rows, private_facts, public_ad
    from gridtools.model.job import Job
    from gridtools.spool import jobs as jobstore
    from gridtools.formats import spoolyaml
    jobs = []
    for job_id in job_ids:
        try:
            spec = jobstore.read_spec(job_id)
            if spec is not None:
                jobs.append(Job.from_parts(spec, jobstore.read_state(job_id)))
        except (OSError, spoolyaml.SpoolFormatError):
            continue
    live = {j.id for j in jobs if not j.is_finished()}
    by_id = {j.id: j for j in jobs}
    rows, info = [], {}
    asks = _ProcAsks()
    for job in jobs:
        rows.extend(job_rows(job, 0.0, live, ad_done_of(job, live, by_id.get), asks.of(job.spec)))
        info[job.id] = job_info(job, None)
        mine = private_facts(job)
        if mine is not None:
            private[job.id] = mine
        ad = public_ad(job) if public is not None else None
        if ad is not None:
            public[job.id] = ad
    return rows, info


class _ProcAsks:
    """What the procs of HTCondor clusters ask for when they do not ask alike
    (``procrequests.task_asks``), as the daemon reads them (the cell's machine resources
    read once, when a cluster first needs them)."""

    def __init__(self):
        self.counted = None

    def of(self, spec):
        if not spec.get("condor_ad"):
            return None
        from gridtools import procrequests
        if self.counted is None:
            self.counted = procrequests.countable_complexes()
        return procrequests.task_asks(spec, self.counted)


def _from_spool():
    from gridtools.spool import jobs as jobstore
    private, public = {}, {}
    rows, info = _job_parts(jobstore.list_ids(), private, public)
    return {"time": 0.0, "rows": rows, "jobs": info, "queues": [], "hosts": {}, "reasons": {},
            "exechosts": [], "private": private, "public_ads": public}


def _reconcile(snap):
    """A snapshot left by a daemon that is gone: leave out jobs no longer in the spool,
    add the ones it does not know, and mark it stale."""
    snap["stale"] = True
    try:
        stored = {int(n) for n in posix.listdir(cell.spool("jobs")) if n.isdigit()}
    except OSError:
        return                          # no job store to compare with (or not ours to read)
    known = snap["jobs"]
    gone = set(known) - stored
    if gone:
        snap["rows"] = [r for r in snap["rows"] if r["id"] not in gone]
        for job_id in gone:
            del known[job_id]
    unknown = sorted(stored - set(known) - _deleted_in_journal())
    if unknown:
        rows, info = _job_parts(unknown, snap.setdefault("private", {}), snap.setdefault("public_ads", {}))
        snap["rows"].extend(rows)
        known.update(info)


def _deleted_in_journal():
    """Jobs the daemon deleted and recorded in its journal but whose folders it had not
    removed yet: a snapshot it published after that knows them no more, and they are
    not shown again as they were before."""
    from gridtools.spool import journal
    return journal.deleted_ids()


def warnings(snap, etc_only=False):
    """Lines to show on stderr: the status is stale, or the daemon reported faults."""
    lines = []
    if snap.get("stale") and not etc_only:
        when = time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(snap.get("time") or 0))
        lines.append(f"warning: the gridtools daemon of cell {cell.root()} is not running: "
                     f"job states as of {when}")
    return lines + fault_lines(snap.get("faults") or (), etc_only)


def fault_lines(faults, etc_only=False):
    """The warnings of the faults the daemon published (with ``etc_only``, those of the
    configuration only)."""
    lines = []
    shown = [fault for fault in faults if not etc_only or str(fault.get("path", "")).startswith("etc/")]
    kept = [fault for fault in shown if fault.get("kind") == "quarantine"]
    if len(kept) > 1:                   # (one line for them all: every command says it)
        names = ", ".join(str(fault.get("path") or "?") for fault in kept[:MOST_NAMED])
        more = f" and {len(kept) - MOST_NAMED} more" if len(kept) > MOST_NAMED else ""
        lines.append(f"warning: {len(kept)} files or folders are set aside in spool/quarantine: "
                     f"{names}{more} (spool/messages says why)")
        shown = [fault for fault in shown if fault.get("kind") != "quarantine"]
    lines += [f"warning: {fault['text']}" for fault in shown]
    return lines


#: most quarantined objects the one warning for them names
MOST_NAMED = 3


def _submit_requests():
    """(job description, owner uid) of each of the caller's submit requests waiting in the
    spool, read as the daemon reads them (plain files only, capped, checked)."""
    for folder in SUBMIT_FOLDERS:
        try:
            if any(n.endswith(".submit") for n in posix.listdir(cell.spool(folder))):
                break
        except OSError:
            continue
    else:
        return []
    from gridtools.spool import inbox
    return [(req.body["job"], req.uid) for req in inbox.pending_submits()]


def _merge_requests(snap, pending):
    if not pending:
        return
    known = snap["jobs"]
    asks = _ProcAsks()
    index = PredecessorIndex(snap)      # (one for all the requests: built once, if any needs it)
    identities = {}
    for spec, uid in pending:
        if not isinstance(spec, dict) or not isinstance(spec.get("id"), int) or spec["id"] in known:
            continue
        try:
            _add_unprocessed(snap, as_taken_in(spec, uid, identities), asks, index)
        except (KeyError, TypeError, ValueError, IndexError, ArithmeticError):
            continue


def as_taken_in(spec, uid, identities=None):
    """A submit request's description with the owner and group the daemon gives it when
    it takes it in: the owner of the request file (whatever the description says), its
    uid and the name of its group. ``identities``: a dict in which the names looked up
    are kept for the next requests of the same query (many requests, few users)."""
    spec = dict(spec, uid=uid)
    names = {} if identities is None else identities
    given = "gid" in spec
    gid = spec.get("gid")
    try:
        owner = names[("u", uid)]
    except KeyError:
        owner = names[("u", uid)] = _user_name(uid)
    except TypeError:
        owner = _user_name(uid)
    try:
        group = names[("g", given, gid)]
    except KeyError:
        group = names[("g", given, gid)] = _group_name(given, gid)
    except TypeError:                   # (an unhashable gid: a description the daemon refuses)
        group = _group_name(given, gid)
    spec["owner"], spec["group"] = owner, group
    return spec


def _user_name(uid):
    import pwd
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group_name(given, gid):
    import grp
    try:
        return grp.getgrgid(gid if given else -1).gr_name
    except (KeyError, TypeError, OverflowError):
        return str(gid if given else "")


def _add_unprocessed(snap, spec, asks=None, index=None):
    """Show the job of a submit request not taken in yet as the daemon will show it: an
    HTCondor cluster whose submitter left its requests to be read from proc 0's ad
    (``requests_pending``) with them, and its procs that ask otherwise with their own
    (``_ProcAsks``). ``index``: the ``PredecessorIndex`` of ``snap`` its -hold_jid
    items are resolved against (made here when not given), told of the job added."""
    asks = asks or _ProcAsks()
    index = index or PredecessorIndex(snap)
    if spec.get("condor_ad") and spec.get("requests_pending"):
        from gridtools import procrequests
        if asks.counted is None:
            asks.counted = procrequests.countable_complexes()
        try:
            spec = procrequests.settled(spec, asks.counted)
        except Exception:  # noqa: BLE001 - an ad the daemon will refuse: shown as it came
            pass
    rng = spec.get("tasks")
    tasks = [list(rng)] if rng else None
    found = index.resolve(spec)                         # as the daemon will resolve them
    state = "hqw" if spec.get("user_hold") or found["predecessors"] or found["ad_predecessors"] else "qw"
    from gridtools.model import perange
    from gridtools.spool.rows import split_row
    slots = perange.low(spec["pe"]) if spec.get("pe") else 1
    row = {"id": spec["id"], "tasks": tasks, "state": state, "prio": 0.0,
           "hold": "u" if spec.get("user_hold") else "",     # (as the daemon will hold it)
           "time": float(spec["submit_time"]), "queue": "", "slots": slots}
    if found["ad_predecessors"]:
        row["ad"] = True
    own = asks.of(spec) if tasks else None
    rows = split_row(row, own) if own else [row]
    res = spec.get("resources") or {}
    snap["jobs"][spec["id"]] = {
        "name": spec.get("name") or "", "owner": spec["owner"], "group": "", "project": spec.get("project") or "",
        "department": "defaultdepartment", "submit_time": float(spec["submit_time"]),
        "priority": int(spec.get("priority", 0)), "hard": dict(res.get("hard") or {}),
        "soft": dict(res.get("soft") or {}), "hard_queues": [], "soft_queues": [],
        "pe": spec.get("pe"), "hold_jid": spec.get("hold_jid") or [], "predecessors": [],
        "urgency": [0.0, 0.0, 0.0, 0.0], "deadline": None, "array": bool(rng), "tasks": rng,
        "account": spec.get("account") or "sge", "ar": spec.get("ar")}
    from gridtools.model.job import Job
    from gridtools.spool.rows import condor_info, private_facts
    job = Job(spec)
    if spec.get("condor_ad") and spec.get("user_hold"):   # (its hold's words, as the daemon will keep them)
        from gridtools.jobads import hold_at_submit
        job.hold = "u"
        hold = hold_at_submit(job, spec["submit_time"])
        if hold:
            job.condor["hold"] = hold
    if tasks and isinstance(spec.get("condor_ad"), list):     # (each proc held or idle as its own ad says)
        rows = _own_holds(rows, job, "hqw" if found["predecessors"] or found["ad_predecessors"] else "qw")
    snap["rows"].extend(rows)
    if spec.get("per_job_requests"):
        snap["jobs"][spec["id"]]["per_job"] = list(spec["per_job_requests"])
    snap["jobs"][spec["id"]]["condor"] = condor_info(job)
    if private_facts(job) is not None:
        snap.setdefault("private", {})[spec["id"]] = private_facts(job)
    spec = dict(spec, **found)
    snap["jobs"][spec["id"]]["predecessors"] = spec["predecessors"]
    snap["jobs"][spec["id"]]["ad_predecessors"] = spec["ad_predecessors"]
    snap.setdefault("unprocessed", {})[spec["id"]] = spec      # the caller's own description
    index.added(spec["id"])


def _own_holds(rows, job, waiting):
    """The waiting rows of a cluster not taken in yet with its procs held or idle as
    their own ads say, as the daemon will hold them (``daemon.condorjob.hold_procs``,
    which notes each one's hold in ``job``): a row's held procs and its others apart,
    the others in state ``waiting``."""
    from gridtools.daemon import condorjob
    from gridtools.spool.rows import ranges
    try:
        condorjob.hold_procs(job, float(job.spec["submit_time"]))
    except Exception:       # noqa: BLE001 - an ad the daemon will refuse: listed as it came
        return rows
    if job.hold or not job.tasks:       # (all held as the first, or none)
        return rows
    found = []
    for row in rows:
        held, idle = [], []
        for first, last, step in row["tasks"] or ():
            for number in range(first, last + 1, step):
                (held if condorjob.is_held(job, number) else idle).append(number)
        for numbers, state, hold in ((held, "hqw", "u"), (idle, waiting, "")):
            if numbers:
                found.append(dict(row, tasks=ranges(numbers), state=state, hold=hold))
    found.sort(key=lambda r: r["tasks"][0][0])
    return found


def resolve_predecessors(snap, spec):
    """The predecessors and array predecessors of a job not taken in yet, resolved
    against the listed jobs as the daemon resolves them (``model.predecessors``)."""
    return PredecessorIndex(snap).resolve(spec)


class PredecessorIndex:
    """The live jobs of a status snapshot (the ids of its rows not finished) and their
    names, which -hold_jid items are resolved against. Built from the whole snapshot
    once, when a job first names predecessors (most name none: they cost nothing), and
    then kept up to date with ``added``, as the daemon keeps its own: a query that merges
    many submit requests reads the snapshot's rows once, not once per request.
    ``builds`` counts the times the index was built."""

    def __init__(self, snap):
        self.snap = snap
        self.live = None
        self.names = None
        self.builds = 0

    def _build(self):
        jobs = self.snap["jobs"]
        self.live = {row["id"] for row in self.snap["rows"] if row["state"] != "z"}
        self.names = {}
        for jid in self.live:
            self.names.setdefault((jobs.get(jid) or {}).get("name") or "", set()).add(jid)
        self.builds += 1

    def added(self, jid):
        """Job ``jid`` was added to the snapshot, with rows waiting to run."""
        if self.live is not None and jid not in self.live:
            self.live.add(jid)
            self.names.setdefault((self.snap["jobs"].get(jid) or {}).get("name") or "", set()).add(jid)

    def resolve(self, spec):
        """{"predecessors": ids, "ad_predecessors": ids} of the job described by ``spec``
        (its ``hold_jid`` and ``hold_jid_ad``)."""
        from gridtools.model import predecessors
        items = {key: spec.get(field) or [] for key, field in
                 (("predecessors", "hold_jid"), ("ad_predecessors", "hold_jid_ad"))}
        if not any(items.values()):
            return {key: [] for key in items}
        if self.live is None:
            self._build()
        jobs = self.snap["jobs"]

        def owner_of(jid):
            return (jobs.get(jid) or {}).get("owner")
        return {key: predecessors.resolve(named, spec["owner"], spec["id"], self.live, self.names, owner_of)
                for key, named in items.items()}


def task_hard(snap, row):
    """The hard requests of a task row: its own, for an HTCondor proc that asks for other
    resources than its proc 0 (the status's ``task_hard``, of running procs, or the
    row's ``req_hard``), else its job's."""
    own = (snap.get("task_hard") or {}).get(row["id"])
    if own and _number(row) in own:
        return own[_number(row)]
    if "req_hard" in row:
        return row["req_hard"]
    return (snap["jobs"].get(row["id"]) or {}).get("hard") or {}


def held_once(snap, row, name):
    """Whether the job of a task row holds its request of ``name`` once, on its master
    queue, not on each slot (its description's ``per_job_requests``; a proc that asks
    for other resources than its proc 0, its own)."""
    own = (snap.get("task_hard") or {}).get(row["id"])
    if own and _number(row) in own:
        return name in ((own.get("per_job") or {}).get(_number(row)) or ())
    return name in ((snap["jobs"].get(row["id"]) or {}).get("per_job") or ())


def _number(row):
    """The task number of a row (1: the one task of a job that is no array)."""
    return 1 if row.get("task") is None else row["task"]


def task_label(row):
    """The ja-task-ID column text of a row."""
    if row.get("task") is not None:
        return str(row["task"])
    tasks = row.get("tasks")
    if not tasks:
        return ""
    return tasks_text(tasks)
