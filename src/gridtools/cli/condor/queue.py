"""The job queue as the HTCondor commands see it: procs, their states, their ads.

Every gridtools job is a cluster: job N's task T is proc ``N.(T-1)``, a
Grid Engine job included. ``procs(snap)`` turns the published status
(``cli.status.load``) into ``Proc`` records without building a single
ClassAd, which is what the default views of condor_q need; ``ads`` builds
the ads of the procs that need them, lazily: the caller's own jobs (and
every job, for root) from their stored description and state, other users'
jobs from what the status publishes (no environment, paths or arguments,
as qstat -j keeps them private) and, for a job submitted as an ad, from the
text of that ad the daemon publishes for every user (``published_ad``: what
its owner's ad says but its private attributes). A proc's JobStatus is always the one of
the status the procs were read from, even in an ad built from a stored
state the daemon has already moved on (it writes a job's state before it
publishes the status that shows it): so every view of one condor_q agrees,
and a later condor_q never shows an earlier state. The one exception is a
hold the HTCondor side noted (``_held_since``), whose event is in the job's
log before the status shows it: once its ad is built from such a state, the
proc is held, with that hold's reason. Finished procs are shown only while their
``LeaveJobInQueue`` keeps them (until ``condor_rm -forcex``).

Selections follow condor_q and condor_rm: ``C`` (a cluster), ``C.P``, a user
name, ``-constraint`` expressions; the caller's own jobs unless users or
ids are named or ``-allusers`` is given (root sees everyone's).
"""

import posix

from gridtools.errors import InputError

#: JobStatus numbers and their condor_q letters
IDLE, RUNNING, REMOVED, COMPLETED, HELD, TRANSFERRING, SUSPENDED = 1, 2, 3, 4, 5, 6, 7
STATUS_LETTER = {IDLE: "I", RUNNING: "R", REMOVED: "X", COMPLETED: "C", HELD: "H",
                 TRANSFERRING: ">", SUSPENDED: "S"}
#: qstat state letters of a task that holds a slot (``spool.rows.running_state``: d, S, T,
#: h, then s, r or Rr; t while it is being started): none of a waiting task's q, E or z
_WAITING_LETTERS = frozenset("qEz")
#: the letters of a suspension (by qmod -sj, by its queue, by a threshold)
_SUSPENDED_LETTERS = frozenset("sST")


def holds_slot(state):
    """True for the qstat state of a task that runs on a slot (suspended, being deleted
    or held from the Grid Engine side included)."""
    return bool(state) and _WAITING_LETTERS.isdisjoint(state)


#: why a proc held by Grid Engine hold letters is held: (letter, reason, code)
_GE_HOLDS = (("u", "held by the job's owner", 1), ("o", "held by an operator", 1),
             ("s", "held by the system", 1))


def me():
    import pwd
    try:
        return pwd.getpwuid(posix.getuid()).pw_name
    except KeyError:
        return str(posix.getuid())


#: what a Proc works out from its published row when first asked for (_fill)
_LAZY = ("start", "host", "prio", "cmd", "args", "universe", "slots", "is_condor", "wall", "hosts", "size",
         "image")


class Proc:
    """One proc of the queue, from the published status (a plain class: condor_q makes
    10,000 of them and must not pay for importing dataclasses). What the batch view
    does not show (start, host, prio, cmd, args, universe, slots, is_condor, the
    seconds of its earlier runs (wall), and the hold of a held proc) is read from the
    published row when first asked for."""

    __slots__ = ("cluster", "proc", "owner", "status", "qdate", "batch", "_hold", "_source") + _LAZY

    def __init__(self, cluster, proc, owner, status, qdate, start=0.0, host="", prio=0, cmd="",
                 args=(), batch=None, universe=5, hold=None, slots=1, is_condor=False, wall=0.0, size=None,
                 image=0):
        self.cluster, self.proc, self.owner, self.status = cluster, proc, owner, status
        self.qdate, self.batch = qdate, batch
        self.start, self.host, self.prio, self.cmd = start, host, prio, cmd
        self.args, self.universe, self.slots, self.is_condor = args, universe, slots, is_condor
        self.wall, self.hosts, self.size, self.image = wall, None, size, image
        self._hold = hold           # [reason, code, subcode(, since)] of a held proc
        self._source = None         # (row, job facts, condor facts, task number, snapshot) when read lazily

    @classmethod
    def published(cls, row, info, cinfo, number, status, snap=None):
        proc = cls.__new__(cls)
        proc.cluster, proc.proc, proc.owner, proc.status = row["id"], number - 1, info["owner"], status
        proc.qdate, proc.batch = float(info.get("submit_time") or 0.0), cinfo.get("batch")
        proc._hold, proc._source = None, (row, info, cinfo, number, snap)
        return proc

    def _fill(self):
        row, info, cinfo, number, snap = self._source
        self.wall = float(((cinfo.get("tasks") or _NO_FACTS).get(str(number)) or _NO_FACTS).get("wall") or 0.0)
        running = holds_slot(row["state"])
        own = cinfo.get("procs")
        own = own.get(str(number)) if own else None
        args = _private_args(snap, row["id"], number) if snap is not None else None
        self.start = float(row["time"]) if running else 0.0
        mine = (cinfo.get("tasks") or _NO_FACTS).get(str(number)) or _NO_FACTS
        self.host = ((mine.get("slot") or (row.get("queue") or "").partition("@")[2]) if running else "")
        self.hosts = mine.get("slots") if running else None     # a parallel universe job's nodes
        self.prio = int((cinfo if own is None else own).get("prio") or 0)
        self.cmd = cinfo.get("cmd") or info.get("name") or ""
        self.args, self.universe = (list(args) if args else []), int(cinfo.get("universe") or 5)
        self.slots, self.is_condor = int(row.get("slots") or 1), bool(cinfo.get("ads"))
        self.size, self.image = mine.get("size"), int(cinfo.get("image") or 0)   # (condor_q's SIZE)

    def __getattr__(self, name):
        """Only called for an attribute not set yet: a lazy one is read from the row."""
        if name in _LAZY and self._source is not None:
            self._fill()
            return object.__getattribute__(self, name)
        raise AttributeError(name)

    @property
    def hold(self):
        if self._hold is None and self._source is not None and self.status == HELD:
            row, _info, cinfo, number, _snap = self._source
            self._hold = _hold_of(row, cinfo, number)
        return self._hold

    @hold.setter
    def hold(self, value):
        self._hold = value

    @property
    def id(self):
        return f"{self.cluster}.{self.proc}"

    @property
    def number(self):
        return self.proc + 1


def row_numbers(row):
    """The task numbers a qstat row stands for (its task, or its ranges; 1 for a job
    without tasks)."""
    if row.get("task") is not None:
        return [row["task"]]
    tasks = row.get("tasks")
    if not tasks:
        return [1]
    return [n for first, last, step in tasks for n in range(first, last + 1, step)]


def _status(state, info, number, hold=None, mine=None):
    """The JobStatus of task ``number`` of a qstat row in state ``state`` (None: not
    shown, it left the queue), from what the letters say of the task: a task on a
    slot is removed (X) while being deleted, else suspended (S) while suspended for
    any reason, else running (R), also when held from the Grid Engine side, as qhold
    of a running task keeps it running (the hold keeps it from being started again)
    unless a hold is vacating it (``_vacating``). A waiting task is held (H) in the
    error state or when hold letters (``hold``, the row's u/o/s; None when unknown:
    its h) hold it; one that waits only for its predecessors (-hold_jid, -hold_jid_ad)
    is idle, as HTCondor shows a node job waiting for its DAG parents. ``info``: the
    cluster's HTCondor facts; ``mine``: the task's own bookkeeping (else read from
    ``info``)."""
    if state == "z":
        kept = set(info.get("kept") or ())
        if mine is None:
            mine = (info.get("tasks") or _NO_FACTS).get(str(number)) or _NO_FACTS
        if number not in kept or mine.get("gone"):
            return None
        return REMOVED if mine.get("removed") else COMPLETED
    if holds_slot(state):
        if "d" in state:
            return REMOVED
        if not _SUSPENDED_LETTERS.isdisjoint(state):
            return SUSPENDED
        if "h" in state and _vacating(info, number, mine):
            return HELD
        return RUNNING
    if "d" in state:
        return REMOVED
    if state.startswith("E"):
        return HELD
    if "h" in state and (hold is None or hold):
        return HELD
    return IDLE


def _vacating(info, number, mine=None):
    """True when a running task held by the hold letters is being stopped by a hold:
    condor_hold, or one of its policies, noted the hold in its bookkeeping (a task held
    only by qhold runs on, without one)."""
    if mine is None:
        mine = (info.get("tasks") or _NO_FACTS).get(str(number)) or _NO_FACTS
    return bool(mine.get("hold"))


def _hold_of(row, info, number):
    """[reason, code, subcode(, since)] of a held proc: the hold the daemon noted for the
    task or its cluster (condor_hold, a policy, a submission on hold, a failed start),
    while the hold letter such a hold sets (u) still holds it, else the hold its
    Grid Engine hold letters make."""
    letters = row.get("hold")
    mine = (info.get("tasks") or _NO_FACTS).get(str(number)) or _NO_FACTS
    failed = row["state"].startswith("E")
    noted = mine.get("hold") or info.get("hold")
    if noted and (failed or letters is None or "u" in letters):
        return list(noted)
    if failed:
        return ["the job failed to start", 6, 0]        # FailedToCreateProcess
    for letter, reason, code in _GE_HOLDS:
        if letter in (letters or "u"):
            return [reason, code, 0]
    return ["held", 1, 0]


_NO_FACTS = {}


def procs(snap, clusters=None):
    """Every Proc in the queue, by cluster and proc (only those of ``clusters``, a set of
    cluster ids, when given)."""
    found = []
    jobs = snap.get("jobs") or _NO_FACTS
    for row in snap.get("rows") or ():
        if clusters is not None and row["id"] not in clusters:
            continue
        info = jobs.get(row["id"])
        if info is None:
            continue
        cinfo = info.get("condor") or _NO_FACTS
        state = row["state"]
        for number in row_numbers(row):
            status = _status(state, cinfo, number, row.get("hold"))
            if status is not None:
                found.append(Proc.published(row, info, cinfo, number, status, snap))
    found.sort(key=_order)
    return found


def private_facts(snap):
    """{job id: private facts} of the jobs of ``snap`` the caller may see all of (its
    own; everyone's for root): from the snapshot when the caller made it from the job
    store, else from the files the daemon publishes for each user (read once)."""
    found = snap.get("private_read")
    if found is None:
        from gridtools.spool import status as spool_status
        jobs, found = snap.get("jobs") or _NO_FACTS, {}
        for uid, facts in spool_status.read_private(posix.getuid()).items():
            for job_id, mine in facts.items():
                if (jobs.get(job_id) or _NO_FACTS).get("uid") == uid:     # (see read_private)
                    found[job_id] = mine
        found.update(snap.get("private") or ())
        snap["private_read"] = found
    return found


def _private_args(snap, cluster, number):
    """The arguments of a proc, when the caller may see them (else None)."""
    mine = private_facts(snap).get(cluster)
    if mine is None:
        return None
    own = mine.get("procs")
    own = own.get(str(number)) if own else None
    return own if own is not None else mine.get("args")


def _order(proc):
    return proc.cluster, proc.proc


# ---------------------------------------------------------------- selecting

class Selection:
    """Which procs a command names: ids, users, constraints, -allusers."""

    def __init__(self):
        self.clusters = set()
        self.ids = set()              # (cluster, proc)
        self.users = []
        self.constraints = []
        self.allusers = False

    @property
    def named(self):
        return bool(self.clusters or self.ids or self.users)

    def add_word(self, word, owners=False):
        """A cluster, cluster.proc or user name from the command line. ``owners``: a word
        that is no whole job id is a user name (condor_q's way: ``1.5.3`` names an owner),
        else one that starts with a number is refused."""
        head, dot, tail = word.partition(".")
        if head.isdigit() and (not dot or tail.isdigit()):
            if dot:
                self.ids.add((int(head), int(tail)))
            else:
                self.clusters.add(int(head))
        elif head.lstrip("-").isdigit() and not owners:
            raise InputError(f"Invalid cluster # from {word}.")
        else:
            self.users.append(word)

    def by_name(self, proc):
        """True when the proc is named by an id or a user (or nothing names any)."""
        if not self.named:
            return True
        return proc.cluster in self.clusters or (proc.cluster, proc.proc) in self.ids \
            or proc.owner in self.users

    def visible(self, proc, user):
        """The default restriction of condor_q: the caller's own jobs."""
        return self.allusers or self.named or user == "root" or proc.owner == user


def compile_constraints(texts):
    """The -constraint expressions, parsed in the old ClassAd syntax HTCondor's tools
    read them in (adjacent strings are refused, not joined); InputError naming a bad
    one."""
    from gridtools.classad import parse
    parsed = []
    for text in texts:
        try:
            parsed.append(parse(text, old=True))
        except Exception:  # noqa: BLE001 - any syntax error
            raise InputError(f"Error: Invalid constraint expression: {text}") from None
    return parsed


def matches(ad, constraints):
    for expr in constraints:
        if expr.eval(ad) is not True:
            return False
    return True


def truthy(value):
    return value is True or (type(value) in (int, float) and value != 0)


def matches_all(ad, constraints):
    return all(truthy(expr.eval(ad)) for expr in constraints)


# ---------------------------------------------------------------- ads

class AdSource:
    """The ClassAds of procs, built when first asked for (see the module's docstring)."""

    def __init__(self, snap, user):
        self.snap = snap
        self.user = user
        self.jobs = {}            # cluster -> model Job, or None when only public facts can be had

    def _job(self, cluster):
        if cluster not in self.jobs:
            self.jobs[cluster] = self._read(cluster)
        return self.jobs[cluster]

    def _read(self, cluster):
        from gridtools.model.job import Job
        from gridtools.spool import jobs as jobstore
        info = (self.snap.get("jobs") or {}).get(cluster) or {}
        if self.user != "root" and info.get("owner") != self.user:
            return None
        try:
            spec = jobstore.read_spec(cluster)
            if spec is None:            # submitted a moment ago: the caller's request has it,
                spec = (self.snap.get("unprocessed") or {}).get(cluster)
                # read as the job the daemon took in before anything happened to it (held
                # whole when submitted on hold), which the published procs' statuses correct
                return Job.from_parts(dict(spec), None) if spec is not None else None
            return Job.from_parts(spec, jobstore.read_state(cluster))
        except Exception:  # noqa: BLE001 - unreadable or being written: public facts then
            return None

    def ad(self, proc):
        from gridtools import jobads
        job = self._job(proc.cluster)
        if job is None:
            return public_ad(self.snap, proc)
        ad = jobads.job_ad(job.spec, job.tasks.get(proc.number), proc.number, job.hold, job.deleted, job.condor)
        stored = ad.eval("JobStatus")
        noted = _held_since(job, proc.number) if stored == HELD and proc.status != HELD else None
        if noted is not None:
            proc.status, proc.hold = HELD, noted     # (held since the status was published)
        elif stored != proc.status:
            ad["JobStatus"] = proc.status        # the published status rules (module docstring)
            if stored == HELD:                   # (a Grid Engine hold the published status does not show)
                for name in ("HoldReason", "HoldReasonCode", "HoldReasonSubCode"):
                    if name in ad:
                        del ad[name]
        if proc.status == HELD and proc.hold and not isinstance(ad.eval("HoldReason"), str):
            ad["HoldReason"], ad["HoldReasonCode"], ad["HoldReasonSubCode"] = \
                proc.hold[0], int(proc.hold[1]), int(proc.hold[2])   # (a hold vacating a running task)
        if "@" in proc.host:
            ad["RemoteHost"] = proc.host         # the slot the daemon published
        if proc.hosts:
            ad["RemoteHosts"] = ",".join(proc.hosts)
        rejected(self.snap, proc, ad)
        return ad


def _held_since(job, number):
    """The hold [reason, code, subcode(, since)] the HTCondor side noted for task ``number``
    of ``job`` (a stored state: condor_hold, a job or system policy, a failed start or
    input transfer, a memory limit) while it holds the task (in the error state, or by
    the hold letter such a hold sets, u), else None. The daemon writes such a hold's
    012 event before it publishes the status that shows it, which it may put off a
    moment: a proc its stored state shows so held is held, with that reason, as soon as
    its event is in the log, as HTCondor's schedd shows it."""
    from gridtools.model.job import TaskState
    book = job.condor or _NO_FACTS
    noted = ((book.get("tasks") or _NO_FACTS).get(str(number)) or _NO_FACTS).get("hold") or book.get("hold")
    if not noted:
        return None
    if job.state_of(number) is TaskState.ERROR or "u" in job.holds_of(number):
        return list(noted)
    return None


#: the negotiator's reason for a job it matched to a claimed slot (``sched.matchpass.WAITING``):
#: a match, not a rejection
_PREEMPTING = "waiting for a preempted slot to be vacated"
#: the code of the reason of a job whose matching a pass put off: its owner's matching took
#: the evaluation steps a pass gives one owner (``sched.reasons.Why.OWNER_STEPS``: owner, steps)
_OWNER_STEPS = "owner_steps"


def rejection(snap, cluster):
    """(LastRejMatchTime, LastRejMatchReason) of the idle procs of ``cluster``: when the
    negotiator last passed them over, and why in its words (``sched.negotiator.Why``),
    as the published status says it (the reasons of the last pass, which in the
    negotiator's order negotiates for every idle job), or when a pass in either order
    put their matching off (their owner's matching took the steps a pass gives one
    owner); None when neither did."""
    reasons = (snap.get("reasons") or _NO_FACTS).get(cluster)
    if not reasons:
        return None
    when = (snap.get("negotiator") or _NO_FACTS).get("time")
    for reason in reasons:
        if len(reason) > 2 and reason[0] == _OWNER_STEPS:     # (a pass in either order)
            when = when if type(when) in (int, float) and when else snap.get("time")
            if type(when) in (int, float) and when:
                return int(when), (f"matching the jobs of {reason[1]} took the {reason[2]} ClassAd "
                                   "evaluation steps a cycle gives one owner (OWNER_MATCH_STEPS)")
        if len(reason) > 1 and reason[0] == "negotiator" and reason[1] != _PREEMPTING \
                and type(when) in (int, float) and when:
            return int(when), str(reason[1])
    return None


def rejected(snap, proc, ad):
    """Lay LastRejMatchTime and LastRejMatchReason (``rejection``) over an idle proc's ad."""
    if proc.status == IDLE:
        found = rejection(snap, proc.cluster)
        if found is not None:
            ad["LastRejMatchTime"], ad["LastRejMatchReason"] = found


def _public_spec(info, proc, own_hard=None):
    """A job description holding only what the status publishes of another user's job
    (``own_hard``: the requests of a running proc that asks otherwise than proc 0)."""
    spec = {"id": proc.cluster, "owner": info["owner"], "name": info.get("name") or "",
            "submit_time": info.get("submit_time") or 0, "priority": info.get("priority") or 0,
            "pe": info.get("pe"), "project": info.get("project") or None,
            "resources": {"hard": dict(own_hard if own_hard is not None else info.get("hard") or {})},
            "queues": {"hard": list(info.get("hard_queues") or [])},
            "stdout": [[None, "/dev/null"]], "stderr": [[None, "/dev/null"]]}
    for key in ("submit_host", "uid_domain"):
        if info.get(key):
            spec[key] = info[key]
    return spec


#: what the ad of another user's job submitted as an ad leaves out besides its private
#: parts (``jobads.PRIVATE_ATTRS``) when the daemon published no text of that ad
#: (``published_ad``; a status of an earlier version): what only that ad says (made up
#: from its requests, these could be false); its CPUs and memory are what it asked
#: for (``_condor_requests``)
_OWN_AD_ATTRS = ("RequestCpus", "RequestMemory", "RequestDisk", "Requirements", "Rank", "MinHosts",
                 "MaxHosts", "NiceUser", "JobBatchName")


def _condor_requests(ad, spec):
    """RequestCpus and RequestMemory of a job submitted as an ad, from the requests it
    became (formats.condor.spec: more than one CPU the parallel environment smp, memory
    asked for a mem_free request); absent when they say nothing sure of it."""
    from gridtools import jobads
    pe = spec.get("pe")
    if pe and pe[0] == "smp" and pe[1] == pe[2]:
        ad["RequestCpus"] = int(pe[1])
    elif not pe:
        ad["RequestCpus"] = 1
    memory = spec["resources"]["hard"].get("mem_free")
    if memory is not None and jobads._megabytes(memory) > 0:
        ad["RequestMemory"] = jobads._megabytes(memory)


def published_ad(snap, cluster):
    """The text of the ad cluster ``cluster`` was submitted with as every user sees it
    (or one text for each proc: ``spool.rows.public_ad``), or None: from the snapshot
    when the caller made it from the job store, else from the file the daemon
    published it in (each file read once, when an ad of one of its clusters is first
    asked for: views without ads read none)."""
    found = snap.setdefault("public_ads", {})
    if cluster not in found:
        from gridtools.spool import status as spool_status
        read = snap.setdefault("public_read", set())
        number = cluster // spool_status.BUCKET
        if number in read:
            return None
        read.add(number)
        for key, texts in spool_status.read_public((cluster,)).items():
            found.setdefault(key, texts)
    texts = found.get(cluster)
    if type(texts) is list:
        return texts if texts and type(texts[0]) is str and texts[0] else None
    return texts if type(texts) is str and texts else None


def _public_task(proc, mine):
    """A task record holding what the status publishes of another user's proc (its
    row, and ``run`` of its public bookkeeping ``mine``: ``spool.rows.condor_info``), from
    which its ad gets the run counters, hosts and times its owner's gets; None for a
    proc that has not begun a run."""
    from gridtools.model.job import Task, TaskState
    run = mine.get("run") or _NO_FACTS
    restarted = int(run.get("restarted") or 0)
    if proc.start:
        return Task(proc.number, state=TaskState.RUNNING, start_time=float(proc.start),
                    slots=int(proc.slots or 1), restarted=restarted,
                    suspended="s" if proc.status == SUSPENDED else "")
    if "exit" in run:
        return Task(proc.number, state=TaskState.FINISHED, exit_status=run["exit"],
                    signal=int(run.get("signal") or 0), start_time=float(run.get("start") or 0.0),
                    end_time=float(run.get("end") or 0.0),
                    slots=int(run.get("slots") or 1), restarted=restarted)
    return Task(proc.number, restarted=restarted, start_time=float(run.get("start") or 0.0)) \
        if restarted or mine.get("failed_starts") else None


def public_ad(snap, proc):
    """The ad of another user's proc from the published facts: the text of the ad it was
    submitted with that the daemon publishes (``published_ad``), with what the status
    says of its state laid over it, as over its owner's; what they do not say is
    absent, never made up (see ``jobads.PRIVATE_ATTRS``)."""
    from gridtools import jobads
    from gridtools.classad import ClassAd
    from gridtools.classad.parser import ClassAdSyntaxError
    info = (snap.get("jobs") or {}).get(proc.cluster) or {}
    own = (snap.get("task_hard") or {}).get(proc.cluster) or {}
    spec = _public_spec(info, proc, own.get(proc.number))
    texts = published_ad(snap, proc.cluster) if proc.is_condor else None
    if texts is not None:
        spec["condor_ad"] = texts
    cinfo = info.get("condor") or {}
    mine = (cinfo.get("tasks") or _NO_FACTS).get(str(proc.number)) or _NO_FACTS
    book = {"edits": cinfo.get("edits") or {}, "tasks": {str(proc.number): mine}}
    task = _public_task(proc, mine)
    try:
        ad = jobads.job_ad(spec, task, proc.number, condor=book)
    except ClassAdSyntaxError:          # (a published text that does not parse: the facts alone)
        if texts is None:
            raise
        del spec["condor_ad"]
        texts, ad = None, jobads.job_ad(spec, task, proc.number, condor=book)
    for name in jobads.PRIVATE_ATTRS + (_OWN_AD_ATTRS if proc.is_condor and texts is None else ()):
        if name in ad:
            del ad[name]
    if proc.is_condor and texts is None and proc.universe != jobads.PARALLEL_UNIVERSE:
        _condor_requests(ad, spec)
    if not info.get("submit_host"):         # (a status of an earlier version)
        for name in ("User", "GlobalJobId"):
            del ad[name]
    if ad.eval("JobStatus") != proc.status and "LastJobStatus" in ad:
        del ad["LastJobStatus"]         # (worked out for another status: not known)
    ad["JobStatus"] = proc.status
    ad["JobPrio"] = proc.prio
    ad["JobUniverse"] = proc.universe
    if proc.batch:
        ad["JobBatchName"] = proc.batch
    if proc.start:
        ad["JobCurrentStartDate"] = ad["JobStartDate"] = int(proc.start)
        # the slot the daemon published, else the queue instance (as the owner's ad)
        ad["RemoteHost"] = proc.host if "@" in proc.host or proc._source is None \
            else proc._source[0].get("queue") or proc.host
        if proc.hosts:
            ad["RemoteHosts"] = ",".join(proc.hosts)
        ad["CurrentHosts"] = proc.slots if proc.universe == jobads.PARALLEL_UNIVERSE else 1
        ad["EnteredCurrentStatus"] = int(proc.start)
    elif proc._source is not None and "R" in proc._source[0]["state"]:
        del ad["EnteredCurrentStatus"]          # it ran before: when it came back is not published
    if proc.hold:
        ad["HoldReason"], ad["HoldReasonCode"], ad["HoldReasonSubCode"] = \
            proc.hold[0], int(proc.hold[1]), int(proc.hold[2])
    rejected(snap, proc, ad)
    return ClassAd(ad)
