"""qhost: show the execution hosts, their load, queues and jobs (Grid Engine dialect).

Reads the daemon's status snapshot (see ``qstatus``). One line per host
after the ``global`` pseudo host; ``-F`` adds its resource values, ``-q`` its
queue instances, ``-j`` the jobs running there (``-u`` those of some users).
``-ncb`` leaves the host topology columns (NSOC, NCOR, NTHR) out, as Grid
Engine's qhost does. ``-st`` (a gridtools addition) adds a STATE column: the
state the dispatcher publishes for the host, or Idle / Running / Busy from the
slots in use.
"""

import fnmatch
import sys
import time

from gridtools.cli.sge import loadvalues, qstatus
from gridtools.cli.sge.tokens import list_words, split_list
from gridtools.errors import GridError, UsageError

HEADER = ("HOSTNAME                ARCH         NCPU NSOC NCOR NTHR  LOAD  MEMTOT  MEMUSE  "
          "SWAPTO  SWAPUS")
RULE = "-" * 94
#: the table without the host topology columns (NSOC, NCOR, NTHR), as -ncb has it
HEADER_NCB = "HOSTNAME                ARCH         NCPU  LOAD  MEMTOT  MEMUSE  SWAPTO  SWAPUS"
RULE_NCB = "-" * 79
JOB_HEADER = ("   job-ID  prior   name       user         state submit/start at     queue      "
              "master ja-task-ID ")
JOB_RULE = "   " + "-" * 94
_FLAGS = {"-q": "queues", "-j": "jobs", "-xml": "xml", "-json": "json", "-ncb": "ncb",
          "-help": "help", "-st": "states"}


class Options:
    def __init__(self):
        self.queues = False
        self.jobs = False
        self.xml = False
        self.json = False
        self.ncb = False
        self.help = False
        self.states = False
        self.resources = None       # -F: [] for all, else names
        self.hosts = []             # -h
        self.requests = {}          # -l
        self.users = None           # -u


def parse_args(argv):
    opts = Options()
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "-F":
            # Grid Engine splits each word of -F at commas only (a blank is part of a
            # name), as those of -h and -u, and gathers the names of every -F given
            words, i = list_words(argv, i)
            opts.resources = (opts.resources or []) + [v for w in words or () for v in w.split(",") if v]
            continue
        if word in ("-h", "-l", "-u"):
            if i + 1 >= len(argv):
                raise UsageError(f'invalid option argument "{word}"')
            # a list: the next word (even one that starts with "-"), then every further
            # word up to the next option, each comma- or blank-separated
            first = argv[i + 1]
            more, i = list_words(argv, i + 1)
            _apply(opts, word, ",".join([first] + (more or [])))
            continue
        flag = _FLAGS.get(word)
        if flag is None:
            raise UsageError(f'invalid option argument "{word}"')
        setattr(opts, flag, True)
        i += 1
    return opts


# sge_is_expression(): a name holding one of these is a pattern, not looked up
_PATTERN = frozenset("*?[]&|!()")
_HOST_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")


def _apply(opts, word, value):
    # Grid Engine splits the words of -h and -u at commas only (a blank is part of a
    # name), those of -l at commas and blanks
    items = [v for v in value.split(",") if v] if word in ("-h", "-u") else split_list(value)
    if not items:
        raise UsageError(f'invalid option argument "{word} {value}"')
    if word == "-h":
        opts.hosts += [_resolvable(name) for name in items]
    elif word == "-u":
        opts.users = items
        opts.jobs = True
    else:
        from gridtools.cli.sge.optvalues import parse_resource_list
        opts.requests.update(parse_resource_list(value))


def _resolvable(name):
    """A -h name that is no pattern is resolved by Grid Engine, which gives up on one no
    resolver takes (a blank in it, say): the usage, then the error, exit status 1."""
    if not _PATTERN & set(name) and not set(name) <= _HOST_NAME:
        raise GridError(f'error: can\'t resolve hostname "{name}"')
    return name


# ---------------------------------------------------------------- data

def host_names(snap, opts):
    """Execution hosts to show, by name, after -h and -l."""
    names = sorted(set(snap.get("exechosts") or ()) | set(snap.get("hosts") or ()))
    if not names:
        from gridtools.spool import config
        names = [n for n in config.names("exechost") if n != "global"]
    if opts.hosts:
        names = [n for n in names if any(fnmatch.fnmatchcase(n.lower(), p.lower()) for p in opts.hosts)]
    if opts.requests:
        names = [n for n in names if _meets(n, snap, opts.requests)]
    return names


def _host_value(host, name, snap):
    load = (snap.get("hosts") or {}).get(host) or {}
    values = (snap.get("host_values") or {}).get(host) or {}
    if name in ("hostname", "h"):
        return host
    return values.get(name, load.get(name))


def _meets(host, snap, requests):
    complexes = snap.get("complexes") or {}
    by_short = {row[0]: full for full, row in complexes.items()}
    for raw, wanted in requests.items():
        name = raw if raw in complexes else by_short.get(raw, raw)
        offered = _host_value(host, name, snap)
        if offered is not None and not loadvalues.matches_request(name, offered, wanted, complexes):
            return False
    return True


def host_queues(host, snap):
    return sorted((q for q in snap.get("queues") or () if q["host"] == host), key=lambda q: q["queue"])


def queue_jobs(host, snap, opts):
    """``[(queue instance, [(row, job info, queue instance, label, shown), ...]), ...]``:
    the queue instances of ``host`` in order, each with one entry per job slot it holds,
    as Grid Engine's qhost lists them under the queue. ``label`` is MASTER for the first
    slot of a task's master queue and SLAVE for every other; a master queue of a PE whose
    job_is_first_task is FALSE has one line more. ``shown`` is False on the lines after a
    task's first one in a queue, where Grid Engine leaves the job's columns blank."""
    from gridtools.cli.sge import qstat
    owner_ok = qstat.user_filter(opts.users if opts.users is not None else ["*"])
    found = {}
    for row in sorted((r for r in snap["rows"] if "granted" in r and r["state"] != "z"),
                      key=lambda r: (r["id"], r.get("task") or 0)):
        job = snap["jobs"].get(row["id"], {})
        if not owner_ok(job.get("owner", "")):
            continue
        for i, (queue, qhost, slots) in enumerate(row["granted"]):
            if qhost != host:
                continue
            count = max(1, slots) if job.get("pe") else 1
            if i == 0 and row.get("pe"):     # a master that is no task holds no slot: one more line
                from gridtools.cli.sge.cellfacts import job_is_first_task
                count += not job_is_first_task(row["pe"])
            name = f"{queue}@{qhost}"
            for slot in range(count):
                label = "MASTER" if i == 0 and slot == 0 else "SLAVE"
                found.setdefault(name, []).append((row, job, name, label, slot == 0))
    order = [q["name"] for q in host_queues(host, snap)]
    order += sorted(set(found) - set(order))
    return [(name, found.get(name, [])) for name in order]


def host_jobs(host, snap, opts):
    """(row, job info, queue instance, master label) of each job slot on ``host``, queue
    instance by queue instance (see ``queue_jobs``)."""
    return [item[:4] for _name, items in queue_jobs(host, snap, opts) for item in items]


def host_state(host, snap):
    """The host state for -st: as published by the dispatcher, else from slot use."""
    load = (snap.get("hosts") or {}).get(host)
    if load and load.get("state"):
        return load["state"]
    if not load:
        return "Down"
    queues = host_queues(host, snap)
    used = sum(q["used"] for q in queues)
    total = sum(q["slots"] for q in queues)
    if not queues:
        return "None"
    if used == 0:
        return "Idle"
    return "Busy" if used >= total else "Running"


def host_columns(host, snap):
    """The values of the host table columns (text), '-' where unknown."""
    load = (snap.get("hosts") or {}).get(host) or {}

    def num(name):
        value = load.get(name)
        return str(int(float(value))) if value is not None else "-"

    def mem(name):
        value = loadvalues.to_number(load[name]) if name in load else None
        return loadvalues.memory(value, 1) if value is not None else "-"
    avg = load.get("load_avg")
    return {"arch_string": load.get("arch", "-"), "num_proc": num("num_proc"), "m_socket": num("m_socket"),
            "m_core": num("m_core"), "m_thread": num("m_thread"),
            "load_avg": f"{float(avg):.2f}" if avg is not None else "-",
            "mem_total": mem("mem_total"), "mem_used": mem("mem_used"),
            "swap_total": mem("swap_total"), "swap_used": mem("swap_used")}


GLOBAL_COLUMNS = {k: "-" for k in ("arch_string", "num_proc", "m_socket", "m_core", "m_thread",
                                   "load_avg", "mem_total", "mem_used", "swap_total", "swap_used")}


def held(host, snap):
    """name -> amount of the consumables running tasks hold on ``host`` (``global``: all)."""
    complexes = snap.get("complexes") or {}
    counted = {n: r for n, r in complexes.items() if len(r) > 4 and r[4] in ("YES", "JOB") and n != "slots"}
    found = {}
    for row in snap.get("rows", ()):
        hard = qstatus.task_hard(snap, row)
        for i, (_q, h, slots) in enumerate(row.get("granted") or ()):
            if host != "global" and h != host:
                continue
            found["slots"] = found.get("slots", 0.0) + float(slots)     # (the slots granted there)
            for name, cx in counted.items():
                amount = loadvalues.request_amount(name, cx, hard)
                once = cx[4] == "JOB" or qstatus.held_once(snap, row, name)
                share = (amount if i == 0 else 0.0) if once else amount * slots
                found[name] = found.get(name, 0.0) + share
    return found


def resources(host, snap, wanted):
    """(domain, name, value) of -F for a host (or ``global``); consumables show what is left."""
    complexes = snap.get("complexes") or {}
    found = []
    load = (snap.get("hosts") or {}).get(host) or {} if host != "global" else snap.get("global_load") or {}
    prefix = "gl" if host == "global" else "hl"
    found += [(prefix, n, loadvalues.qhost_value(n, v, complexes)) for n, v in loadvalues.ordered_loads(load, complexes)]
    used = None
    for name, value in ((snap.get("host_values") or {}).get(host) or {}).items():
        consumable = (complexes.get(name) or [None] * 5)[4] in ("YES", "JOB")
        prefix = "g" if host == "global" else "h"
        if consumable:
            used = held(host, snap) if used is None else used
            value = (loadvalues.to_number(value) or 0.0) - used.get(name, 0.0)
        found.append((prefix + ("c" if consumable else "f"), name, loadvalues.qhost_value(name, value, complexes)))
    if wanted:
        by_short = {row[0]: full for full, row in complexes.items()}
        names = {by_short.get(n, n) for n in wanted}
        found = [entry for entry in found if entry[1] in names]
    return found


# ---------------------------------------------------------------- text

#: what Grid Engine's qhost writes before the first value -F names show under a host (on
#: the value's line)
NAMED_RESOURCES = "    Host Resource(s):   "


def resource_lines(host, snap, wanted):
    """The -F lines of a host (or ``global``): ``   type:name=value``; when -F names
    resources (``wanted``), the first shown begins with ``NAMED_RESOURCES``."""
    lines = [f"   {d}:{n}={v}" for d, n, v in resources(host, snap, wanted)]
    if wanted and lines:
        lines[0] = NAMED_RESOURCES + lines[0]
    return lines


def host_line(name, cols, state=None, topology=True):
    """One host's line; without ``topology`` (-ncb) no NSOC, NCOR and NTHR columns."""
    line = f"{name[:23]:<23} {cols['arch_string'][:13]:<13}{cols['num_proc']:>4} "
    if topology:
        line += f"{cols['m_socket']:>4} {cols['m_core']:>4} {cols['m_thread']:>4} "
    line += (f"{cols['load_avg']:>5} {cols['mem_total']:>7} "
             f"{cols['mem_used']:>7} {cols['swap_total']:>7} {cols['swap_used']:>7}")
    return line + f"  {state}" if state is not None else line


def queue_line(q, snap):
    from gridtools.cli.sge import qstat_queues
    counts = f"{q.get('resv', 0)}/{q['used']}/{q['slots']}"
    return (f"   {q['queue'][:20]:<20} {qstat_queues.qtype(q)[:5]:<5} {counts[:14]:<14}"
            f"{qstat_queues.states(q, snap)}")


def job_line(row, job, queue, master, shown=True, with_queue=True):
    """One job line under a host (with ``-q`` under its queue, without the queue column);
    a line that is not ``shown`` leaves the job's own columns blank, as Grid Engine does
    for the further slots of a parallel task."""
    label = qstatus.task_label(row) if job.get("array") else ""
    if shown:
        when = time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(row["time"]))
        line = (f"   {row['id']:>7} {row.get('prio', 0.0):.5f} {job.get('name', '')[:10]:<10} "
                f"{job.get('owner', '')[:12]:<12} {row['state'][:5]:<5} {when} ")
    else:
        line = "   " + " " * 66
    if with_queue:
        line += f"{queue[:10]:<10} "
    return line + f"{master:<6} {label if label else ' ' * 7}"


def host_block(host, snap, opts, header=None):
    """The lines of one host. Without -q the job table's header comes once, before the
    first job line of all hosts: ``header`` is a list that holds it until then."""
    state = host_state(host, snap) if opts.states else None
    lines = [host_line(host, host_columns(host, snap), state, not opts.ncb)]
    if opts.resources is not None:
        lines += resource_lines(host, snap, opts.resources)
    if not (opts.queues or opts.jobs):
        return lines
    queues = {q["name"]: q for q in host_queues(host, snap)}
    if opts.jobs:
        per_queue = queue_jobs(host, snap, opts)
    else:
        per_queue = [(name, []) for name in queues]
    for name, items in per_queue:
        if opts.queues and name in queues:
            lines.append(queue_line(queues[name], snap))
        if items and not opts.queues and header:
            lines += header
            header.clear()
        lines += [job_line(*item, with_queue=not opts.queues) for item in items]
    return lines


def text(snap, opts):
    header, rule = (HEADER_NCB, RULE_NCB) if opts.ncb else (HEADER, RULE)
    if opts.states:
        header, rule = header + "  STATE", rule + "-" * 10
    lines = [header, rule, host_line("global", GLOBAL_COLUMNS, "-" if opts.states else None, not opts.ncb)]
    if opts.resources is not None:
        lines += resource_lines("global", snap, opts.resources)
    header = [JOB_HEADER, JOB_RULE]
    for host in host_names(snap, opts):
        lines += host_block(host, snap, opts, header)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main

def usage(stream):
    from gridtools.cli.sge import usage_text
    stream.write(usage_text.VERSION_LINE + "\n" + usage_text.QHOST)


def main(argv, prog="qhost"):
    from gridtools.cli.sge.qstat import parsed_or_usage
    opts, code = parsed_or_usage(parse_args, list(argv), usage)
    if opts is None:
        return code
    try:
        snap = qstatus.load()
        opts.requests = loadvalues.check_requests(opts.requests, snap.get("complexes"))
        for line in qstatus.warnings(snap):
            sys.stderr.write(line + "\n")
        if opts.xml or opts.json:
            from gridtools.cli.sge import qhost_xml
            sys.stdout.write(qhost_xml.as_json(snap, opts) if opts.json else qhost_xml.as_xml(snap, opts))
        else:
            sys.stdout.write(text(snap, opts))
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    return 0
