"""The ClassAd views of jobs and machines, shared by both dialects.

Jobs. ``job_ad(spec, task)`` is the ad of one task of a job as the spool
keeps it (``spec`` is the job description, ``task`` its ``model.job.Task``
record or None while it never left the pending state). Job N's task T is
HTCondor's job ``N.(T-1)``: ClusterId is the job id, ProcId the task number
minus one. A job submitted with condor_submit carries the long form of its
original ad under ``spec["condor_ad"]`` (one text for every proc, or a list
with one text per proc); that ad is the base and the state attributes are
laid over it. A Grid Engine job's ad is built from its requests: ``-l
h_vmem`` (or s_vmem, mem_free, virtual_free) times its slots becomes
RequestMemory, the slots of ``-pe`` RequestCpus, and ``-l hostname`` or a
``-q queue@host`` its host; Requirements says the same in ClassAd terms, so
``condor_q -better-analyze`` can explain it. A ``-P`` project is the job's
accounting group (AccountingGroup = ``project.owner``).

JobStatus from the task's neutral state: 1 idle, 2 running, 3 removed, 4
completed, 5 held (any hold, and Grid Engine's error state), 6 transferring
output (never set here), 7 suspended.

Machines. ``machine_ads(host, config, now, ...)`` gives the slot ads of an
execution host from its facts (``HostFacts``: cpus, memory, disk, load,
keyboard idle time) and its condor_config (``config.get(NAME)`` gives
expanded text): static slots ``slot1@host`` ... (NUM_SLOTS, default one per
CPU, resources split evenly), or the slot types of ``SLOT_TYPE_<n>`` /
``NUM_SLOTS_TYPE_<n>`` / ``SLOT_TYPE_<n>_PARTITIONABLE``; a partitionable
slot's claims become dynamic slots ``slot1_1@host`` carved from it. Each ad
carries START, RANK and the values named by ``STARTD_ATTRS`` and ``STARTD_EXPRS``;
Requirements is START (and the resource check of a partitionable slot), or
false while the slot is Matched or Preempting, as HTCondor advertises it.
"""

import enum
import functools
import re
from dataclasses import dataclass

from gridtools.classad import ClassAd, parse, parse_ad
from gridtools.classad.parser import ClassAdSyntaxError

#: the universe of a Grid Engine job in HTCondor's numbering (vanilla)
VANILLA = 5
#: Grid Engine memory requests that become RequestMemory, in order of preference
MEMORY_REQUESTS = ("h_vmem", "s_vmem", "mem_free", "virtual_free", "h_data", "s_data")
#: Grid Engine requests that name the execution host
HOST_REQUESTS = ("hostname", "h")
#: HoldReasonCode of a job held by a user or an operator (HTCondor's UserRequest)
HOLD_CODE_USER = 1
#: HoldReasonCode of a job that failed to start (Grid Engine's error state)
HOLD_CODE_ERROR = 2
_HOLD_REASONS = (("u", "held by the job's owner"), ("o", "held by an operator"),
                 ("s", "held by the system"))


class JobStatus(enum.IntEnum):
    """HTCondor's JobStatus numbers."""
    IDLE = 1
    RUNNING = 2
    REMOVED = 3
    COMPLETED = 4
    HELD = 5
    TRANSFERRING_OUTPUT = 6
    SUSPENDED = 7


def job_status(task=None, job_hold="", deleted=False):
    """The JobStatus of a task record (None: pending, never dispatched)."""
    state = task.state.value if task is not None else "pending"
    if state == "finished":
        return JobStatus.REMOVED if deleted and task.exit_status is None else JobStatus.COMPLETED
    if deleted:
        return JobStatus.REMOVED
    if state == "running":
        return JobStatus.SUSPENDED if task.suspended else JobStatus.RUNNING
    if state == "error" or job_hold or (task is not None and task.hold):
        return JobStatus.HELD
    return JobStatus.IDLE


# ---------------------------------------------------------------- jobs

def job_ad(spec, task=None, number=1, job_hold="", deleted=False, condor=None):
    """The ClassAd of task ``number`` of a job (``task``: its record, or None);
    ``condor``: the job's HTCondor bookkeeping (``model.job.Job.condor``)."""
    ad = _base_ad(spec, number)
    _overlay_state(ad, spec, task, job_hold, deleted)
    if condor:
        _overlay_condor(ad, condor, number)
    return ad


def job_ads(job, numbers=None):
    """The ads of a ``model.job.Job``'s tasks (all of them, or ``numbers``)."""
    numbers = job.numbers() if numbers is None else numbers
    return [job_ad(job.spec, job.tasks.get(n), n, job.hold, job.deleted, job.condor) for n in numbers]


def _base_ad(spec, number):
    text = spec.get("condor_ad")
    if isinstance(text, list):
        ad = _proc_ad(tuple(text), min(number, len(text))) if text else _sge_ad(spec)
    else:
        ad = _parsed_ad(text).copy() if text else _sge_ad(spec)
    ad["ClusterId"] = int(spec["id"])
    ad["ProcId"] = number - 1
    if "owner" in spec:                 # who submitted it, whatever the ad's text claims
        ad["Owner"] = spec["owner"]
    return ad


def _proc_ad(texts, index):
    """The ad of entry ``index`` (1-based) of a list of ad texts: the first is whole,
    each later one is laid over it (it may hold only what differs from the first)."""
    ad = _parsed_ad(texts[0]).copy()
    if index > 1 and texts[index - 1]:
        for name, expr in _parsed_ad(texts[index - 1]).items():
            ad[name] = expr
    return ad


@functools.lru_cache(maxsize=256)
def _parsed_ad(text):
    return parse_ad(text)


def _sge_ad(spec):
    """The ad of a job submitted with qsub (or any job without an original ad)."""
    owner = spec["owner"]
    ad = ClassAd({"MyType": "Job", "TargetType": "Machine", "Owner": owner,
                  "QDate": int(spec.get("submit_time") or 0), "JobUniverse": VANILLA,
                  "Cmd": spec.get("script_name") or spec.get("command") or "",
                  "Arguments": _join_args(spec.get("args") or []),
                  "Iwd": _iwd(spec), "JobPrio": int(spec.get("priority") or 0),
                  "NiceUser": False, "JobBatchName": spec.get("name") or ""})
    _streams(ad, spec)
    slots, memory, hosts = _sge_requests(spec)
    ad["RequestCpus"] = slots
    ad["RequestMemory"] = memory
    ad["RequestDisk"] = 0
    ad["MinHosts"] = ad["MaxHosts"] = 1
    ad["Requirements"] = parse(_sge_requirements(slots, memory, hosts))
    ad["Rank"] = 0.0
    project = spec.get("project")
    if project:
        ad["AcctGroup"] = project
        ad["AcctGroupUser"] = owner
        ad["AccountingGroup"] = f"{project}.{owner}"
    return ad


def _join_args(args):
    from gridtools.formats.condor.argsenv import join_v2
    return join_v2([str(a) for a in args])


def _iwd(spec):
    home = (spec.get("sge_o") or {}).get("HOME") or "/"
    return spec.get("cwd") or home


def _streams(ad, spec):
    """Out, Err and In: the job's paths, or Grid Engine's defaults ``name.o<id>``."""
    def first(key):
        for entry in spec.get(key) or []:
            path = entry[1] if isinstance(entry, (list, tuple)) else entry
            if path:
                return str(path)
        return None
    name, jid = spec.get("name") or "job", spec["id"]
    ad["Out"] = first("stdout") or f"{name}.o{jid}"
    ad["Err"] = ad.eval("Out") if spec.get("join") else (first("stderr") or f"{name}.e{jid}")
    ad["In"] = first("stdin") or "/dev/null"


def _sge_requests(spec):
    """(slots, memory in MB, host patterns) of a Grid Engine job's requests."""
    pe = spec.get("pe")
    slots = _pe_low(pe) if pe else 1
    hard = ((spec.get("resources") or {}).get("hard")) or {}
    memory = 0
    for name in MEMORY_REQUESTS:
        if name in hard:
            memory = _megabytes(hard[name]) * slots
            break
    hosts = [str(hard[n]) for n in HOST_REQUESTS if n in hard]
    queues = list(((spec.get("queues") or {}).get("hard")) or [])
    if queues and all("@" in q and not q.split("@", 1)[1].startswith("@") for q in queues):
        hosts.append("|".join(q.split("@", 1)[1] for q in queues))
    return slots, memory, hosts


def _pe_low(pe):
    rest = pe[1:]
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        return max(1, int(min(lo for lo, _hi in rest[0])))
    return max(1, int(rest[0]))


def _megabytes(text):
    from gridtools.errors import GridError
    from gridtools.formats.values import parse_memory
    try:
        value = parse_memory(str(text))
    except GridError:
        return 0
    if value == float("inf"):
        return 0
    return -(-int(value) // (1024 * 1024))


def _sge_requirements(slots, memory, hosts):
    terms = []
    if memory:
        terms.append("(TARGET.Memory >= RequestMemory)")
    if slots > 1:
        terms.append("(TARGET.Cpus >= RequestCpus)")
    for pattern in hosts:
        terms.append(_host_clause(pattern))
    return " && ".join(terms) if terms else "true"


def _host_clause(pattern):
    """A ClassAd condition that the machine's name matches a host list like ``h1|n*``."""
    alternatives = [p for p in pattern.split("|") if p]
    if all(not any(c in p for c in "*?[") for p in alternatives):
        tests = [f'(TARGET.Machine == "{p}")' for p in alternatives]
        return tests[0] if len(tests) == 1 else "(" + " || ".join(tests) + ")"
    regex = "|".join(_glob_regex(p) for p in alternatives)
    return f'regexp("^({regex})$", TARGET.Machine)'


def _glob_regex(pattern):
    out = []
    for ch in pattern:
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
    return "".join(out)


def _overlay_state(ad, spec, task, job_hold, deleted):
    status = job_status(task, job_hold, deleted)
    qdate = int(spec.get("submit_time") or 0)
    ad["JobStatus"] = int(status)
    entered = qdate
    if task is not None and task.start_time:
        _started(ad, task)
        entered = int(task.start_time)
    if status in (JobStatus.COMPLETED, JobStatus.REMOVED) and task is not None and task.end_time:
        _ended(ad, task)
        entered = int(task.end_time)
    if status is JobStatus.HELD:
        _held(ad, task, job_hold)
    ad["EnteredCurrentStatus"] = entered


def _started(ad, task):
    if not isinstance(ad.eval("JobStartDate"), int):     # the first start, kept from the original ad
        ad["JobStartDate"] = int(task.start_time)
    ad["JobCurrentStartDate"] = int(task.start_time)
    # restarted counts the runs that went back to the queue; a waiting task is not in one
    ad["NumJobStarts"] = task.restarted + int(task.state.value in ("running", "finished"))
    if task.state.value == "running" and task.granted:
        queue, host = task.granted[0][0], task.granted[0][1]
        ad["RemoteHost"] = f"{queue}@{host}"


def _ended(ad, task):
    ad["CompletionDate"] = int(task.end_time)
    ad["RemoteWallClockTime"] = float(max(task.end_time - task.start_time, 0.0))
    code = task.exit_status
    if code is None:
        return
    if code > 128:
        ad["ExitBySignal"] = True
        ad["ExitSignal"] = code - 128
    else:
        ad["ExitBySignal"] = False
        ad["ExitCode"] = code


#: HoldReasonCode of a job held by one of its own policy expressions (JobPolicy)
HOLD_CODE_POLICY = 3


def _overlay_condor(ad, condor, number):
    """What the daemon keeps of an HTCondor job beyond its tasks' states: the reason of
    a hold, completions, attributes set by condor_qedit, removal."""
    for name, text in (condor.get("edits") or {}).items():
        try:
            ad[name] = parse(text)
        except ClassAdSyntaxError:
            continue
    mine = (condor.get("tasks") or {}).get(str(number)) or {}
    if mine.get("completions"):
        ad["NumJobCompletions"] = int(mine["completions"])
    hold = mine.get("hold") or condor.get("hold")
    if hold and ad.eval("JobStatus") == JobStatus.HELD:
        ad["HoldReason"], ad["HoldReasonCode"], ad["HoldReasonSubCode"] = hold[0], int(hold[1]), int(hold[2])
        if len(hold) > 3:
            ad["EnteredCurrentStatus"] = int(hold[3])
    if mine.get("removed") and ad.eval("JobStatus") in (JobStatus.COMPLETED, JobStatus.IDLE):
        ad["JobStatus"] = int(JobStatus.REMOVED)
    reason = mine.get("remove_reason") or condor.get("remove_reason")
    if reason and ad.eval("JobStatus") == JobStatus.REMOVED:
        ad["RemoveReason"] = reason


def _held(ad, task, job_hold):
    if task is not None and task.state.value == "error":
        ad["HoldReason"] = task.error_reason or "the job failed to start"
        ad["HoldReasonCode"] = HOLD_CODE_ERROR
        ad["HoldReasonSubCode"] = 0
        return
    if "HoldReason" in ad:               # the original ad says why (submitted on hold)
        return
    letters = job_hold + (task.hold if task is not None else "")
    reason = next((text for letter, text in _HOLD_REASONS if letter in letters), "held")
    ad["HoldReason"] = reason
    ad["HoldReasonCode"] = HOLD_CODE_USER
    ad["HoldReasonSubCode"] = 0


# ---------------------------------------------------------------- machines

@dataclass(frozen=True, slots=True)
class HostFacts:
    """What an execution host is and how busy it is now."""
    name: str                     # the host name (Machine)
    cpus: int = 1
    memory: int = 0               # MB
    disk: int = 0                 # free KB where jobs run
    load_avg: float = 0.0         # the host's load average
    condor_load_avg: float = 0.0  # the part of it from jobs of this cell
    keyboard_idle: int = 0        # seconds since the last keyboard or mouse use
    console_idle: int | None = None
    arch: str = "X86_64"
    opsys: str = "LINUX"
    uid_domain: str = ""
    filesystem_domain: str = ""

    @classmethod
    def from_load(cls, name, load, disk=0, keyboard_idle=0, condor_load_avg=0.0):
        """Facts from Grid Engine load values (``exec.load.sample()``'s names)."""
        from gridtools.formats.values import parse_memory
        total = load.get("mem_total")
        memory = int(parse_memory(str(total)) // (1024 * 1024)) if total is not None else 0
        return cls(name, cpus=int(load.get("num_proc") or 1), memory=memory, disk=int(disk),
                   load_avg=float(load.get("load_avg") or 0.0), condor_load_avg=condor_load_avg,
                   keyboard_idle=int(keyboard_idle))


@dataclass(frozen=True, slots=True)
class Claim:
    """A job holding a slot: who it is for and what it was granted."""
    job: str                      # "cluster.proc"
    owner: str                    # the job's Owner
    user: str                     # its accounting name (AccountingGroup, else Owner)
    rank: float = 0.0             # the slot's Rank of the job when it was claimed
    start: float = 0.0            # when the job started on the slot
    cpus: int = 1                 # what a dynamic slot carves from its partitionable slot
    memory: int = 0               # MB
    disk: int = 0                 # KB


@dataclass(frozen=True, slots=True)
class SlotView:
    """A slot's state and activity (the startd's words) and when they began."""
    state: str = "Unclaimed"
    activity: str = "Idle"
    entered_state: float = 0.0
    entered_activity: float = 0.0


@dataclass(frozen=True, slots=True)
class SlotType:
    """One slot layout: its resources and how many slots have it."""
    number: int                   # n of SLOT_TYPE_<n> (0: the default layout)
    count: int
    cpus: object = "auto"         # int, fraction (float <= 1) or "auto"
    memory: object = "auto"       # MB, fraction or "auto"
    disk: object = "auto"         # KB, fraction or "auto"
    partitionable: bool = False


def slot_types(config, cpus):
    """The slot layout of a host from its configuration."""
    found = []
    for n in range(1, 100):
        count = _int(config.get(f"NUM_SLOTS_TYPE_{n}"), 0)
        if count <= 0:
            continue
        spec = _resources(config.get(f"SLOT_TYPE_{n}") or "auto")
        part = _truth(config.get(f"SLOT_TYPE_{n}_PARTITIONABLE"))
        found.append(SlotType(n, count, partitionable=part, **spec))
    if found:
        return found
    return [SlotType(0, max(1, _int(config.get("NUM_SLOTS"), cpus)))]


def _resources(text):
    """cpus/memory/disk of a SLOT_TYPE_<n> value ("cpus=2, memory=50%", "1/4", "auto")."""
    items = [p.strip() for p in re.split(r"[,;]", text) if p.strip()]
    if len(items) == 1 and "=" not in items[0]:
        share = _amount(items[0], 1)
        return {"cpus": share, "memory": share, "disk": share}
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        key = key.strip().lower()
        if key in ("cpus", "cpu", "c"):
            out["cpus"] = _amount(value, 0)
        elif key in ("memory", "ram", "mem", "m"):
            out["memory"] = _amount(value, 2)
        elif key in ("disk", "d"):
            out["disk"] = _amount(value, 1)
    return out


def _amount(text, power):
    """A fraction (``25%``, ``1/4``), "auto", or an absolute amount in 1024**power bytes."""
    t = text.strip()
    if not t or t.lower() == "auto":
        return "auto"
    if t.endswith("%"):
        return float(t[:-1]) / 100.0
    if "/" in t:
        num, _, den = t.partition("/")
        return float(num) / float(den)
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)B?", t, re.IGNORECASE)
    if not m:
        return "auto"
    scale = {"": power, "K": 1, "M": 2, "G": 3, "T": 4}[m.group(2).upper()]
    value = float(m.group(1)) * 1024 ** scale / 1024 ** power if power else float(m.group(1))
    return int(value)


@dataclass(frozen=True, slots=True)
class _Layout:
    name: str
    slot_id: int
    cpus: int
    memory: int
    disk: int
    partitionable: bool


def layout(host, config):
    """Name, id and resources of every (non-dynamic) slot of a host."""
    types = slot_types(config, host.cpus)
    total = sum(t.count for t in types)
    out, slot_id = [], 0
    for kind in types:
        for _ in range(kind.count):
            slot_id += 1
            out.append(_Layout(f"slot{slot_id}@{host.name}", slot_id,
                               _share(kind.cpus, host.cpus, total, minimum=1),
                               _share(kind.memory, host.memory, total),
                               _share(kind.disk, host.disk, total), kind.partitionable))
    return out


def _share(spec, total, count, minimum=0):
    if spec == "auto":
        return max(minimum, total // count)
    if isinstance(spec, float) and spec <= 1.0:
        return max(minimum, int(total * spec))
    return int(spec)


def machine_ads(host, config, now, views=None, claims=None):
    """The slot ads of an execution host, dynamic slots after their partitionable slot.

    ``views``: slot name -> SlotView (missing: Unclaimed/Idle since ``now``);
    ``claims``: slot name -> Claim. A claim on ``slotN_M@host`` is a dynamic
    slot carved from partitionable slot N."""
    views, claims = views or {}, claims or {}
    policy = _policy_texts(config)
    rows = []
    for lay in layout(host, config):
        dynamic = _dynamic_of(lay, host, claims)
        used = [sum(getattr(c, k) for _n, c in dynamic) for k in ("cpus", "memory", "disk")]
        rows.append((lay, None, max(lay.cpus - used[0], 0), max(lay.memory - used[1], 0),
                     max(lay.disk - used[2], 0)))
        for index, (name, claim) in enumerate(dynamic, 1):
            dyn = _Layout(name, lay.slot_id, claim.cpus, claim.memory, claim.disk, False)
            rows.append((dyn, lay, claim.cpus, claim.memory, claim.disk))
    busy = [r[0].name for r in rows if _view(views, r[0].name, now).activity in ("Busy", "Retiring")]
    ads = []
    for order, (lay, parent, cpus, memory, disk) in enumerate(rows):
        load = _slot_load(host, order, len(rows), lay.name, busy)
        ads.append(slot_ad(host, lay, cpus, memory, disk, _view(views, lay.name, now), claims.get(lay.name),
                           policy, now, load, total_slots=len(rows), parent=parent))
    return ads


def _view(views, name, now):
    return views.get(name) or SlotView("Unclaimed", "Idle", now, now)


def _dynamic_of(lay, host, claims):
    if not lay.partitionable:
        return []
    prefix = f"slot{lay.slot_id}_"
    found = [(name, c) for name, c in claims.items()
             if name.startswith(prefix) and name.endswith(f"@{host.name}")]
    return sorted(found, key=lambda item: _dyn_number(item[0]))


def _dyn_number(name):
    m = re.match(r"slot\d+_(\d+)@", name)
    return int(m.group(1)) if m else 0


def _slot_load(host, order, count, name, busy):
    """(LoadAvg, CondorLoadAvg) of one slot: owner load 1.0 per slot in order, job load
    shared among the busy slots."""
    owner = max(host.load_avg - host.condor_load_avg, 0.0)
    own = min(max(owner - order, 0.0), 1.0) if order < count - 1 else max(owner - order, 0.0)
    condor = host.condor_load_avg / len(busy) if name in busy and busy else 0.0
    return own + condor, condor


#: machine policy expressions published in every slot ad: (config name, attribute, default)
PUBLISHED_POLICY = (("START", "Start", "true"), ("RANK", "Rank", "0.0"))


def policy_expression(config, attr):
    """The expression of policy attribute ``attr`` (Start, Rank) in the slot ads of a
    host with ``config`` (before any STARTD_FACTS_FILE overlay)."""
    return _expr(_policy_texts(config)[0][attr])


def _policy_texts(config):
    texts = {}
    for knob, attr, default in PUBLISHED_POLICY:
        value = config.get(knob)
        texts[attr] = value if value is not None and value.strip() else default
    names = " ".join(config.get(knob) or "" for knob in ("STARTD_ATTRS", "STARTD_EXPRS"))
    extra = list(dict.fromkeys(n for n in re.split(r"[,\s]+", names) if n))
    return texts, [(n, config.get(n)) for n in extra if config.get(n) is not None]


def slot_ad(host, lay, cpus, memory, disk, view, claim, policy, now, load=(0.0, 0.0),
            total_slots=1, parent=None):
    """The ad of one slot (see ``machine_ads``)."""
    texts, extra = policy
    ad = ClassAd({"MyType": "Machine", "TargetType": "Job", "Name": lay.name, "Machine": host.name,
                  "SlotID": lay.slot_id, "Arch": host.arch, "OpSys": host.opsys,
                  "Cpus": cpus, "Memory": memory, "Disk": disk, "SlotWeight": cpus,
                  "TotalCpus": host.cpus, "TotalMemory": host.memory, "TotalDisk": host.disk,
                  "TotalSlots": total_slots, "LoadAvg": load[0], "CondorLoadAvg": load[1],
                  "TotalLoadAvg": host.load_avg, "TotalCondorLoadAvg": host.condor_load_avg,
                  "KeyboardIdle": host.keyboard_idle,
                  "ConsoleIdle": host.keyboard_idle if host.console_idle is None else host.console_idle,
                  "State": view.state, "Activity": view.activity,
                  "EnteredCurrentState": int(view.entered_state),
                  "EnteredCurrentActivity": int(view.entered_activity), "CurrentTime": int(now),
                  "HasFileTransfer": True, "UidDomain": host.uid_domain or host.name,
                  "FileSystemDomain": host.filesystem_domain or host.name})
    _slot_kind(ad, lay, parent)
    for attr in ("Start", "Rank"):
        ad[attr] = _expr(texts[attr])
    ad["Requirements"] = parse(_requirements(view.state, lay.partitionable))
    for name, text in extra:
        ad[name] = _expr(text)
    if claim is not None:
        _claim_attrs(ad, claim)
    return ad


def _slot_kind(ad, lay, parent):
    if parent is not None:
        ad["SlotType"] = "Dynamic"
        ad["DynamicSlot"] = True
        ad["ParentSlotName"] = parent.name
    elif lay.partitionable:
        ad["SlotType"] = "Partitionable"
        ad["PartitionableSlot"] = True
    else:
        ad["SlotType"] = "Static"


#: a partitionable slot also checks that the job's requests fit what is left
_FITS = ("(MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus && TARGET.RequestMemory <= MY.Memory"
         " && TARGET.RequestDisk <= MY.Disk)")


def _requirements(state, partitionable):
    if state in ("Matched", "Preempting"):
        return "false"
    return f"START && {_FITS}" if partitionable else "START"


def _claim_attrs(ad, claim):
    ad["RemoteUser"] = claim.user
    ad["RemoteOwner"] = claim.owner
    ad["AccountingGroup"] = claim.user
    ad["JobId"] = claim.job
    ad["GlobalJobId"] = claim.job
    ad["JobStart"] = int(claim.start)
    ad["CurrentRank"] = float(claim.rank)
    ad["TotalJobRunTime"] = max(ad.eval("CurrentTime") - int(claim.start), 0)


def _expr(text):
    """A configuration value as a ClassAd expression, or as a string when it is none."""
    try:
        return parse(text)
    except ClassAdSyntaxError:
        return text.strip()


def _int(text, default):
    try:
        return int(str(text).strip()) if text is not None and str(text).strip() else default
    except ValueError:
        return default


def _truth(text):
    return text is not None and text.strip().lower() in ("true", "yes", "t", "y", "1")


def with_view(ad, view):
    """A copy of a slot ad with another state and activity (used by the startd's steps)."""
    out = ad.copy()
    out["State"] = view.state
    out["Activity"] = view.activity
    out["EnteredCurrentState"] = int(view.entered_state)
    out["EnteredCurrentActivity"] = int(view.entered_activity)
    part = out.eval("PartitionableSlot") is True
    out["Requirements"] = parse(_requirements(view.state, part))
    return out


__all__ = ["JobStatus", "job_status", "job_ad", "job_ads", "HostFacts", "Claim", "SlotView",
           "SlotType", "slot_types", "layout", "machine_ads", "slot_ad", "with_view"]
