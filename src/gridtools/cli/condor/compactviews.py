"""condor_status -compact: a line per machine, HTCondor's compact forms of the slot
tables (StartdCompact; with -state and -server, StateCompact and ServerCompact) and
the summaries its compact mode counts; the rest of condor_status's tables are
``machineviews``'. -gpus -compact is HTCondor's GPUsCompact print format, its
slots rolled up by machine and slot type (``gpus_compact_table``)."""

from gridtools.cli.condor.adformat import PlainAd
from gridtools.cli.condor.machineviews import (KEY_WIDTH, MODE_CONSTRAINTS, _int_text, _text,
                                               server_summary, state_summary, summary)

#: -compact's columns: (heading, width, alignment of the values; headings are left-aligned,
#: as HTCondor prints them); Slots is followed by its one-letter slot kind tag (S: static
#: slots, blank: a partitionable slot) without a blank between
COMPACT_COLUMNS = (("Machine", 12, "<"), ("Platform", 11, "<"), ("Slots", 5, ">"), ("Cpus", 4, ">"),
                   ("Gpus", 4, ">"), (" TotalGb", 8, ">"), ("FreCpu", 6, ">"), (" FreeGb ", 8, ">"),
                   ("CpuLoad", 7, ">"), ("ST", 2, "<"), ("Jobs/Min", 8, ">"), ("MaxSlotGb", 9, ">"))
_STATE_LETTERS = {"Owner": "O", "Unclaimed": "U", "Matched": "M", "Claimed": "C", "Preempting": "P",
                  "Shutdown": "S", "Delete": "X", "Backfill": "F", "Drained": "D"}
_ACTIVITY_LETTERS = {"Idle": "i", "Busy": "b", "Retiring": "r", "Vacating": "v", "Suspended": "s",
                     "Benchmarking": "e", "Killing": "k", "Cleaning": "c", "Checkpointing": "c"}


def _get(ad, name):
    """``ad.eval(name)`` (None for an attribute a status snapshot's ad lacks: the daemon
    publishes each under one spelling, and the ad is not built to find it missing)."""
    if type(ad) is PlainAd:
        if name in ad.values:
            return ad.values[name]
        if name not in ad.exprs:
            return None
    return ad.eval(name)


def _num(ad, attr):
    value = _get(ad, attr)
    return value if type(value) in (int, float) else None


def _txt(ad, attr, default="??"):
    value = _get(ad, attr)
    return value if isinstance(value, str) else default


def _letters(ad):
    """A slot's two letters of HTCondor's ACTIVITY_CODE (Ui, Cb, ...)."""
    return (_STATE_LETTERS.get(_txt(ad, "State", ""), " ") + _ACTIVITY_LETTERS.get(_txt(ad, "Activity", ""), " "))


#: HTCondor's State and Activity enums (string_to_state, string_to_activity): a letter
#: each, "#" where the dynamic slots of a partitionable slot have no consensus
_STATE_ENUM = ("None", "Owner", "Unclaimed", "Matched", "Claimed", "Preempting", "Shutdown", "Delete", "Backfill",
               "Drained")
_ACTIVITY_ENUM = ("None", "Idle", "Busy", "Retiring", "Vacating", "Suspended", "Benchmarking", "Killing",
                  "Cleaning")


def _consensus(values, enum, wins):
    """The consensus of a partitionable slot's Child<State|Activity> list, as HTCondor's
    condor_status -compact works it out: None without one (no dynamic slot, or no
    list), "#" where they differ, ``wins`` (Preempting, Vacating) as soon as one has it."""
    found = None
    for value in values if isinstance(values, list) else ():
        if not isinstance(value, str) or value not in enum or value == "None":
            continue
        if found is None:
            found = value
        elif value != found:
            if value == wins:
                return value
            found = "#"
    return found


def _pslot_code(ad):
    """The ST of a partitionable slot: its own letters rolled together with the
    consensus of its dynamic slots (ChildState, ChildActivity), as HTCondor's compact
    mode does: an exhausted (Cpus under 0.1) Unclaimed/Idle slot shows the consensus,
    a Drained one with Claimed dynamic slots shows C, a Preempting or Vacating one
    wins, and a letter that differs from a consensus is ``*``."""
    state = _consensus(_get(ad, "ChildState"), _STATE_ENUM, "Preempting")
    activity = _consensus(_get(ad, "ChildActivity"), _ACTIVITY_ENUM, "Vacating")
    bsc = " " if state is None else "#" if state == "#" else _STATE_LETTERS.get(state, " ")
    bac = " " if activity is None else "#" if activity == "#" else _ACTIVITY_LETTERS.get(activity, " ")
    asc, aac = _letters(ad)
    cpus = _num(ad, "Cpus")
    if asc + aac == "Ui" and cpus is not None and cpus < 0.1:
        asc, aac = bsc, bac
    elif asc == "D" and bsc == "C":
        asc = bsc
    if bsc == "P":
        asc = bsc
    if bac == "v":
        aac = bac
    if state is not None and asc != bsc:
        asc = "*"
    if activity is not None and aac != bac:
        aac = "*"
    return asc + aac


def _activity_code(codes):
    """The ST of a machine: the codes of its slots, a letter they disagree on ``*``."""
    states, acts = {c[0] for c in codes}, {c[1] for c in codes}
    return (states.pop() if len(states) == 1 else "*") + (acts.pop() if len(acts) == 1 else "*")


def _platform(ad):
    arch, opsys = _get(ad, "Arch"), _get(ad, "OpSysAndVer")
    if not isinstance(opsys, str):
        opsys = _get(ad, "OpSys")
    arch = {"X86_64": "x64", "X86": "x86"}.get(arch, arch if isinstance(arch, str) else "")
    return f"{arch}/{opsys}" if isinstance(opsys, str) else ""


def _compact_row(machine, ads):
    """The -compact line of one machine: its static slots rolled up, or its
    partitionable slot, which tells of its dynamic slots (HTCondor's compact query
    leaves those out; any given here are left out too): Slots is its NumDynamicSlots,
    Cpus and TotalGb its TotalSlotCpus and TotalSlotMemory (the whole slot), FreCpu
    and FreeGb its Cpus and Memory (what it has left), MaxSlotGb the largest of its
    ChildMemory, ST its state rolled together with its dynamic slots' (``_pslot_code``)."""
    parts = [ad for ad in ads if _get(ad, "PartitionableSlot") is True]
    statics = [ad for ad in ads if _get(ad, "PartitionableSlot") is not True and _get(ad, "DynamicSlot") is not True]
    ads = statics + parts

    def num(ad, *attrs):
        for attr in attrs:
            value = _num(ad, attr)
            if value is not None:
                return value
        return 0.0
    free = [ad for ad in statics if _txt(ad, "State", "") not in ("Claimed", "Preempting", "Matched")] + parts
    cpus = sum(num(ad, "TotalSlotCpus", "Cpus") for ad in ads)
    gpus = [num(ad, "TotalSlotGPUs", "GPUs") for ad in ads if _num(ad, "GPUs") is not None]
    memory = sum(num(ad, "TotalSlotMemory", "Memory") for ad in ads)
    first = ads[0]
    total_cpus = _num(first, "TotalCpus")
    load = _num(first, "TotalLoadAvg")
    sizes = [num(ad, "Memory") for ad in statics]
    for ad in parts:
        children = _get(ad, "ChildMemory")
        sizes += [v for v in children if type(v) in (int, float)] if isinstance(children, list) else []
    slots = [_num(ad, "NumDynamicSlots") for ad in parts]
    starts = [_num(ad, "RecentJobStarts") for ad in ads]
    starts = [s for s in starts if s is not None]
    count = len(statics) + sum(int(n) for n in slots if n is not None)
    shown = "%d" % count if statics or any(n is not None for n in slots) else ""
    return [machine, _platform(first),
            "%s%s" % (shown, "S" if statics and not parts else " "),
            "%d" % cpus, "%d" % sum(gpus) if gpus else "", "%.2f" % (memory / 1024.0),
            "%d" % sum(num(ad, "Cpus") for ad in free), "%.2f" % (sum(num(ad, "Memory") for ad in free) / 1024.0),
            "%.2f" % (load / total_cpus) if load is not None and total_cpus else "",
            _activity_code([_letters(ad) for ad in statics] + [_pslot_code(ad) for ad in parts]),
            "%.2f" % (sum(starts) / 20.0) if starts else "_",
            "%.2f" % (max(sizes) / 1024.0) if sizes else "*"]


#: the columns of -compact with -state and with -server (HTCondor's StateCompact and
#: ServerCompact print formats): -compact's but the free CPUs and memory and the
#: largest slot, -server's with the Mips and KFlops of the machine's first slot; (index
#: in a _compact_row, or the attribute, heading, width, alignment)
_COMPACT_STYLES = {
    "state": [(i,) + COMPACT_COLUMNS[i] for i in (0, 1, 2, 3, 4, 5, 8, 9, 10)],
    "server": [(i,) + COMPACT_COLUMNS[i] for i in (0, 1, 2, 3, 4, 5)]
    + [("Mips", " Mips  ", 7, ">"), ("KFlops", " KFlops  ", 9, ">")]
    + [(i,) + COMPACT_COLUMNS[i] for i in (8, 9, 10)],
}


#: the constraint of -compact's query in each mode (HTCondor's PMODE_*_COMPACT_CONSTRAINT),
#: which takes the place of the mode's own (-avail's is the same)
COMPACT_CONSTRAINTS = {
    "slots": "PartitionableSlot =?= true || DynamicSlot =!= true",
    "avail": MODE_CONSTRAINTS["avail"],
    "run": '(State == "Claimed" && DynamicSlot =!= true) || '
           "(NumDynamicSlots isnt undefined && NumDynamicSlots > 0)",
}


def compact_query(mode, ads):
    """The slot ads -compact's query selects in query mode ``mode`` (COMPACT_CONSTRAINTS:
    worked out on the ads' values, without building each ad)."""
    return [ad for ad in ads if _in_compact_query(mode, ad)]


def _in_compact_query(mode, ad):
    """Whether COMPACT_CONSTRAINTS[mode] is true for ``ad``."""
    if mode == "avail":
        state, cpus, memory = _get(ad, "State"), _get(ad, "Cpus"), _get(ad, "Memory")
        return isinstance(state, str) and state.lower() == "unclaimed" and _positive(cpus) and _positive(memory)
    if mode == "run":
        state = _get(ad, "State")
        if isinstance(state, str) and state.lower() == "claimed" and _get(ad, "DynamicSlot") is not True:
            return True
        return _positive(_get(ad, "NumDynamicSlots"))
    return _get(ad, "PartitionableSlot") is True or _get(ad, "DynamicSlot") is not True


def _positive(value):
    return type(value) in (int, float) and value > 0


def compact_table(ads, totals_only=False, style=None, key_min=KEY_WIDTH):
    """condor_status -compact: one line per machine (Machine as wide as the longest,
    at least 12), then the slot counts by state with a Machines column; with ``style``
    "state" or "server" (-state, -server), HTCondor's compact forms of those tables,
    each with its own summary (compact_state_summary, compact_server_summary)."""
    machines = {}
    ads = [ad for ad in ads if _get(ad, "DynamicSlot") is not True or _get(ad, "PartitionableSlot") is True]
    for ad in ads:
        machines.setdefault(_txt(ad, "Machine"), []).append(ad)
    columns = _COMPACT_STYLES.get(style) or [(i,) + c for i, c in enumerate(COMPACT_COLUMNS)]
    rows = []
    for name, group in machines.items():
        cells = _compact_row(name, group)
        rows.append([cells[key] if type(key) is int else _int_text(group[0], key, "-")
                     for key, _h, _w, _a in columns])
    out = []
    if not totals_only:
        widths = [max([w] + [len(r[i]) for r in rows]) for i, (_k, _h, w, _a) in enumerate(columns)]

        def line(cells, header=False):
            parts = []
            for text, width, (key, _h, _w, align) in zip(cells, widths, columns):
                if key == 2 and not header:      # the count right-aligned, its tag after it
                    parts.append(text[:-1].rjust(width - 1) + text[-1:])
                else:
                    parts.append(text.ljust(width) if align == "<" or header else text.rjust(width))
            return " ".join(parts).rstrip() + "\n"
        out.append(line([h for _k, h, _w, _a in columns], header=True) + "\n")
        out.extend(line(r) for r in rows)
        out.append("\n")
    if style == "state":
        out.append(compact_state_summary(ads, key_min))
    elif style == "server":
        out.append(compact_server_summary(ads, key_min))
    else:
        out.append(compact_summary(ads, key_min))
    return "".join(out)


def compact_summary(ads, key_min=KEY_WIDTH):
    """The summary of -compact (HTCondor's StartdNormalTotal as its compact mode feeds
    it): per Platform (as the table shows it, x64/LINUX) the states of the static
    slots, of the dynamic slots of each partitionable slot (its ChildState) and of
    each partitionable slot that has CPUs left (0.1 or more)."""
    items = []
    for ad, part, again in _compact_counted(ads):
        if part:
            states = _get(ad, "ChildState")
            items.append((ad, ""))              # (its line, even with nothing to count)
            items += [(ad, s) for s in states if isinstance(s, str)] if isinstance(states, list) else []
            if again:
                items.append((ad, None))
        else:
            items.append((ad, None))
    return summary(items, key_min=key_min, key=_platform, pairs=True)


def _compact_counted(ads):
    """The ads HTCondor's -compact totals count (its query leaves dynamic slots out),
    each with whether it is a partitionable slot that counts twice: once rolled up (by
    the states of its dynamic slots) and once as itself, unless it is exhausted (its
    Cpus under 0.1)."""
    out = []
    for ad in ads:
        if _get(ad, "DynamicSlot") is True and _get(ad, "PartitionableSlot") is not True:
            continue
        part = _get(ad, "PartitionableSlot") is True
        cpus = _num(ad, "Cpus")
        out.append((ad, part, part and not (cpus is not None and cpus < 0.1)))
    return out


def compact_state_summary(ads, key_min=KEY_WIDTH):
    """The summary of -state -compact (HTCondor's StartdStateTotal as its compact mode
    feeds it): per Activity the states of the static slots, of the dynamic slots of
    each partitionable slot (its ChildState, under its own Activity) and of each
    partitionable slot that has CPUs left."""
    items = []
    for ad, part, again in _compact_counted(ads):
        if part:
            states = _get(ad, "ChildState")
            items.append((ad, ""))              # (its line, even with nothing to count)
            if isinstance(_get(ad, "Activity"), str) and isinstance(states, list):
                items += [(ad, s) for s in states if isinstance(s, str)]
            if again:
                items.append((ad, None))
        else:
            items.append((ad, None))
    return state_summary(items, pairs=True, key_min=key_min)


def compact_server_summary(ads, key_min=KEY_WIDTH):
    """The summary of -server -compact (HTCondor's StartdServerTotal as its compact mode
    feeds it): per Platform (as the table shows it) the slots that are not dynamic, a
    partitionable one with CPUs left counted twice."""
    items = []
    for ad, _part, again in _compact_counted(ads):
        items += [ad, ad] if again else [ad]
    return server_summary(items, key=_platform, key_min=key_min)


# ---------------------------------------------------------------- -gpus -compact

#: which slots -gpus -compact shows (HTCondor's: those with GPU property ads)
GPUS_COMPACT_CONSTRAINT = ("AvailableGPUs isnt undefined && (size(AvailableGPUs) > 0 || "
                           "(PartitionableSlot && AssignedGPUs isnt undefined))")

GPUS_COMPACT_FORMAT = """SELECT
Machine AS Machine WIDTH AUTO
OpSys AS Platform PRINTAS PLATFORM
NumDynamicSlots AS Slot PRINTF %4d OR ' '
SlotType AS s NOPREFIX PRINTAS SLOT_COUNT_TAG
GPUs AS FreGPU PRINTF %6d
TotalSlotGPUs AS TotGPUs WIDTH 7 PRINTAS TOTAL_GPUS
AssignedGPUs AS Capability PRINTAS GPUS_CAPS
AssignedGPUs AS GPUsMemory PRINTAS GPUS_MEM
AssignedGPUs AS DeviceNames PRINTAS GPUS_NAMES
SUMMARY STANDARD
"""


def gpus_compact_ads(ads):
    """The slots GPUS_COMPACT_CONSTRAINT is true for, by machine and slot type
    (HTCondor's compact sort key ``Machine:SlotTypeId``), else in their order."""
    from gridtools.cli.condor import adformat
    expr = adformat.constraint(GPUS_COMPACT_CONSTRAINT)
    chosen = [ad for ad in ads if expr.eval(adformat.full(ad)) is True]
    return sorted(chosen, key=_gpus_key)


def _gpus_key(ad):
    kind = ad.eval("SlotTypeId")
    kind = abs(kind) if type(kind) is int else ""
    return f"{_text(ad, 'Machine', '')}:{kind}"


def _fold_gpus(rows, ads):
    """HTCondor's reduce_slot_results for GPUsCompact: the slots of one machine and
    slot type make one row, its Slot count the static slots (1 each) and the dynamic
    slots of the partitionable ones; another slot type of the same machine starts a
    row whose Machine is its slot name, indented."""
    out, lead_key = [], None
    for cells, ad in zip(rows, ads):
        key = _gpus_key(ad)
        part = ad.eval("PartitionableSlot") is True
        if out and key == lead_key:
            valid, count = out[-1][2]
            more = cells[2][1] if part and cells[2][0] and type(cells[2][1]) is int else 1
            out[-1][2] = (True, (count if valid and type(count) is int else 1) + more)
            continue
        cells = list(cells)
        if not part:
            cells[2] = (True, 1)
        if out and lead_key.rsplit(":", 1)[0] == key.rsplit(":", 1)[0]:
            cells[0] = (True, "   " + _text(ad, "Name", "").split("@")[0])
        out.append(cells)
        lead_key = key
    return out


def _reduced_name(name):
    """HTCondor's reduce_gpu_device_name: no ``NVIDIA `` and no ``-NNGB`` size."""
    if name.startswith("NVIDIA "):
        name = name[7:]
    if name.endswith("GB") and len(name) > 2 and name[-3].isdigit():
        name = name[:-3].rstrip("0123456789")
        if name.endswith("-"):
            name = name[:-1]
    return name


def gpus_compact_summary(ads, added, key_min=KEY_WIDTH):
    """-gpus -compact's summary: the states of the slots as -state's summary counts
    them, keyed by each GPU (Capability, memory, name) the first time a slot names it."""
    from gridtools.classad import ClassAd
    from gridtools.cli.condor import printas
    from gridtools.cli.condor.machineviews import state_summary
    items = []
    for ad, gpus in zip(ads, added):
        for gpu in gpus:
            props = printas.GPU_INFO["props"][gpu]
            cap = props.eval("Capability")
            if type(cap) not in (int, float) or type(cap) is bool:
                continue
            key = "Capability %.1f" % cap
            memory = props.eval("GlobalMemoryMB")
            if type(memory) in (int, float) and type(memory) is not bool:
                key += ", %.1f GB" % (int(memory) / 1024.0)
            name = props.eval("DeviceName")
            if isinstance(name, str):
                key += ", " + _reduced_name(name)
            state = ad.eval("State")
            items.append(ClassAd({"Activity": key, **({"State": state} if isinstance(state, str) else {})}))
    return state_summary(items, key_min=key_min)


def gpus_compact_table(ads, totals_only=False, key_min=KEY_WIDTH):
    """condor_status -gpus -compact: the slots with GPU property ads, a row per machine
    and slot type, then the summary; nothing when no slot has them."""
    from gridtools.cli.condor import printas, printmask
    ads = gpus_compact_ads(ads)
    if not ads:
        return ""
    added = printas.ingest_gpus(ads)
    summary = gpus_compact_summary(ads, added, key_min)
    if totals_only:
        return summary
    head, rows = printmask.parse(GPUS_COMPACT_FORMAT, tool="condor_status").table(ads, fold=_fold_gpus)
    return head + "\n" + "".join(rows) + "\n" + summary
