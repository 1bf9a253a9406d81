"""condor_status's views written as HTCondor writes them, print masks (``printmask``):
-startd, -any and -gpus, and the ads they show besides the slots.

- ``-startd``: a StartD ad per execution host (``startd_ads``), shown as
  ``Name Platform Version Cpus Memory GPUs Uptime`` with HTCondor's StartDaemon
  summary per platform (``Machines Slots Cpus BusyCpus BkCpus GPUs BusyGPUs
  BkGPUs Memory% BkMem%``);
- ``-any``: every ad the cell publishes (``any_ads``: the StartD ads, the slots,
  the schedd's, the masters', the submitters', in the collector's order, then
  sorted by Machine and Name) as ``MyType TargetType Name``, without a summary;
- ``-gpus``: the slots with GPUs, ``Name ST User GPUs GPU-Memory GPU-Name``
  and the summary of -state; with -startd, the StartD ads of hosts with GPUs,
  ``Name Cores Memory GPUs GPU-Memory GPU-Name Offline-GPUs`` and the StartD
  summary. A cell without GPUs prints nothing, as HTCondor does when no ad
  matches.
"""

import re

from gridtools.cli.condor import machineviews as views, printmask

STARTD_FORMAT = """SELECT
Name           AS Name         WIDTH AUTO
OpSys          AS Platform     WIDTH AUTO PRINTAS PLATFORM
CondorVersion  AS Version      WIDTH AUTO PRINTAS CONDOR_VERSION
DetectedCpus   AS Cpus         WIDTH 4 PRINTF %4d OR ??
DetectedMemory AS '  Memory'   WIDTH 10 PRINTAS READABLE_MB OR ??
DetectedGPUs   AS GPUs         WIDTH 5 PRINTAS MEMBER_COUNT OR ' '
DaemonStartTime AS '   Uptime' WIDTH 13 %T PRINTAS ELAPSED_TIME
SUMMARY STANDARD
"""

ANY_FORMAT = """SELECT FROM Any
MyType?:"None" AS MyType     WIDTH -18
TargetType?:"None" AS TargetType WIDTH -18
Name WIDTH -41 FIT OR ?
SUMMARY NONE
"""

SLOT_GPUS_FORMAT = """SELECT
Name AS Name WIDTH AUTO
Activity AS ST WIDTH 2 PRINTAS ACTIVITY_CODE
RemoteUser AS User WIDTH AUTO PRINTF %s OR _
GPUs AS GPUs PRINTF %4d
GPUs_GlobalMemoryMB AS GPU-Memory PRINTAS READABLE_MB OR _
GPUs_DeviceName?:join(",",evalineachcontext(DeviceName,AvailableGPUs))?:CUDADeviceName  AS GPU-Name PRINTF %s OR *
SUMMARY STANDARD
"""

STARTD_GPUS_FORMAT = """SELECT
Name AS Name WIDTH AUTO
DetectedCPUs AS Cores
DetectedMemory AS '  Memory' WIDTH 10 PRINTAS READABLE_MB
DetectedGPUs AS GPUs PRINTAS MEMBER_COUNT
evalInEachContext(GlobalMemoryMB,DetectedGPUs) AS GPU-Memory PRINTAS UNIQUE OR ' '
evalInEachContext(DeviceName,DetectedGPUs) AS GPU-Name PRINTAS UNIQUE OR ' '
OfflineGPUs AS Offline-GPUs PRINTAS UNIQUE or ' '
SUMMARY STANDARD
"""

#: which slots -gpus shows (HTCondor's): the partitionable slots that still hold GPUs
#: (AssignedGPUs) and the other slots with GPUs (a number not 0 counting as true)
SLOT_GPUS_CONSTRAINT = "(PartitionableSlot && AssignedGPUs isnt undefined) ?: Gpus"
#: which StartD ads -startd -gpus shows (HTCondor's)
STARTD_GPUS_CONSTRAINT = "TotalGPUs > 0 || size(DetectedGPUs) > 0"


# ---------------------------------------------------------------- ads

def _first_of_hosts(snap):
    """Each execution host's slot ads (as plain values), by host, in the daemon's order."""
    hosts = {}
    for values, _exprs in snap.get("slots") or []:
        name = values.get("Machine")
        if isinstance(name, str):
            hosts.setdefault(name, []).append(values)
    return hosts


def startd_ads(snap, now):
    """A StartD ad per execution host, made from its slot ads as HTCondor's startd
    publishes its daemon ad: its totals, the CPUs, memory and GPUs the slots claimed
    use, its platform (OpSysAndVer, else OpSys) and version; by host name, numbers in
    it compared as numbers (condor_status's default sort)."""
    from gridtools.classad import ClassAd
    started = snap.get("started")
    ads = []
    for host, slots in sorted(_first_of_hosts(snap).items(), key=lambda item: natural_key(item[0])):
        first = slots[0]
        busy = [s for s in slots if s.get("State") in ("Claimed", "Preempting")]
        gpus = first.get("TotalGPUs") if type(first.get("TotalGPUs")) is int else 0
        attrs = {"MyType": "StartD", "Name": host, "Machine": host, "Arch": first.get("Arch"),
                 "OpSys": first.get("OpSys"), "OpSysAndVer": first.get("OpSysAndVer") or first.get("OpSys"),
                 "CondorVersion": views.CONDOR_VERSION, "DetectedCpus": first.get("TotalCpus"),
                 "DetectedMemory": first.get("TotalMemory"), "TotalCpus": first.get("TotalCpus"),
                 "TotalMemory": first.get("TotalMemory"), "TotalGPUs": gpus,
                 "TotalSlots": len([s for s in slots if s.get("DynamicSlot") is not True]),
                 "TotalInUseCpus": sum(_int(s, "Cpus") for s in busy),
                 "TotalInUseMemory": sum(_int(s, "Memory") for s in busy),
                 "TotalInUseGPUs": sum(_int(s, "GPUs") for s in busy),
                 "LastHeardFrom": int(now), "MyCurrentTime": int(now)}
        if gpus:
            attrs["DetectedGPUs"] = ", ".join(f"CUDA{i}" for i in range(gpus))
        if type(started) in (int, float):
            attrs["DaemonStartTime"] = int(started)
        ads.append(ClassAd({k: v for k, v in attrs.items() if v is not None}))
    return ads


def _int(values, name):
    value = values.get(name)
    return int(value) if type(value) in (int, float) else 0


def any_ads(snap, now, domain):
    """Every ad of the cell, in the collector's order of its tables (StartD, slots,
    schedd, masters, submitters) and then by Machine and Name (condor_status's
    default sort, numbers in names compared as numbers)."""
    from gridtools.cli.condor import adformat, submitters
    ads = startd_ads(snap, now) + [adformat.from_plain(item) for item in snap.get("slots") or []]
    ads += submitters.schedd_ads(snap, now) + views.master_ads(snap, now)
    ads += submitters.submitter_ads(snap, now, domain)
    from gridtools.cli.condor import daemonads
    ads += daemonads.collector_ads(snap, now) + daemonads.negotiator_ads(snap, now)
    return sorted(ads, key=lambda ad: natural_key(_text(ad, "Machine") + "\n" + _text(ad, "Name")))


def _text(ad, name):
    value = ad.eval(name)
    return value if isinstance(value, str) else "undefined"


def natural_key(text):
    """A sort key comparing runs of digits as numbers."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.findall(r"\d+|\D+", text)]


# ---------------------------------------------------------------- tables

def startd_summary(ads, key_min=views.KEY_WIDTH):
    """HTCondor's StartDaemonTotal: per platform and in total the machines, their slots,
    CPUs (busy, backfill), GPUs (busy, backfill) and the mean share of memory in use
    (and backfill's). An ad without a platform is left out; one missing a total is
    malformed."""
    from gridtools.cli.condor import printas
    rows, total, malformed = {}, [0] * 8 + [0.0, 0.0], 0
    for ad in ads:
        key = printas.platform_name(ad)
        if key is None:
            malformed += 1
            continue
        numbers = [_number(ad, a) for a in ("TotalSlots", "TotalCpus", "TotalGPUs", "TotalMemory")]
        malformed += None in numbers or not numbers[3]
        slots, cpus, gpus, memory = (n or 0 for n in numbers)
        used = [_number(ad, a) or 0 for a in ("TotalInUseCpus", "TotalBackfillInUseCpus", "TotalInUseGPUs",
                                              "TotalBackfillInUseGPUs", "TotalInUseMemory",
                                              "TotalBackfillInUseMemory")]
        for sums in (rows.setdefault(key, [0] * 8 + [0.0, 0.0]), total):
            sums[0] += 1
            for i, value in enumerate((slots, cpus, used[0], used[1], gpus, used[2], used[3])):
                sums[1 + i] += int(value)
            if memory:
                sums[8] += used[4] / memory
                sums[9] += used[5] / memory
    head = "%8.8s %8.8s %8.8s %8.8s %8.8s %8.8s %8.8s %8.8s %8.8s %8.8s" % (
        "Machines", "Slots", "Cpus", "BusyCpus", "BkCpus", "GPUs", "BusyGPUs", "BkGPUs", "Memory%", "BkMem%")

    def numbers_of(row):
        machines = row[0] or 1
        return "%8d %8d %8d %8d %8d %8d %8d %8d %7.2f%% %7.2f%%" % (
            tuple(row[:8]) + (100 * row[8] / machines, 100 * row[9] / machines))
    return views._totals(rows, total, head, numbers_of, malformed, key_min)


def _number(ad, name):
    value = ad.eval(name)
    return value if type(value) in (int, float) else None


def mask_table(fmt, ads, summary=None, blank_after_head=True):
    """A built-in print mask's table: its heading and a blank line, the rows, and
    ``summary()`` after a blank line when the mask asks for one; nothing when no ad
    matches."""
    mask = printmask.parse(fmt, tool="condor_status")
    if not ads:
        return ""
    head, rows = mask.table(ads)
    out = [head + ("\n" if blank_after_head else "")] if head else []
    out += rows
    if mask.summary and summary is not None:
        out.append("\n" + summary())
    return "".join(out)


def gpu_ads(ads, startd=False):
    """The slots -gpus shows (with -startd, the StartD ads): those SLOT_GPUS_CONSTRAINT
    (STARTD_GPUS_CONSTRAINT) is true for, a number not 0 counting as true (as the
    collector's query does); with every output form, -af and -long too."""
    from gridtools.cli.condor import adformat
    expr = adformat.constraint(STARTD_GPUS_CONSTRAINT if startd else SLOT_GPUS_CONSTRAINT)
    return [ad for ad in ads if _true(expr.eval(adformat.full(ad)))]


def _true(value):
    return value is True or (type(value) in (int, float) and value != 0)


def view(mode, gpus, ads, totals_only, key_min):
    """The table of -startd, -any or -gpus (with -startd: ``mode`` "startd")."""
    if mode == "any":
        return "" if totals_only else mask_table(ANY_FORMAT, ads)
    if mode == "startd":
        fmt = STARTD_GPUS_FORMAT if gpus else STARTD_FORMAT
        return _with_totals(fmt, ads, totals_only, lambda: startd_summary(ads, key_min))
    return _with_totals(SLOT_GPUS_FORMAT, ads, totals_only,
                        lambda: views.state_summary(ads, key_min=key_min))


def _with_totals(fmt, ads, totals_only, summary):
    if not ads:
        return ""
    if totals_only:
        return summary()
    return mask_table(fmt, ads, summary)
