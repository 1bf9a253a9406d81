"""The job event log ("user log") that a job's ``log`` command names.

Each event is written as::

    NNN (CCC.PPP.SSS) YYYY-MM-DD HH:MM:SS text
    <body lines, each starting with a tab, or ``Name = value`` lines>
    ...

``NNN`` is the event number, ``CCC.PPP.SSS`` the cluster, process and
subprocess (three digits at least; an event of a whole cluster, 035 and 036,
has process ``-01``), the time is local time in the ISO form
current HTCondor writes (``DateStyle.SHORT`` gives the older ``MM/DD
HH:MM:SS``, without a year). A line of three dots ends each event.
``render_event`` writes one event's text, ``parse_events`` reads a log back
(both date forms, and ``MM/DD/YY HH:MM:SS``).
The events' details are kept as ``info`` with the names HTCondor's
``JobEventLog`` gives them (``ReturnValue``, ``HoldReason``, ...).
"""

import enum
import re
import time
from dataclasses import dataclass, field

from gridtools.errors import InputError

SEPARATOR = "..."
ZERO_USAGE = "Usr 0 00:00:00, Sys 0 00:00:00"
DEFAULT_HOST = "<127.0.0.1:0>"  # the sinful string shown when a caller gives none


class EventType(enum.IntEnum):
    SUBMIT = 0
    EXECUTE = 1
    EXECUTABLE_ERROR = 2
    CHECKPOINTED = 3
    JOB_EVICTED = 4
    JOB_TERMINATED = 5
    IMAGE_SIZE = 6
    SHADOW_EXCEPTION = 7
    GENERIC = 8
    JOB_ABORTED = 9
    JOB_SUSPENDED = 10
    JOB_UNSUSPENDED = 11
    JOB_HELD = 12
    JOB_RELEASED = 13
    NODE_EXECUTE = 14
    NODE_TERMINATED = 15
    POST_SCRIPT_TERMINATED = 16
    JOB_AD_INFORMATION = 28
    PRE_SKIP = 34
    CLUSTER_SUBMIT = 35
    CLUSTER_REMOVE = 36
    FILE_TRANSFER = 40


class DateStyle(enum.Enum):
    ISO = "%Y-%m-%d %H:%M:%S"
    SHORT = "%m/%d %H:%M:%S"


@dataclass
class Event:
    type: EventType
    cluster: int
    proc: int = 0
    subproc: int = 0
    timestamp: float = 0.0  # seconds since the epoch
    info: dict = field(default_factory=dict)


# ------------------------------------------------------------------ writing

def _usage(seconds):
    seconds = int(seconds or 0)
    days, rest = divmod(seconds, 86400)
    return f"{days} {rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def usage_line(user=0, system=0):
    return f"Usr {_usage(user)}, Sys {_usage(system)}"


def header(event, style=DateStyle.ISO):
    stamp = time.strftime(style.value, time.localtime(event.timestamp))
    return (f"{int(event.type):03d} ({event.cluster:03d}.{event.proc:03d}."
            f"{event.subproc:03d}) {stamp} ")


def _submit(info, what="Job"):
    text = f"{what} submitted from host: {info.get('SubmitHost', DEFAULT_HOST)}\n"
    for key in ("LogNotes", "UserNotes"):
        if info.get(key):
            text += f"    {_one_line(info[key])[:8191]}\n"
    return text


def _cluster_submit(info):
    """A cluster materialized late entered the queue (its procs' 000 events follow as
    they do)."""
    return _submit(info, "Cluster")


#: the words of the ways a cluster materialized late left the queue (its Completion:
#: HTCondor's ClusterRemoveEvent codes)
COMPLETIONS = {0: "Incomplete", 1: "Complete", 2: "Paused"}


def _cluster_remove(info):
    """A cluster materialized late left the queue: how many procs it made (NextProcId)
    from how many items (NextRow), and whether it made them all (Completion)."""
    code = int(info.get("Completion", 0))
    word = COMPLETIONS.get(code, f"Error {code}")
    text = (f"Cluster removed\n\tMaterialized {int(info.get('NextProcId', 0))} jobs from "
            f"{int(info.get('NextRow', 0))} items.\t{word}\n")
    if info.get("Notes"):
        text += f"\t{_one_line(info['Notes'])}\n"
    return text


def _one_line(text):
    """A note as one line of the log (a newline would start a line the readers misread)."""
    return " ".join(str(text).splitlines())


def _execute(info):
    """The host, the slot, and the run's properties."""
    return f"Job executing on host: {info.get('ExecuteHost', DEFAULT_HOST)}\n" + _slot_and_props(info)


def _slot_and_props(info):
    """The lines after an execute event's first: the slot's name (``SlotName``) and the
    run's properties (``ExecuteProps``: name -> the value's text), one ``Name = value``
    line each, sorted by name whatever its case."""
    text = ""
    if info.get("SlotName"):
        text += f"\tSlotName: {info['SlotName']}\n"
    props = info.get("ExecuteProps") or {}
    for name in sorted(props, key=str.lower):
        text += f"\t{name} = {_one_line(props[name])}\n"
    return text


def _rusage_block(info, totals, by="Job"):
    lines = [f"\t\t{usage_line(info.get('RunRemoteUserCpu'), info.get('RunRemoteSysCpu'))}"
             "  -  Run Remote Usage\n",
             f"\t\t{usage_line()}  -  Run Local Usage\n"]
    if totals:
        lines += [f"\t\t{usage_line(info.get('TotalRemoteUserCpu'), info.get('TotalRemoteSysCpu'))}"
                  "  -  Total Remote Usage\n", f"\t\t{usage_line()}  -  Total Local Usage\n"]
    lines += [f"\t{int(info.get('SentBytes', 0))}  -  Run Bytes Sent By {by}\n",
              f"\t{int(info.get('ReceivedBytes', 0))}  -  Run Bytes Received By {by}\n"]
    if totals:
        lines += [f"\t{int(info.get('TotalSentBytes', 0))}  -  Total Bytes Sent By {by}\n",
                  f"\t{int(info.get('TotalReceivedBytes', 0))}  -  Total Bytes Received By {by}\n"]
    return "".join(lines)


def _termination(info):
    """The lines that say how a job ended: its return value, or its signal."""
    if info.get("TerminatedNormally", True):
        return f"\t(1) Normal termination (return value {int(info.get('ReturnValue', 0))})\n"
    return (f"\t(0) Abnormal termination (signal {int(info.get('TerminatedBySignal', 0))})\n"
            "\t(0) No core file\n")


def _resources(info):
    """The table of the run's resources (``UsageAd``: attribute -> value, see
    ``usagetable``), "" when the event has none."""
    if not info.get("UsageAd"):
        return ""
    from gridtools.formats.condor import usagetable
    return usagetable.render(info["UsageAd"])


def _terminated(info):
    return "Job terminated.\n" + _termination(info) + _rusage_block(info, totals=True) + _resources(info)


def _node_execute(info):
    """A node of a parallel universe job started (its number is the event's subproc), on
    its slot."""
    return f"Node {int(info.get('Node', 0))} executing on host: {info.get('ExecuteHost', DEFAULT_HOST)}\n" + \
        _slot_and_props(info)


def _node_terminated(info):
    """A node of a parallel universe job exited: how, and its usage."""
    return f"Node {int(info.get('Node', 0))} terminated.\n" + _termination(info) + \
        _rusage_block(info, totals=True, by="Node")


def _evicted(info):
    """A job evicted from its slot, as current HTCondor writes it: ``(0) CPU times`` before
    the usage (older releases wrote ``(0) Job was not checkpointed.``; both are read);
    with ``TerminatedAndRequeued`` one that exited and was put back by its own policy:
    after the usage come how it ended and why it was requeued. A reason code other
    than 0 is in the first line either way."""
    code = int(info.get("ReasonCode") or 0)
    head = f"Job was evicted. Code {code} Subcode {int(info.get('ReasonSubCode') or 0)}\n" if code \
        else "Job was evicted.\n"
    if not info.get("TerminatedAndRequeued"):
        text = head + "\t(0) CPU times\n" + _rusage_block(info, totals=False)
        return text + (f"\tReason: {info['Reason']}\n" if info.get("Reason") else "") + _resources(info)
    text = head + "\t(0) Job terminated and was requeued\n" + _rusage_block(info, totals=False)
    text += _termination(info)
    if info.get("Reason"):
        text += f"\t{info['Reason']}\n"
    return text + _resources(info)


def _image_size(info):
    text = f"Image size of job updated: {int(info.get('Size', 0))}\n"
    if "MemoryUsage" in info:
        text += f"\t{int(info['MemoryUsage'])}  -  MemoryUsage of job (MB)\n"
    if "ResidentSetSize" in info:
        text += f"\t{int(info['ResidentSetSize'])}  -  ResidentSetSize of job (KB)\n"
    return text


def _reason_event(title):
    def render(info):
        text = f"{title}\n"
        if info.get("Reason"):
            text += f"\t{info['Reason']}\n"
        return text
    return render


def _held(info):
    text = f"Job was held.\n\t{info.get('HoldReason', 'Unspecified reason')}\n"
    return text + f"\tCode {int(info.get('HoldReasonCode', 0))} Subcode {int(info.get('HoldReasonSubCode', 0))}\n"


def _job_ad(info):
    from gridtools.classad.values import unparse_value
    lines = ["Job ad information event triggered.\n"]
    for name, value in info.items():
        lines.append(f"{name} = {unparse_value(value)}\n")
    return "".join(lines)


def _generic(info):
    return f"{info.get('Info', '')}\n"


def _post_script(info):
    """A DAG node's POST script ended (DAGMan writes it to the DAG's nodes log)."""
    if info.get("TerminatedNormally", True):
        how = f"\t(1) Normal termination (return value {int(info.get('ReturnValue', 0))})\n"
    else:                                   # (no core file line, unlike a job's end)
        how = f"\t(0) Abnormal termination (signal {int(info.get('TerminatedBySignal', 0))})\n"
    text = "POST Script terminated.\n" + how
    if info.get("DAGNodeName"):
        text += f"    DAG Node: {info['DAGNodeName']}\n"
    return text


def _pre_skip(info):
    """A DAG node's PRE script exited with the node's PRE_SKIP value: DAGMan writes it to
    the DAG's nodes log, noted ``DAG Node: NAME`` (the note is not optional)."""
    return ("PRE script return value is PRE_SKIP value\n"
            f"    {_one_line(info.get('SkipEventLogNotes', ''))[:8191]}\n")


#: the words of the file transfer event (040) by its Type (HTCondor's FileTransferEventType;
#: the cell has no transfer queue, so never the queued ones, 1 and 4)
TRANSFER_WORDS = {2: "Started transferring input files", 3: "Finished transferring input files",
                  5: "Started transferring output files", 6: "Finished transferring output files"}


def _file_transfer(info):
    """A stage of a job's file copying: its Type, and the host the input files go to."""
    text = TRANSFER_WORDS[int(info["Type"])] + "\n"
    if info.get("Host"):
        text += f"\tTransferring to host: {_one_line(info['Host'])}\n"
    return text


_WRITERS = {
    EventType.SUBMIT: _submit,
    EventType.EXECUTE: _execute,
    EventType.JOB_EVICTED: _evicted,
    EventType.JOB_TERMINATED: _terminated,
    EventType.NODE_EXECUTE: _node_execute,
    EventType.NODE_TERMINATED: _node_terminated,
    EventType.IMAGE_SIZE: _image_size,
    EventType.JOB_ABORTED: _reason_event("Job was aborted."),
    EventType.JOB_SUSPENDED: lambda info: "Job was suspended.\n\tNumber of processes actually suspended: "
                                          f"{int(info.get('NumberOfPIDs', 1))}\n",
    EventType.JOB_UNSUSPENDED: lambda info: "Job was unsuspended.\n",
    EventType.JOB_HELD: _held,
    EventType.JOB_RELEASED: _reason_event("Job was released."),
    EventType.GENERIC: _generic,
    EventType.POST_SCRIPT_TERMINATED: _post_script,
    EventType.JOB_AD_INFORMATION: _job_ad,
    EventType.PRE_SKIP: _pre_skip,
    EventType.CLUSTER_SUBMIT: _cluster_submit,
    EventType.CLUSTER_REMOVE: _cluster_remove,
    EventType.FILE_TRANSFER: _file_transfer,
}


def render_event(event, style=DateStyle.ISO):
    """The text of one event, ending with its ``...`` line."""
    writer = _WRITERS.get(event.type)
    if writer is None:
        raise InputError(f"cannot write user log events of type {int(event.type)}")
    return header(event, style) + writer(event.info) + SEPARATOR + "\n"


def render_events(events, style=DateStyle.ISO):
    return "".join(render_event(e, style) for e in events)


# ------------------------------------------------------------------ reading

_HEADER = re.compile(
    r"^(\d{3}) \((\d+)\.(-?\d+)\.(\d+)\) "
    r"(\d\d/\d\d(?:/\d\d)? \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)(?:\.\d+)?"
    r"(?:Z|[+-]\d\d:?\d\d)? ?(.*)$")
_FORMATS = ("%m/%d/%y %H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")


def parse_time(text, year=None):
    """Seconds since the epoch of a local time stamp as the log writes it."""
    if text.count("/") == 1:  # MM/DD without a year: this year (or ``year``)
        year = year or time.localtime().tm_year
        text = f"{text[:5]}/{year % 100:02d}{text[5:]}"
    for fmt in _FORMATS:
        try:
            return time.mktime(time.strptime(text, fmt))
        except ValueError:
            continue
    raise InputError(f"bad time stamp in user log: {text}")


def parse_events(text, strict=True):
    """The events of a log's text; a trailing event without its ``...``
    line (still being written) is left out. Not ``strict``: the events before
    the first one that cannot be read (as HTCondor's log reader stops there)."""
    events, current, body = [], None, []
    for number, line in enumerate(text.splitlines(), 1):
        if current is None:
            if not line.strip():
                continue
            m = _HEADER.match(line)
            if not m:
                if not strict:
                    return events
                raise InputError(f"user log line {number}: not an event header: {line[:60]}")
            current, body = m, [m.group(6)]
        elif line.rstrip() == SEPARATOR:
            try:
                events.append(_event(current, body))
            except InputError:
                if strict:
                    raise
                return events
            current = None
        else:
            body.append(line)
    return events


def _event(m, body):
    number = int(m.group(1))
    try:
        kind = EventType(number)
    except ValueError:
        kind = number
    reader = _READERS.get(kind, _read_text)
    return Event(kind, int(m.group(2)), int(m.group(3)), int(m.group(4)),
                 parse_time(m.group(5)), reader(body))


def _after(prefix, line):
    return line[len(prefix):].strip() if line.startswith(prefix) else None


def _read_submit(body):
    info = {"SubmitHost": _after("Job submitted from host:", body[0]) or ""}
    if len(body) > 1 and body[1].strip():
        info["LogNotes"] = body[1].strip()
    if len(body) > 2 and body[2].strip():
        info["UserNotes"] = body[2].strip()
    return info


def _read_cluster_submit(body):
    info = _read_submit(body)
    info["SubmitHost"] = _after("Cluster submitted from host:", body[0]) or ""
    return info


_MATERIALIZED = re.compile(r"\s*Materialized (-?\d+) jobs from (-?\d+) items\.\s*(.*)$")


def _read_cluster_remove(body):
    info = {"NextProcId": 0, "NextRow": 0, "Completion": 0}
    lines = body[1:]
    if lines:
        m = _MATERIALIZED.match(lines[0])
        rest = lines[0]
        if m:
            info["NextProcId"], info["NextRow"], rest = int(m.group(1)), int(m.group(2)), m.group(3)
        word = rest.strip().lower()
        if word.startswith("error"):
            code = word[5:].strip()
            info["Completion"] = int(code) if code.lstrip("-").isdigit() and int(code) < 0 else -1
        else:
            info["Completion"] = 1 if word.startswith("complete") else 2 if word.startswith("paused") else 0
    if len(lines) > 1 and lines[1].strip():
        info["Notes"] = lines[1].strip()
    return info


def _read_execute(body):
    return _read_slot_and_props(body[1:], {"ExecuteHost": _after("Job executing on host:", body[0]) or ""})


def _read_slot_and_props(body, info):
    """``info`` with the slot's name and the run's properties of an execute event's lines
    after its first."""
    props = {}
    for line in body:
        slot = _after("SlotName:", line.strip())
        if slot is not None:
            info["SlotName"] = slot
            continue
        name, eq, value = line.strip().partition(" = ")
        if eq and name:
            props[name] = value
    if props:
        info["ExecuteProps"] = props
    return info


_BYTES = re.compile(r"^\s*([\d.]+)\s+-\s+(Run|Total) Bytes (Sent|Received) By (?:Job|Node)")
_USAGE = re.compile(r"Usr (\d+) (\d\d):(\d\d):(\d\d), Sys (\d+) (\d\d):(\d\d):(\d\d)\s+-\s+(Run|Total) Remote Usage")


def _read_usage(body, info):
    for line in body:
        m = _BYTES.match(line)
        if m:
            key = {"Run": "", "Total": "Total"}[m.group(2)] + \
                {"Sent": "SentBytes", "Received": "ReceivedBytes"}[m.group(3)]
            info[key] = int(float(m.group(1)))
        m = _USAGE.search(line)
        if m:
            g = [int(x) for x in m.groups()[:8]]
            prefix = "RunRemote" if m.group(9) == "Run" else "TotalRemote"
            info[prefix + "Usage"] = line.strip().split("  -  ")[0]
            info[prefix + "UserCpu"] = g[0] * 86400 + g[1] * 3600 + g[2] * 60 + g[3]
            info[prefix + "SysCpu"] = g[4] * 86400 + g[5] * 3600 + g[6] * 60 + g[7]
    return info


def _read_termination(lines, info):
    for line in lines:
        m = re.search(r"Normal termination \(return value (-?\d+)\)", line)
        if m:
            info.update(TerminatedNormally=True, ReturnValue=int(m.group(1)))
        m = re.search(r"Abnormal termination \(signal (\d+)\)", line)
        if m:
            info.update(TerminatedNormally=False, TerminatedBySignal=int(m.group(1)))
        core = _after("(1) Corefile in:", line.strip())
        if core:
            info["CoreFile"] = core
    return info


def _read_terminated(body):
    body, info = _read_resources(body, {})
    return _read_usage(body, _read_termination(body[1:3], info))


def _read_resources(body, info):
    """(the body's lines before its table of resources, ``info`` with the table's usage
    ad as ``UsageAd`` when there is one)."""
    from gridtools.formats.condor import usagetable
    for at, line in enumerate(body[1:], 1):
        if usagetable.is_heading(line):
            usage = usagetable.parse(body[at:])
            if usage:
                info["UsageAd"] = usage
            return body[:at], info
    return body, info


def _read_node_execute(body):
    m = re.match(r"Node (\d+) executing on host: ?(.*)$", body[0].strip())
    if not m:
        return {"Info": body[0]}
    return _read_slot_and_props(body[1:], {"Node": int(m.group(1)), "ExecuteHost": m.group(2).strip()})


def _read_node_terminated(body):
    m = re.match(r"Node (\d+) terminated", body[0].strip())
    info = {"Node": int(m.group(1))} if m else {}
    return _read_usage(body, _read_termination(body[1:3], info))


def _read_evicted(body):
    body, info = _read_resources(body, {})
    info["Checkpointed"] = any("(1) Job was checkpointed" in line for line in body)
    m = re.search(r"Code (\d+) Subcode (-?\d+)", body[0]) if body else None
    if m:
        info["ReasonCode"], info["ReasonSubCode"] = int(m.group(1)), int(m.group(2))
    said = [line.strip()[len("Reason: "):] for line in body[1:] if line.strip().startswith("Reason: ")]
    if said:
        info["Reason"] = said[-1]
    if len(body) > 1 and "Job terminated and was requeued" in body[1]:
        info["TerminatedAndRequeued"] = True
        rest = [line for line in body[2:] if not _BYTES.match(line) and not _USAGE.search(line)]
        ends = [i for i, line in enumerate(rest) if "termination (" in line]
        if ends:
            last = ends[0] + (2 if "Abnormal" in rest[ends[0]] else 1)
            _read_termination(rest[ends[0]:last], info)
            if last < len(rest) and rest[last].strip():
                info["Reason"] = rest[last].strip()
    return _read_usage(body, info)


def _read_image_size(body):
    m = re.search(r"Image size of job updated: (\d+)", body[0])
    info = {"Size": int(m.group(1)) if m else 0}
    for line in body[1:]:
        m = re.match(r"\s*(\d+)\s+-\s+(MemoryUsage|ResidentSetSize|ProportionalSetSize)", line)
        if m:
            info[m.group(2)] = int(m.group(1))
    return info


def _read_reason(body):
    lines = [line.strip() for line in body[1:] if line.strip()]
    return {"Reason": lines[0]} if lines else {}


def _read_held(body):
    lines = [line.strip() for line in body[1:] if line.strip()]
    info = {"HoldReason": lines[0] if lines else ""}
    for line in lines[1:]:
        m = re.match(r"Code (-?\d+) Subcode (-?\d+)", line)
        if m:
            info["HoldReasonCode"], info["HoldReasonSubCode"] = int(m.group(1)), int(m.group(2))
    return info


def _read_job_ad(body):
    from gridtools.classad import parse
    info = {}
    for line in body[1:]:
        name, eq, value = line.partition(" = ")
        if eq:
            try:
                info[name.strip()] = parse(value).eval()
            except Exception:  # a value our language cannot read stays text
                info[name.strip()] = value
    return info


def _read_text(body):
    return {"Text": "\n".join(body)}


def _read_post_script(body):
    info = _read_termination(body[1:2], {})
    for line in body[1:]:
        name = _after("DAG Node:", line.strip())
        if name is not None:
            info["DAGNodeName"] = name
    return info


def _read_pre_skip(body):
    notes = next((line.strip() for line in body[1:] if line.strip()), "")
    return {"SkipEventLogNotes": notes} if notes else {}


def _read_file_transfer(body):
    kinds = {words: kind for kind, words in TRANSFER_WORDS.items()}
    info = {"Type": kinds.get(body[0].strip(), 0)}
    for line in body[1:]:
        host = _after("Transferring to host:", line.strip())
        if host is not None:
            info["Host"] = host
    return info


_READERS = {
    EventType.POST_SCRIPT_TERMINATED: _read_post_script,
    EventType.SUBMIT: _read_submit,
    EventType.EXECUTE: _read_execute,
    EventType.JOB_EVICTED: _read_evicted,
    EventType.JOB_TERMINATED: _read_terminated,
    EventType.NODE_EXECUTE: _read_node_execute,
    EventType.NODE_TERMINATED: _read_node_terminated,
    EventType.IMAGE_SIZE: _read_image_size,
    EventType.JOB_ABORTED: _read_reason,
    EventType.JOB_HELD: _read_held,
    EventType.JOB_RELEASED: _read_reason,
    EventType.GENERIC: lambda body: {"Info": body[0]},
    EventType.JOB_AD_INFORMATION: _read_job_ad,
    EventType.PRE_SKIP: _read_pre_skip,
    EventType.CLUSTER_SUBMIT: _read_cluster_submit,
    EventType.CLUSTER_REMOVE: _read_cluster_remove,
    EventType.FILE_TRANSFER: _read_file_transfer,
}


# ------------------------------------------------------------- for condor_wait

def job_outcomes(events):
    """(cluster, proc) -> the type of the last submit/terminate/abort event
    seen for that job: what ``condor_wait`` needs to know."""
    state = {}
    for event in events:
        if event.type in (EventType.SUBMIT, EventType.JOB_TERMINATED, EventType.JOB_ABORTED):
            state[(event.cluster, event.proc)] = event.type
    return state


def all_done(events, cluster=None, proc=None):
    """Whether every job the log submitted (of ``cluster``/``proc`` when
    given) has terminated or been aborted; False when none was submitted."""
    outcomes = {key: kind for key, kind in job_outcomes(events).items()
                if (cluster is None or key[0] == cluster) and (proc is None or key[1] == proc)}
    return bool(outcomes) and all(kind is not EventType.SUBMIT for kind in outcomes.values())
