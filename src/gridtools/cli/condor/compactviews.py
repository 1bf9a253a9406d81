"""condor_status -compact: a line per machine, HTCondor's compact forms of the slot
tables (StartdCompact; with -state and -server, StateCompact and ServerCompact) and
the summaries its compact mode counts; the rest of condor_status's tables are
``machineviews``'. -gpus -compact is HTCondor's GPUsCompact print format, its
slots rolled up by machine and slot type (``gpus_compact_table``)."""

from gridtools.cli.condor.machineviews import (KEY_WIDTH, MODE_CONSTRAINTS, _int_text, _number, _text,
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
                     "Benchmarking": "e", "Killing": "k", "Checkpointing": "c"}


def _activity_code(ads):
    """HTCondor's two-letter state/activity code (Ui, Cb, ...); a letter the slots of a
    machine disagree on is ``*``."""
    codes = {(_STATE_LETTERS.get(_text(ad, "State", ""), " "), _ACTIVITY_LETTERS.get(_text(ad, "Activity", ""), " "))
             for ad in ads}
    states, acts = {c[0] for c in codes}, {c[1] for c in codes}
    return (states.pop() if len(states) == 1 else "*") + (acts.pop() if len(acts) == 1 else "*")


def _platform(ad):
    arch, opsys = ad.eval("Arch"), ad.eval("OpSysAndVer")
    if not isinstance(opsys, str):
        opsys = ad.eval("OpSys")
    arch = {"X86_64": "x64", "X86": "x86"}.get(arch, arch if isinstance(arch, str) else "")
    return f"{arch}/{opsys}" if isinstance(opsys, str) else ""


def _compact_row(machine, ads):
    """The -compact line of one machine: its static slots rolled up, or its partitionable
    slot with the dynamic slots carved from it."""
    parts = [ad for ad in ads if ad.eval("PartitionableSlot") is True]
    dyns = [ad for ad in ads if ad.eval("DynamicSlot") is True]
    statics = [ad for ad in ads if ad not in parts and ad not in dyns]

    def num(ad, *attrs):
        for attr in attrs:
            value = _number(ad, attr)
            if value is not None:
                return value
        return 0.0
    free = [ad for ad in statics if _text(ad, "State", "") not in ("Claimed", "Preempting", "Matched")] + parts
    cpus = sum(num(ad, "TotalSlotCpus", "Cpus") for ad in statics + parts)
    gpus = [num(ad, "TotalSlotGPUs", "GPUs") for ad in statics + parts if _number(ad, "GPUs") is not None]
    memory = sum(num(ad, "TotalSlotMemory", "Memory") for ad in statics + parts)
    first = ads[0]
    total_cpus = _number(first, "TotalCpus")
    load = _number(first, "TotalLoadAvg")
    sizes = [num(ad, "Memory") for ad in statics + dyns]
    starts = [_number(ad, "RecentJobStarts") for ad in statics + parts]
    starts = [s for s in starts if s is not None]
    return [machine, _platform(first),
            "%d%s" % (len(statics) + len(dyns), "S" if statics and not parts else " "),
            "%d" % cpus, "%d" % sum(gpus) if gpus else "", "%.2f" % (memory / 1024.0),
            "%d" % sum(num(ad, "Cpus") for ad in free), "%.2f" % (sum(num(ad, "Memory") for ad in free) / 1024.0),
            "%.2f" % (load / total_cpus) if load is not None and total_cpus else "",
            _activity_code(statics + dyns + parts if dyns else statics + parts),
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
    """The slot ads -compact's query selects in query mode ``mode`` (what condor_status
    shows, unfolded, when -total makes it ignore -compact)."""
    from gridtools.cli.condor import adformat
    expr = adformat.constraint(COMPACT_CONSTRAINTS[mode])
    return [ad for ad in ads if expr.eval(adformat.full(ad)) is True]


def compact_table(ads, totals_only=False, style=None, key_min=KEY_WIDTH):
    """condor_status -compact: one line per machine (Machine as wide as the longest,
    at least 12), then the slot counts by state with a Machines column; with ``style``
    "state" or "server" (-state, -server), HTCondor's compact forms of those tables,
    each with its own summary (compact_state_summary, compact_server_summary)."""
    machines = {}
    for ad in ads:
        machines.setdefault(_text(ad, "Machine"), []).append(ad)
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
        out.append(summary(ads, "Machines", key_min))
    return "".join(out)


def _compact_counted(ads):
    """The ads HTCondor's -compact totals count (its query leaves dynamic slots out),
    each with whether it is a partitionable slot that counts twice: once rolled up (by
    the states of its dynamic slots) and once as itself, while it has CPUs left."""
    out = []
    for ad in ads:
        if ad.eval("DynamicSlot") is True and ad.eval("PartitionableSlot") is not True:
            continue
        part = ad.eval("PartitionableSlot") is True
        cpus = _number(ad, "Cpus")
        out.append((ad, part, part and cpus is not None and cpus >= 0.1))
    return out


def compact_state_summary(ads, key_min=KEY_WIDTH):
    """The summary of -state -compact (HTCondor's StartdStateTotal as its compact mode
    feeds it): per Activity the states of the static slots, of the dynamic slots of
    each partitionable slot (under that one's Activity) and of each partitionable slot
    that has CPUs left."""
    children = {}
    for ad in ads:
        if ad.eval("DynamicSlot") is True:
            children.setdefault(_text(ad, "ParentSlotName", ""), []).append(_text(ad, "State", ""))
    items = []
    for ad, part, again in _compact_counted(ads):
        if part:
            items.append((ad, ""))              # (its line, even with nothing to count)
            items += [(ad, state) for state in children.get(_text(ad, "Name", ""), [])]
            if again:
                items.append((ad, _text(ad, "State", "")))
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
