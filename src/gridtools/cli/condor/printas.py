"""The PRINTAS functions of HTCondor's print masks (``printmask``), the common ones of
its global table and condor_q's JOB_STATUS:

- renderers (a new value, then printed with the function's printf format, if any):
  ACTIVITY_CODE, ACTIVITY_OR_OCU, ACTIVITY_TIME, BATCH_NAME, BUFFER_IO_MISC,
  CONDOR_PLATFORM, CONDOR_VERSION, DAG_OWNER, DUE_DATE, ELAPSED_TIME, GRID_JOB_ID,
  GRID_RESOURCE, GRID_STATUS, JOB_COMMAND, JOB_DESCRIPTION, JOB_ID, JOB_STATUS,
  MEMBER_COUNT, MEMORY_USAGE, OWNER, PLATFORM, REMOTE_HOST, STRINGS_FROM_LIST,
  UNHEALTH, UNIQUE;
- formatters (the value, when of their kind, turned into text): DATE, QDATE,
  JOB_FACTORY_MODE, JOB_STATUS_RAW, JOB_UNIVERSE, LOAD_AVG, READABLE_BYTES,
  READABLE_KB, READABLE_MB, RUNTIME, TIME.

Each tool has its own functions too (``LOCAL``), found before the common ones:
condor_q's CPU_TIME; condor_status' GPUS_CAPS, GPUS_MEM, GPUS_NAMES, NUM_DSLOTS,
SLOT_COUNT_TAG, SLOT_TYPE_LETTER and TOTAL_GPUS. A name not there is refused as
HTCondor refuses a name it does not know.
"""

import os
import time

from gridtools.classad.values import ERROR, UNDEFINED, unparse_value
from gridtools.cli.condor.machineviews import format_time, metric_units

#: State and Activity letters of ACTIVITY_CODE (HTCondor's enum orders; "" is none)
_STATES = ("", "Owner", "Unclaimed", "Matched", "Claimed", "Preempting", "Shutdown", "Delete", "Backfill",
           "Drained")
_STATE_LETTERS = "~OUMCPSXFD"
_ACTIVITIES = ("", "Idle", "Busy", "Retiring", "Vacating", "Suspended", "Benchmarking", "Killing")
_ACTIVITY_LETTERS = "0ibrvsek"
#: JobStatus 1..10 as one letter (HTCondor's encode_status)
_JOB_STATUS = " IRXCH>SFBP"
_STATUS_RAW = {1: "Idle   ", 2: "Running", 3: "Removed", 4: "Complet", 5: "Held   ", 6: "XFerOut",
               7: "Suspend", 8: "Failed ", 9: "Blocked", 10: "Preparing"}
_UNIVERSES = ("", "Standard", "Pipe", "Linda", "PVM", "Vanilla", "PVMD", "Scheduler", "MPI", "Grid", "Java",
              "Parallel", "Local", "VM")


class Function:
    """``kind``: the value a formatter takes (int, float, string, value), "value" for
    renderers; ``fmt``: the printf format the rendered value is printed with;
    ``attrs``: the other attributes it looks at, which HTCondor's tools add to their
    query's projection (what ``SELECT UNIQUE`` groups on, ``printformat.unique_attrs``)."""

    def __init__(self, kind, fn, fmt=None, formats=False, attrs=()):
        self.kind, self.fn, self.fmt, self.formats, self.attrs = kind, fn, fmt, formats, attrs

    def render(self, value, ad):
        if self.formats:
            return _of_kind(self.kind, value), value
        return self.fn(value, ad)

    def format(self, value):
        return self.fn(value)


def _of_kind(kind, value):
    number = type(value) in (int, float, bool)
    return {"int": number, "float": number, "string": isinstance(value, str)}.get(kind, True)


def _look(ad, name):
    value = ad.eval(name)
    return None if value is UNDEFINED or value is ERROR else value


# ---------------------------------------------------------------- text helpers

def format_date(when):
    """``%2d/%-2d %02d:%02d`` of a Unix time, local (``    ???    `` before 1970)."""
    if when < 0:
        return "    ???    "
    tm = time.localtime(when)
    return "%2d/%-2d %02d:%02d" % (tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min)


def _readable(scale):
    def fn(value):
        if type(value) not in (int, float) or type(value) is bool:
            return "        "
        return metric_units(float(value) * scale)
    return fn


def _items(value):
    """The items of a list value, or of a string list (commas and blanks)."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        return [item for item in value.replace(",", " ").split() if item]
    return None


# ---------------------------------------------------------------- renderers

def _activity_code(value, ad):
    text = value if isinstance(value, str) else ""
    state = activity = ""
    if text in _ACTIVITIES[1:]:
        activity, state = text, _look(ad, "State") or ""
    elif text in _STATES[1:]:
        state, activity = text, _look(ad, "Activity") or ""
    else:
        return False, "  "
    code = (_STATE_LETTERS[_STATES.index(state)] if state in _STATES[1:] else " ") + \
        (_ACTIVITY_LETTERS[_ACTIVITIES.index(activity)] if activity in _ACTIVITIES[1:] else " ")
    return True, code


def _heard(ad, attrs):
    """When the collector last heard from the ad: the first of ``attrs`` it has, else
    now (gridtools' ads come straight from the daemon's status, as just heard)."""
    found = next((_look(ad, a) for a in attrs if type(_look(ad, a)) is int), None)
    return int(time.time()) if found is None else found


def _elapsed_since(*attrs):
    def fn(value, ad):
        now = _heard(ad, attrs)
        if type(value) not in (int, float):
            return False, 0
        return True, max(0, int(now - value)) if attrs[0] == "MyCurrentTime" else int(now - value)
    return fn


def _due_date(value, ad):
    if type(value) not in (int, float):
        return False, 0
    return True, int(_heard(ad, ("LastHeardFrom",)) + value)


def _member_count(value, _ad):
    items = _items(value)
    return (False, value) if items is None else (True, len(items))


def _unique(value, _ad):
    if isinstance(value, (list, tuple)):
        items = {item if isinstance(item, str) else unparse_value(item, True) for item in value}
    elif isinstance(value, str):
        items = set(_items(value))
    else:
        return False, value
    return True, ", ".join(sorted(items))


def _strings_from_list(value, _ad):
    if not isinstance(value, (list, tuple)):
        return False, value
    return True, ", ".join(item for item in value if isinstance(item, str))


def platform_name(ad):
    """HTCondor's platform: ``x64/<OpSysAndVer>`` (OpSysShortName on Windows), None
    without them."""
    opsys = _look(ad, "OpSys")
    name = _look(ad, "OpSysShortName" if opsys == "WINDOWS" else "OpSysAndVer")
    if not isinstance(name, str):
        return None
    arch = _look(ad, "Arch")
    arch = arch if isinstance(arch, str) else ""
    arch = {"X86_64": "x64", "X86": "x86"}.get(arch, arch)
    return f"{arch}/{name}"


def _platform(_value, ad):
    name = platform_name(ad)
    return (False, "") if name is None else (True, name)


def _condor_platform(value, _ad):
    if not isinstance(value, str) or not value:
        return False, value
    words = value.split()
    word = words[1] if len(words) > 1 else ""
    for stop in " .$":
        word = word.split(stop)[0]
    word = ("x" + word[1:] if word.startswith("X") else word).replace("-", "_")
    if "WINDOWS_" in word:
        word = word[:word.index("WINDOWS_") + 7]
    return True, word


def condor_version(value):
    """The X.Y.Z of a ``$CondorVersion: X.Y.Z date ... $`` string."""
    words = value.split()
    return words[1] if len(words) > 1 else ""


def _condor_version(value, _ad):
    if not isinstance(value, str) or not value:
        return False, value
    return True, condor_version(value)


def _owner(_value, ad):
    owner = _look(ad, "Owner")
    return (True, owner) if isinstance(owner, str) else (False, "")


def _dag_owner(value, ad):
    if ad.eval("DAGManJobId") is not UNDEFINED:
        node = _look(ad, "DAGNodeName")
        if isinstance(node, str):
            return True, node
    return _owner(value, ad)


def _job_id(_value, ad):
    cluster, proc = _look(ad, "ClusterId"), _look(ad, "ProcId")
    if type(cluster) is not int:
        return False, ""
    return True, f"{cluster}.{proc if type(proc) is int else 0}"


def _job_status(value, ad):
    """Its letter and a blank, ``<`` (``<q`` queued) while the input is transferred,
    `` >`` (``q>``) while the output is."""
    if type(value) is not int:
        return False, value
    first = _JOB_STATUS[value] if 1 <= value < len(_JOB_STATUS) else " "
    second = " "
    queued = _look(ad, "TransferQueued") is True
    if _look(ad, "TransferringInput") is True:
        first, second = "<", "q" if queued else " "
    if _look(ad, "TransferringOutput") is True or value == 6:
        first, second = "q" if queued else " ", ">"
    return True, first + second


def _memory_usage(_value, ad):
    used, image = _look(ad, "MemoryUsage"), _look(ad, "ImageSize")
    if type(used) in (int, float):
        return True, float(int(used))
    if type(image) in (int, float):
        return True, int(image) / 1024.0
    return False, 0.0


def _batch_name(_value, ad):
    name = _look(ad, "JobBatchName")
    if isinstance(name, str):
        return True, name
    if _look(ad, "JobUniverse") == 7:
        return True, f"DAG: {_look(ad, 'ClusterId') or 0}"
    node = _look(ad, "DAGNodeName")
    if ad.eval("DAGManJobId") is not UNDEFINED and isinstance(node, str):
        return True, "NODE: " + node
    return False, ""


def _arguments(ad):
    args = _look(ad, "Arguments")
    args = args if isinstance(args, str) and args else _look(ad, "Args")
    return args if isinstance(args, str) else ""


def _job_command(_value, ad):
    cmd = _look(ad, "Cmd")
    if not isinstance(cmd, str):
        return False, ""
    args = _arguments(ad)
    return True, cmd + (" " + args if args else "")


def _job_description(_value, ad):
    """``(description)``, else the command's base name and its arguments."""
    cmd = _look(ad, "Cmd")
    if not isinstance(cmd, str):
        return False, ""
    for name in ("MATCH_EXP_JobDescription", "JobDescription"):
        text = _look(ad, name)
        if isinstance(text, str) and text:
            return True, f"({text})"
    args = _arguments(ad)
    return True, os.path.basename(cmd) + (" " + args if args else "")


def _remote_host(_value, ad):
    host = _look(ad, "RemoteHost")
    return (True, host) if isinstance(host, str) else (False, "")


def _status_raw(value):
    return _STATUS_RAW.get(int(value), "Unk    ")


def _universe(value):
    value = int(value)
    return _UNIVERSES[value] if 0 < value < len(_UNIVERSES) else "Unknown"


def _activity_or_ocu(value, ad):
    """The Activity, ``OCU`` for an idle slot that holds an OCU claim, ``??`` without one."""
    if not isinstance(value, str) or not value:
        return True, "??"
    return True, "OCU" if value == "Idle" and _look(ad, "OCU") is True else value


def _buffer_io_misc(_value, ad):
    """`` transfer=in,out,queued`` (those that apply) while files are transferred."""
    which = [word for word, attr in (("in", "TransferringInput"), ("out", "TransferringOutput"),
                                     ("queued", "TransferQueued")) if _look(ad, attr) is True]
    return True, " transfer=" + ",".join(which) if which else ""


def _grid_type(ad):
    resource = _look(ad, "GridResource")
    return resource.split(" ")[0] if isinstance(resource, str) and resource else "globus"


def _grid_job_id(value, ad):
    """GridJobId without its type and host: ``/path``, or for gt2/gt5 the two path
    parts after the host joined by a dot."""
    if not isinstance(value, str):
        return False, ""
    start = value.rfind(" ") + 1
    sep = value.find("://", start)
    host_at = sep + 3 if sep >= 0 else start
    slash = value.find("/", host_at)
    rest_at = slash if slash >= 0 else host_at
    if _grid_type(ad) not in ("gt2", "gt5"):
        return True, value[rest_at:]
    if value[rest_at:rest_at + 1] == "/":
        rest_at += 1
    parts = value[rest_at:].split("/")
    text = parts[0]
    if len(parts) > 1:
        text += "." + parts[1]
    return True, text


def _grid_resource(value, ad):
    """``type->manager host`` of GridResource (``ec2 host`` for EC2)."""
    if not isinstance(value, str):
        return False, ""
    blank = value.find(" ")
    grid_type, host_at = (value[:blank], blank + 1) if blank >= 0 else ("globus", 0)
    manager = "[?]"
    end = value.find(" ", host_at)
    if end >= 0:
        manager = value[end + 1:]
    else:
        at = value.find("jobmanager-", host_at)
        if at >= 0:
            manager = value[at + 11:]
        end = at
    sep = value.find("://", host_at)
    start = sep + 3 if sep >= 0 else host_at
    stops = [i for i in (value.find(":", start), value.find("/", start)) if i >= 0]
    stop = min(stops) if stops else len(value)
    if end >= 0 and stop > end:
        stop = end
    host = value[start:stop]
    if grid_type == "ec2":
        name = _look(ad, "EC2RemoteVirtualMachineName")
        return True, f"ec2 {name if isinstance(name, str) else host}"
    return True, f"{grid_type}->{manager.replace(' ', '/')} {host}"


_GRID_STATUS = {1: "IDLE", 2: "RUNNING", 3: "REMOVED", 4: "COMPLETED", 5: "HELD", 6: "XFER_OUT",
                7: "SUSPENDED", 8: "FAILED", 9: "BLOCKED", 10: "PREPARING"}


def _grid_status(value, _ad):
    if isinstance(value, str):
        return True, value
    if type(value) is not int:
        return False, ""
    return True, _GRID_STATUS.get(value, str(value))


def _factory_mode(value):
    if value is UNDEFINED:
        return ""
    if type(value) in (int, float, bool):
        return {-1: "Errs", 0: "Norm", 1: "Held", 2: "Done", 3: "Gone"}.get(int(value), "Unk")
    return "????"


def _unhealth(value, ad):
    """The health expressions (a list) that are false, else the slot's broken reason,
    else the unique broken reasons."""
    if not isinstance(value, (list, tuple)):
        reason = _look(ad, "SlotBrokenReason")
        if isinstance(reason, str):
            return True, reason
        reasons = ad.eval("BrokenReasons")
        if reasons is ERROR:
            return False, value
        return _unique(reasons, ad)
    raw = ad.lookup("HealthExprs") if hasattr(ad, "lookup") else None
    exprs = getattr(raw, "items", None)
    if exprs is None or len(exprs) != len(value):
        exprs = value
    failed = []
    for result, expr in zip(value, exprs):
        if result is ERROR:
            failed.append("error")
        elif type(result) in (bool, int, float) and not result:
            failed.append(expr.unparse() if hasattr(expr, "unparse") else unparse_value(expr, True))
    return True, ", ".join(failed)


FUNCTIONS = {
    "ACTIVITY_CODE": Function("value", _activity_code, attrs=("State",)),
    "ACTIVITY_OR_OCU": Function("value", _activity_or_ocu),
    "ACTIVITY_TIME": Function("value", _elapsed_since("MyCurrentTime", "LastHeardFrom"), "%T",
                              attrs=("LastHeardFrom", "MyCurrentTime")),
    "BATCH_NAME": Function("value", _batch_name, attrs=("JobBatchName", "Cmd", "DAGManJobId", "DAGNodeName")),
    "BUFFER_IO_MISC": Function("value", _buffer_io_misc, attrs=("FileSeekCount", "BufferSize", "BufferBlockSize",
                                                                "TransferringInput", "TransferringOutput",
                                                                "TransferQueued")),
    "CONDOR_PLATFORM": Function("value", _condor_platform),
    "CONDOR_VERSION": Function("value", _condor_version),
    "DAG_OWNER": Function("value", _dag_owner, attrs=("NiceUser", "DAGManJobId", "DAGNodeName")),
    "DATE": Function("int", lambda v: format_date(int(v)), formats=True),
    "DUE_DATE": Function("value", _due_date, "%Y", attrs=("LastHeardFrom",)),
    "ELAPSED_TIME": Function("value", _elapsed_since("LastHeardFrom"), "%T", attrs=("LastHeardFrom",)),
    "GRID_JOB_ID": Function("value", _grid_job_id, attrs=("GridResource",)),
    "GRID_RESOURCE": Function("value", _grid_resource, attrs=("EC2RemoteVirtualMachineName",)),
    "GRID_STATUS": Function("value", _grid_status),
    "JOB_COMMAND": Function("value", _job_command, attrs=("JobDescription", "MATCH_EXP_JobDescription")),
    "JOB_DESCRIPTION": Function("value", _job_description,
                                attrs=("Args", "Arguments", "JobDescription", "MATCH_EXP_JobDescription")),
    "JOB_FACTORY_MODE": Function("value", _factory_mode, formats=True),
    "JOB_ID": Function("value", _job_id, attrs=("ProcId",)),
    "JOB_STATUS": Function("value", _job_status, attrs=("LastSuspensionTime", "TransferringInput",
                                                        "TransferringOutput", "TransferQueued")),
    "JOB_STATUS_RAW": Function("int", _status_raw, formats=True),
    "JOB_UNIVERSE": Function("int", _universe, formats=True),
    "LOAD_AVG": Function("float", lambda v: "%.3f" % float(v), formats=True),
    "MEMBER_COUNT": Function("value", _member_count, "%d"),
    "MEMORY_USAGE": Function("value", _memory_usage, "%.1f", attrs=("MemoryUsage",)),
    "OWNER": Function("value", _owner, attrs=("NiceUser",)),
    "PLATFORM": Function("value", _platform, attrs=("Arch", "OpSysAndVer", "OpSysShortName")),
    "QDATE": Function("int", lambda v: format_date(int(v)), formats=True),
    "READABLE_BYTES": Function("value", _readable(1.0), formats=True),
    "READABLE_KB": Function("value", _readable(1024.0), formats=True),
    "READABLE_MB": Function("value", _readable(1024.0 * 1024.0), formats=True),
    "REMOTE_HOST": Function("value", _remote_host, attrs=("JobUniverse", "RemoteHost", "EC2RemoteVirtualMachineName",
                                                          "GridResource")),
    "RUNTIME": Function("float", lambda v: format_time(int(v)), formats=True),
    "STRINGS_FROM_LIST": Function("value", _strings_from_list),
    "TIME": Function("int", lambda v: format_time(int(v)), formats=True),
    "UNHEALTH": Function("value", _unhealth),
    "UNIQUE": Function("value", _unique),
}


# ---------------------------------------------------------------- condor_q's own

#: condor_q's -cputime and -currentrun, which CPU_TIME follows as its time columns do
JOB_TIME = {"cputime": False, "current_run": False}


def _cpu_time(value, ad):
    """RemoteUserCpu with -cputime; else, as condor_q's RUN_TIME, the wall clock
    time of the earlier runs (not with -currentrun) and of the current one."""
    if type(value) not in (int, float) or type(value) is bool:
        return False, 0
    if JOB_TIME["cputime"]:
        return True, float(value)
    total = 0.0 if JOB_TIME["current_run"] else float(_look(ad, "RemoteWallClockTime") or 0)
    status, born = _look(ad, "JobStatus"), _look(ad, "ShadowBday")
    if status in (2, 6, 7) and type(born) is int and born:
        now = _look(ad, "ServerTime")
        total += (now if type(now) is int else int(time.time())) - born
    return True, total


# ---------------------------------------------------------------- condor_status' own

def _gpu_ids(text):
    return [item for item in text.replace(",", " ").split() if item] if isinstance(text, str) else []


#: the GPUs' property ads by Id and the GPUs offline, which condor_status gathers from
#: the slots' AvailableGPUs and OfflineGPUs with -gpus only (``ingest_gpus``); without
#: them GPUS_CAPS, GPUS_MEM and GPUS_NAMES print their OR character, as in HTCondor
GPU_INFO = {"props": None, "offline": set()}


def ingest_gpus(ads):
    """Gather the GPU property ads of ``ads`` (the nested ads of AvailableGPUs that
    have an Id) and their OfflineGPUs; the Ids new in each ad, in order."""
    props = GPU_INFO["props"] = {} if GPU_INFO["props"] is None else GPU_INFO["props"]
    added = []
    for ad in ads:
        new = []
        listed = ad.eval("AvailableGPUs")
        for item in listed if isinstance(listed, (list, tuple)) else ():
            gpu = item.eval("Id") if hasattr(item, "eval") else None
            if isinstance(gpu, str) and gpu not in props:
                props[gpu] = item
                new.append(gpu)
        GPU_INFO["offline"].update(_gpu_ids(_look(ad, "OfflineGPUs")))
        added.append(new)
    return added


def _gpu_props(value, prop):
    """(found values, missing) of property ``prop`` of the GPUs named in ``value``;
    a GPU offline is skipped."""
    props = GPU_INFO["props"] or {}
    found, missing = [], 0
    for gpu in _gpu_ids(value):
        prop_value = props[gpu].eval(prop) if gpu in props else UNDEFINED
        if prop_value is not UNDEFINED and prop_value is not ERROR:
            found.append(prop_value)
        elif gpu not in GPU_INFO["offline"]:
            missing += 1
    return found, missing


def _gpus_range(prop, scale, text):
    """Capability (its highest above 0) or GlobalMemoryMB (its lowest above 0, in GB)
    of the GPUs, ``low to high`` when they differ; every GPU not offline must have it."""
    def fn(value, _ad):
        found, missing = _gpu_props(value, prop)
        numbers = [float(v) for v in found if type(v) in (int, float) and type(v) is not bool]
        if not numbers or missing or (min(numbers) if scale > 1 else max(numbers)) <= 0:
            return False, value
        low, high = min(numbers) / scale, max(numbers) / scale
        return True, (text % low + " to " if low < high else "") + text % high + (" GB" if scale > 1 else "")
    return fn


def _gpus_names(value, _ad):
    found, missing = _gpu_props(value, "DeviceName")
    names = sorted({v for v in found if isinstance(v, str)})
    if not found or missing:
        return False, value
    return True, ",".join(names)


def _num_dslots(value, ad):
    if value is UNDEFINED and ad.eval("DynamicSlot") is UNDEFINED:
        return True, 1
    return type(value) is int, value


def _slot_letter(static, partitionable):
    def fn(value, _ad):
        text = value if isinstance(value, str) else ""
        if text == "Static":
            return True, static
        if text == "Dynamic" and static == "s":
            return True, "d"
        if text == "Partitionable":
            return True, partitionable
        return True, text[:1]
    return fn


def _total_gpus(_value, ad):
    assigned = _look(ad, "AssignedGPUs")
    if not isinstance(assigned, str):
        return False, ""
    ids = _gpu_ids(assigned)
    offline = [gpu for gpu in _gpu_ids(_look(ad, "OfflineGPUs")) if gpu.lower() in {i.lower() for i in ids}]
    return True, "%4d-%d" % (len(ids), len(offline)) if offline else "%4d" % len(ids)


#: each tool's own functions, found before FUNCTIONS
LOCAL = {
    "condor_q": {
        "CPU_TIME": Function("value", _cpu_time, "%T", attrs=("JobStatus", "ServerTime", "ShadowBday",
                                                               "RemoteWallClockTime", "LastRemoteWallClockTime")),
    },
    "condor_status": {
        "GPUS_CAPS": Function("value", _gpus_range("Capability", 1, "%.1f")),
        "GPUS_MEM": Function("value", _gpus_range("GlobalMemoryMB", 1024.0, "%.1f")),
        "GPUS_NAMES": Function("value", _gpus_names),
        "NUM_DSLOTS": Function("value", _num_dslots, "%4d"),
        "SLOT_COUNT_TAG": Function("value", _slot_letter("S", " ")),
        "SLOT_TYPE_LETTER": Function("value", _slot_letter("s", " ")),
        "TOTAL_GPUS": Function("value", _total_gpus),
    },
}


def lookup(name, tool=None):
    """The function ``name`` of ``tool`` ("condor_q", "condor_status"), None if unknown."""
    return LOCAL.get(tool, {}).get(name) or FUNCTIONS.get(name)
