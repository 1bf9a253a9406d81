"""The ClassAd views of jobs and machines, shared by both dialects.

Jobs: see ``jobads``, whose names this module offers too.

Machines. ``machine_ads(host, config, now, ...)`` gives the slot ads of an
execution host from its facts (``HostFacts``: cpus, memory, disk, load,
keyboard idle time) and its condor_config (``config.get(NAME)`` gives
expanded text): static slots ``slot1@host`` ... (NUM_SLOTS, default one per
CPU, resources split evenly), or the slot types of ``SLOT_TYPE_<n>`` /
``NUM_SLOTS_TYPE_<n>`` / ``SLOT_TYPE_<n>_PARTITIONABLE``; a partitionable
slot's claims become dynamic slots ``slot1_1@host`` carved from it, which it
tells of as HTCondor's startd does (NumDynamicSlots and the ``Child<attr>``
lists, ``_rollup``); every slot publishes what it was given (TotalSlotCpus,
TotalSlotMemory, TotalSlotDisk). Each ad
carries fixed Mips and KFlops (``SLOT_MIPS``, ``SLOT_KFLOPS``), START, RANK
and the values named by ``STARTD_ATTRS`` and ``STARTD_EXPRS``;
Requirements is START (and the resource check of a partitionable slot), or
false while the slot is Matched or Preempting, as HTCondor advertises it.
"""

import re
from dataclasses import dataclass, replace

from gridtools.classad import ClassAd, parse
from gridtools.formats import condor as condor_format
from gridtools.classad.parser import ClassAdSyntaxError
from gridtools.jobads import (  # noqa: F401  (offered here too)
    _HOLD_REASONS, HOLD_CODE_ERROR, HOLD_CODE_POLICY, HOLD_CODE_USER, HOST_REQUESTS, MEMORY_REQUESTS, VANILLA,
    JobStatus, _overlay_condor, job_ad, job_ads, job_status,
)

# ---------------------------------------------------------------- machines

@dataclass(frozen=True, slots=True)
class HostFacts:
    """What an execution host is and how busy it is now."""
    name: str                     # the host name (Machine)
    cpus: int = 1
    memory: int = 0               # MB
    disk: int = 0                 # free KB where jobs run
    load_avg: float = 0.0         # the host's 1-minute load average (HTCondor's LoadAvg, TotalLoadAvg)
    condor_load_avg: float = 0.0  # the part of it from jobs of this cell
    keyboard_idle: int = 0        # seconds since the last keyboard or mouse use
    console_idle: int | None = None
    arch: str = "X86_64"
    opsys: str = "LINUX"
    uid_domain: str = ""
    filesystem_domain: str = ""
    gpus: int = 0                 # its GPUs (the ``gpu`` consumable of its complex_values)
    resources: tuple = ()         # ((name, amount), ...): its other countable consumables
    job_loads: tuple = ()         # ((job "cluster.proc", its measured load), ...); none: not measured

    @classmethod
    def from_load(cls, name, load, disk=0, keyboard_idle=0, condor_load_avg=0.0, gpus=0):
        """Facts from Grid Engine load values (``exec.load.sample()``'s names): the load
        average is the 1-minute one (``load_short``; ``load_avg``, Grid Engine's 5-minute
        one, where a host reports no other), as HTCondor's startd reads it."""
        from gridtools.formats.values import parse_memory
        total = load.get("mem_total")
        memory = int(parse_memory(str(total)) // (1024 * 1024)) if total is not None else 0
        return cls(name, cpus=int(load.get("num_proc") or 1), memory=memory, disk=int(disk),
                   load_avg=short_load(load), condor_load_avg=condor_load_avg,
                   keyboard_idle=int(keyboard_idle), gpus=gpus)


def short_load(load):
    """The 1-minute load average of a host's load values (``load_short``, else
    ``load_avg``): what HTCondor's startd publishes as LoadAvg (its sysapi reads the
    first figure of /proc/loadavg), where Grid Engine's ``load_avg`` is the 5-minute one."""
    value = load.get("load_short")
    return float(value if value is not None else load.get("load_avg") or 0.0)


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
    gpus: int = 0
    resources: tuple = ()         # ((name, amount), ...) of the host's other resources
    job_user: str = ""            # the job's User (owner@UID_DOMAIN): RemoteUser and RemoteOwner
    group: str = ""               # the job's AccountingGroup ("": none)
    global_job_id: str = ""       # the job's GlobalJobId (schedd#cluster.proc#QDate)
    gpu_ids: tuple = ()           # the host's GPU device indices the job holds (daemon.devices)


@dataclass(frozen=True, slots=True)
class SlotView:
    """A slot's state and activity (the startd's words) and when they began."""
    state: str = "Unclaimed"
    activity: str = "Idle"
    entered_state: float = 0.0
    entered_activity: float = 0.0
    last_checkpoint: float = 0.0      # LastPeriodicCheckpoint while a job runs (0: none)


@dataclass(frozen=True, slots=True)
class SlotType:
    """One slot layout: its resources and how many slots have it."""
    number: int                   # n of SLOT_TYPE_<n> (0: the default layout)
    count: int
    cpus: object = "auto"         # int, fraction (float <= 1) or "auto"
    memory: object = "auto"       # MB, fraction or "auto"
    disk: object = "auto"         # KB, fraction or "auto"
    partitionable: bool = False
    gpus: object = "auto"         # int, fraction or "auto"


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
        return {"cpus": share, "memory": share, "disk": share, "gpus": share}
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
        elif key in ("gpus", "gpu"):
            out["gpus"] = _amount(value, 0)
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
    gpus: int = 0
    resources: tuple = ()         # ((name, amount), ...): its share of the host's others
    gpu_ids: tuple = ()           # the device indices of its GPUs (AssignedGPUs)


def layout(host, config):
    """Name, id and resources of every (non-dynamic) slot of a host; its GPUs are the
    host's devices in order, the first slot's first (as HTCondor's startd hands them
    out to its slots)."""
    types = slot_types(config, host.cpus)
    total = sum(t.count for t in types)
    out, slot_id, gpus_left = [], 0, host.gpus
    left = dict(host.resources)
    for kind in types:
        for _ in range(kind.count):
            slot_id += 1
            gpus = min(gpus_left, _gpu_share(kind.gpus, host.gpus, total, slot_id))
            first = host.gpus - gpus_left
            gpus_left -= gpus
            mine = []
            for name, amount in host.resources:
                share = min(left[name], _gpu_share("auto", amount, total, slot_id))
                left[name] -= share
                mine.append((name, share))
            out.append(_Layout(f"slot{slot_id}@{host.name}", slot_id,
                               _share(kind.cpus, host.cpus, total, minimum=1),
                               _share(kind.memory, host.memory, total),
                               _share(kind.disk, host.disk, total), kind.partitionable, gpus,
                               tuple(mine), tuple(range(first, first + gpus))))
    return out


def _gpu_share(spec, total, count, slot_id):
    """The GPUs (or other countable resource) of slot ``slot_id`` (1, 2, ...) of
    ``count``: an even share of ``total`` ("auto"), the first slots taking one more
    while the rest lasts; or its type's own."""
    if spec == "auto":
        return total // count + (1 if slot_id <= total % count else 0)
    return _share(spec, total, count)


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
        used = [sum(getattr(c, k) for _n, c in dynamic) for k in ("cpus", "memory", "disk", "gpus")]
        taken = {}
        for _n, c in dynamic:
            for res, amount in c.resources:
                taken[res] = taken.get(res, 0) + amount
        rest = tuple((res, max(amount - taken.get(res, 0), 0)) for res, amount in lay.resources)
        given = _dynamic_gpu_ids(lay, dynamic)
        left = tuple(i for i in lay.gpu_ids if not any(i in ids for ids in given))
        rows.append((replace(lay, gpu_ids=left), None, max(lay.cpus - used[0], 0),
                     max(lay.memory - used[1], 0), max(lay.disk - used[2], 0), max(lay.gpus - used[3], 0), rest))
        for (name, claim), ids in zip(dynamic, given):
            dyn = _Layout(name, lay.slot_id, claim.cpus, claim.memory, claim.disk, False, claim.gpus,
                          claim.resources, ids)
            rows.append((dyn, lay, claim.cpus, claim.memory, claim.disk, claim.gpus, claim.resources))
    loads = _slot_loads(host, rows, [_view(views, r[0].name, now) for r in rows], claims)
    ads, children = [], {}
    for (lay, parent, cpus, memory, disk, gpus, resources), load in zip(rows, loads):
        ad = slot_ad(host, lay, cpus, memory, disk, _view(views, lay.name, now), claims.get(lay.name),
                     policy, now, load, total_slots=len(rows), parent=parent, gpus=gpus, resources=resources)
        ads.append(ad)
        if parent is not None:
            children.setdefault(parent.name, []).append((lay.name, ad))
    extra = None
    for (lay, parent, *_rest), ad in zip(rows, ads):
        if lay.partitionable and parent is None:
            if extra is None:
                extra = re.split(r"[,\s]+", config.get("STARTD_PARTITIONABLE_SLOT_ATTRS") or "")
            _rollup(ad, sorted(children.get(lay.name, ())), extra)
    return ads


#: the attributes of its dynamic slots a partitionable slot publishes as lists
#: ``Child<name>`` (HTCondor's Resource::publishDynamicChildSummaries), besides the
#: host's other resources (GPUs ...) and those STARTD_PARTITIONABLE_SLOT_ATTRS names
CHILD_ATTRS = ("Name", "DSlotId", "CurrentRank", "RemoteUser", "RemoteOwner", "AccountingGroup", "State",
               "Activity", "EnteredCurrentState", "RetirementTimeRemaining", "Cpus", "Memory", "Disk")


def _rollup(ad, children, extra=()):
    """Publish in partitionable slot ``ad`` what HTCondor's startd rolls up from its
    dynamic slots ``children`` ((name, ad) pairs): NumDynamicSlots,
    PslotRollupInformation, and for each attribute of CHILD_ATTRS, of the resources
    of MachineResources and of ``extra`` (each name once, whatever its case, in
    the order of their names) ``Child<name>``, the list of its values in the
    dynamic slots (by slot name; undefined where one lacks it): empty lists while
    it has none."""
    ad["NumDynamicSlots"] = len(children)
    ad["PslotRollupInformation"] = True
    names = {}
    resources = ad.eval("MachineResources")
    more = resources.split() if isinstance(resources, str) else ()
    for name in (*CHILD_ATTRS, *more, *extra):
        if name:
            names.setdefault(name.lower(), name)
    for key in sorted(names):
        name = names[key]
        ad["Child" + name] = [child.eval(name) for _n, child in children]


def _dynamic_gpu_ids(lay, dynamic):
    """The device indices of each dynamic slot of partitionable slot ``lay``: those its
    job holds (the claim's), else as many as it claimed of those of the partitionable
    slot no other dynamic slot holds, the first first."""
    held = [tuple(int(i) for i in claim.gpu_ids if int(i) in lay.gpu_ids)[:claim.gpus]
            for _n, claim in dynamic]
    free = [i for i in lay.gpu_ids if not any(i in ids for ids in held)]
    out = []
    for (_n, claim), ids in zip(dynamic, held):
        want = max(0, min(claim.gpus, len(lay.gpu_ids)) - len(ids))
        ids, free = ids + tuple(free[:want]), free[want:]
        out.append(ids)
    return out


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


#: the owner load of a partitionable slot beyond its CPUs left that its dynamic slots take
#: no part of (HTCondor's ResMgr::assign_load_to_slots)
DYNAMIC_LOAD_FLOOR = 0.05


def _slot_loads(host, rows, views, claims):
    """(LoadAvg, CondorLoadAvg) of each slot of ``rows`` (``machine_ads``'; ``views``
    their SlotViews), as HTCondor's startd shares out the host's load
    (ResMgr::assign_load_to_slots). CondorLoadAvg is the slot's job's load
    (``_condor_loads``). The owner load, the host's load not from the cell's jobs,
    fills the slots up to their CPUs each: slots in the Owner state first, then the
    Unclaimed ones, then the others (Matched, Claimed, Preempting ...) in slot
    order, each dynamic slot taking what its partitionable slot got beyond the CPUs
    it has left (at most its own CPUs); what remains goes to no slot. LoadAvg is the
    two together."""
    condor = _condor_loads(host, rows, views, claims)
    owner, left = [0.0] * len(rows), max(host.load_avg - host.condor_load_avg, 0.0)

    def give(i):
        nonlocal left
        owner[i] = min(left, float(rows[i][0].cpus))
        left -= owner[i]
    for wanted in ("Owner", "Unclaimed"):
        for i, row in enumerate(rows):
            if row[1] is None and views[i].state == wanted:
                give(i)
    parent = 0
    for i, row in enumerate(rows):
        if row[1] is None:
            parent = i
            if views[i].state not in ("Owner", "Unclaimed"):
                give(i)
            continue
        extra = owner[parent] - rows[parent][2]         # (beyond the CPUs it has left)
        if extra > DYNAMIC_LOAD_FLOOR:
            owner[i] = min(extra, float(row[0].cpus))
            owner[parent] -= owner[i]
    return [(own + job, job) for own, job in zip(owner, condor)]


def _condor_loads(host, rows, views, claims):
    """The CondorLoadAvg of each slot of ``rows``: the measured load of the job its claim
    is for (``host.job_loads``, as HTCondor's startd measures each slot's job), 0 for a
    slot without one; on a host whose jobs' loads were not measured, the cell's load
    on it (``host.condor_load_avg``) shared evenly among its Busy and Retiring slots."""
    if host.job_loads:
        measured = dict(host.job_loads)
        return [measured.get(claims[row[0].name].job, 0.0) if row[0].name in claims else 0.0 for row in rows]
    busy = [view.activity in ("Busy", "Retiring") for view in views]
    share = host.condor_load_avg / sum(busy) if any(busy) else 0.0
    return [share if b else 0.0 for b in busy]


#: the benchmark figures every slot ad publishes (HTCondor's startd measures them with
#: Dhrystone and Linpack; gridtools runs no benchmarks and gives each slot these fixed
#: figures of one present-day core, so condor_status -run finds no malformed ad and a
#: Rank on Mips or KFlops has a number to compare; STARTD_ATTRS or STARTD_FACTS_FILE
#: may set others)
SLOT_MIPS = 30000
def java_facts():
    """HasJava where this machine has a ``java`` (the java universe's jobs run with it),
    looked for once."""
    if not _JAVA:
        import shutil
        _JAVA.append({"HasJava": True} if shutil.which("java") else {})
    return _JAVA[0]


_JAVA = []
#: the URL schemes an input file may have (exec.movers.URL_SCHEMES: kept alike by a test)
PLUGIN_METHODS = "data,file,ftp,http,https"
SLOT_KFLOPS = 2000000

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
    busy = config.get("CpuBusy")
    if busy is None or not busy.strip():
        busy = config.get("CPU_BUSY")
    texts["CpuBusy"] = busy if busy is not None and busy.strip() else "false"
    names = " ".join(config.get(knob) or "" for knob in ("STARTD_ATTRS", "STARTD_EXPRS"))
    extra = list(dict.fromkeys(n for n in re.split(r"[,\s]+", names) if n))
    return texts, [(n, config.get(n)) for n in extra if config.get(n) is not None]


def slot_ad(host, lay, cpus, memory, disk, view, claim, policy, now, load=(0.0, 0.0),
            total_slots=1, parent=None, gpus=0, resources=()):
    """The ad of one slot (see ``machine_ads``). GPUs and TotalGPUs are published for
    a host with GPUs, ``<name>`` and ``Total<name>`` for each of its other resources
    (``resources``: this slot's amounts), and MachineResources names them all."""
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
                  "Mips": SLOT_MIPS, "KFlops": SLOT_KFLOPS,
                  "HasFileTransfer": True, "HasFileTransferPluginMethods": PLUGIN_METHODS,
                  "HasJobTransferPlugins": True,
                  "HasJobDeferral": True, "HasSelfCheckpointTransfers": True,
                  **java_facts(), "UidDomain": host.uid_domain or host.name,
                  "CondorVersion": condor_format.VERSION, "CondorPlatform": condor_format.PLATFORM,
                  "FileSystemDomain": host.filesystem_domain or host.name})
    if view.last_checkpoint > 0:
        ad["LastPeriodicCheckpoint"] = int(view.last_checkpoint)
    names = ["Cpus", "Disk", "Memory"]
    if host.gpus:
        ad["GPUs"], ad["TotalGPUs"] = gpus, host.gpus
        names.append("GPUs")
        if lay.gpu_ids:                 # HTCondor's names of the devices: CUDA0, CUDA1 ...
            ad["AssignedGPUs"] = ",".join(f"CUDA{i}" for i in lay.gpu_ids)
    totals = dict(host.resources)
    for name, amount in resources:
        ad[name], ad[f"Total{name}"] = amount, totals.get(name, amount)
        names.append(name)
    ad["MachineResources"] = " ".join(names)
    _slot_size(ad, lay)
    _slot_kind(ad, lay, parent)
    for attr in ("Start", "Rank", "CpuBusy"):
        ad[attr] = _expr(texts[attr])
    ad["Requirements"] = parse(_requirements(view.state, lay.partitionable, names[3:]))
    for name, text in extra:
        ad[name] = _expr(text)
    if claim is not None:
        _claim_attrs(ad, claim)
    return ad


def latch_names(config):
    """The names STARTD_LATCH_EXPRS and SYSTEM_STARTD_LATCH_EXPRS give (commas or blanks
    between them), each once (its first spelling), in their order."""
    found = {}
    for knob in ("STARTD_LATCH_EXPRS", "SYSTEM_STARTD_LATCH_EXPRS"):
        for name in re.split(r"[,\s]+", config.get(knob) or ""):
            if name:
                found.setdefault(name.lower(), name)
    return list(found.values())


def latch(ad, names, store, now):
    """Publish the latches of a slot as HTCondor's startd does: each name of
    STARTD_LATCH_EXPRS (``names``) is evaluated in the slot ad ``ad`` as a number (a
    boolean is 0 or 1, a real is cut to its whole part); ``<name>Value`` is that number
    (only for a name whose expression is not a constant; none while it is not a
    number) and ``<name>Time`` when it last changed (first became a number, changed,
    or stopped being one). ``store``: the slot's latches, name in lower case ->
    [last value or None, when it changed or 0], kept from one evaluation to the next."""
    from gridtools.classad.nodes import Literal
    for name in names:
        value = ad.eval(name)
        if type(value) is bool:
            value = int(value)
        elif type(value) is float:
            value = int(value) if value == value and abs(value) != float("inf") else None
        elif type(value) is not int:
            value = None
        kept = store.get(name.lower())
        if kept is None:
            kept = store[name.lower()] = [None, 0]
        if value != kept[0]:
            kept[:] = [value, int(now)]
        expr = ad.lookup(name)
        if expr is not None and expr.__class__ is not Literal and value is not None:
            ad[name + "Value"] = value
        elif name + "Value" in ad:
            del ad[name + "Value"]
        if kept[1]:
            ad[name + "Time"] = kept[1]


def _slot_size(ad, lay):
    """What the slot was given, as HTCondor's startd publishes it on every slot:
    TotalSlotCpus, TotalSlotMemory, TotalSlotDisk (a real number, as HTCondor's) and
    TotalSlot<name> for each of its other resources (a partitionable slot's whole
    share, not what it has left)."""
    ad["TotalSlotCpus"], ad["TotalSlotMemory"], ad["TotalSlotDisk"] = lay.cpus, lay.memory, float(lay.disk)
    if "GPUs" in ad:
        ad["TotalSlotGPUs"] = lay.gpus
    for name, amount in lay.resources:
        ad["TotalSlot" + name] = amount


def _slot_kind(ad, lay, parent):
    if parent is not None:
        ad["SlotType"] = "Dynamic"
        ad["DynamicSlot"] = True
        ad["ParentSlotName"] = parent.name
        ad["ParentSlotId"] = parent.slot_id
        ad["DSlotId"] = _dyn_number(lay.name)
        ad["PslotRollupInformation"] = True
    elif lay.partitionable:
        ad["SlotType"] = "Partitionable"
        ad["PartitionableSlot"] = True
    else:
        ad["SlotType"] = "Static"


#: a partitionable slot also checks that the job's requests fit what is left (its GPUs
#: and other resources too, where the host has them: a job without Request<name> asks
#: for none)
_FITS = ("(MY.Cpus > 0 && TARGET.RequestCpus <= MY.Cpus && TARGET.RequestMemory <= MY.Memory"
         " && TARGET.RequestDisk <= MY.Disk{})")
_FITS_MORE = " && (TARGET.Request{0} =?= undefined || TARGET.Request{0} <= MY.{0})"


def _requirements(state, partitionable, more=()):
    """A slot's Requirements; ``more``: the names of its resources besides CPUs, memory
    and disk."""
    if state in ("Matched", "Preempting"):
        return "false"
    fits = _FITS.format("".join(_FITS_MORE.format(name) for name in more))
    return f"START && {fits}" if partitionable else "START"


def _claim_attrs(ad, claim):
    """What a claimed slot tells of its job, as HTCondor's startd publishes it:
    RemoteUser and RemoteOwner are the job's User, AccountingGroup (only for a job
    with one) its group qualified with the User's domain. A claim that does not
    know the job's User (restored from an older spool) gives the bare names."""
    ad["RemoteUser"] = claim.job_user or claim.user
    ad["RemoteOwner"] = claim.job_user or claim.owner
    if claim.group:
        domain = claim.job_user.partition("@")[2]
        ad["AccountingGroup"] = f"{claim.group}@{domain}" if domain else claim.group
    if not claim.job:
        return                  # a claim no job runs on yet (Claimed/Idle)
    ad["JobId"] = claim.job
    ad["GlobalJobId"] = claim.global_job_id or claim.job
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
    if view.last_checkpoint > 0:
        out["LastPeriodicCheckpoint"] = int(view.last_checkpoint)
    elif "LastPeriodicCheckpoint" in out:
        del out["LastPeriodicCheckpoint"]
    part = out.eval("PartitionableSlot") is True
    out["Requirements"] = parse(_requirements(view.state, part))
    return out


__all__ = ["JobStatus", "job_status", "job_ad", "job_ads", "HostFacts", "Claim", "SlotView",
           "SlotType", "slot_types", "layout", "machine_ads", "slot_ad", "with_view"]
