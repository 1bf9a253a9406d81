"""qstat: show the status of jobs and queues (Grid Engine dialect).

Reads the daemon's published snapshot; the plain listing of 10,000 jobs
costs one file read and string formatting, no configuration parsing.
"""

import os
import pwd
import sys
import time

from gridtools.cli.sge import qstatus
from gridtools.errors import GridError, UsageError

HEADER = ("job-ID  prior   name       user         state submit/start at     "
          "queue                          slots ja-task-ID ")
RULE = "-" * 113

# options taking one argument
_WITH_ARG = {"-u", "-s", "-q", "-l", "-pe", "-qs", "-U", "-explain", "-g", "-F", "-j"}


class Options:
    def __init__(self):
        self.users = None
        self.states = None
        self.full = False
        self.job_ids = None
        self.xml = False
        self.json = False
        self.resources = False
        self.tasks = False
        self.ext = False
        self.pri = False
        self.urg = False
        self.group = None
        self.queues = []
        self.explain = None
        self.full_resources = None
        self.other = {}


def parse_args(argv):
    opts = Options()
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in ("-j", "-F") and (i + 1 >= len(argv) or argv[i + 1].startswith("-")):
            if word == "-j":
                opts.job_ids = []
            else:
                opts.full, opts.full_resources = True, []
            i += 1
            continue
        if word in _WITH_ARG:
            if i + 1 >= len(argv):
                raise UsageError(f'option "{word}" requires an argument')
            _apply(opts, word, argv[i + 1])
            i += 2
            continue
        flag = {"-f": "full", "-xml": "xml", "-json": "json", "-r": "resources", "-t": "tasks",
                "-ext": "ext", "-pri": "pri", "-urg": "urg"}.get(word)
        if flag is None and word not in ("-ne", "-ncb"):
            raise UsageError(f'invalid option argument "{word}"')
        if flag:
            setattr(opts, flag, True)
        i += 1
    return opts


def _apply(opts, word, value):
    if word == "-u":
        opts.users = [u for u in value.replace(" ", ",").split(",") if u]
    elif word == "-s":
        opts.states = value
    elif word == "-j":
        opts.job_ids = [v for v in value.split(",") if v]
    elif word == "-q":
        opts.queues.extend(v for v in value.split(",") if v)
        opts.full = opts.full
    elif word == "-g":
        opts.group = value
    elif word == "-explain":
        opts.explain = value
        opts.full = True
    elif word == "-F":
        opts.full = True
        opts.full_resources = [v for v in value.split(",") if v]
    else:
        opts.other[word] = value


def _me():
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def user_selected(owner, users):
    if users is None:
        return owner == _me()
    return "*" in users or owner in users


_STATE_FILTER = {
    "p": lambda s: "q" in s, "r": lambda s: s in ("r", "Rr", "t", "dr", "dt"),
    "s": lambda s: s in ("s", "S", "T"), "z": lambda s: s == "z",
    "h": lambda s: s.startswith("h"), "hu": lambda s: s.startswith("h"),
    "ho": lambda s: s.startswith("h"), "hs": lambda s: s.startswith("h"),
    "hd": lambda s: s.startswith("h"), "hj": lambda s: s.startswith("h"),
    "ha": lambda s: s.startswith("h"), "a": lambda s: s != "z",
}


def state_selected(state, wanted):
    if wanted is None:
        return state != "z"
    keys = []
    i = 0
    while i < len(wanted):
        two = wanted[i:i + 2]
        if two in _STATE_FILTER and len(two) == 2:
            keys.append(two)
            i += 2
        else:
            keys.append(wanted[i])
            i += 1
    return any(_STATE_FILTER.get(k, lambda s: False)(state) for k in keys)


def sort_rows(rows, info):
    """Running rows first (by job id), then pending ones by priority, then submission."""
    def key(row):
        active = row["state"] in qstatus.ACTIVE
        return (0 if active else 1, row["id"] if active else 0,
                -row.get("prio", 0.0) if not active else 0, row["time"] if not active else 0,
                row["id"], row.get("task") or 0)
    return sorted(rows, key=key)


def fmt_time(epoch):
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(epoch))


def job_line(row, info, with_queue=True):
    job = info.get(row["id"], {})
    parts = [f"{row['id']:>7} {row.get('prio', 0.0):.5f} {job.get('name', '')[:10]:<10} "
             f"{job.get('owner', '')[:12]:<12} {row['state']:<5} {fmt_time(row['time'])} "]
    if with_queue:
        parts.append(f"{row.get('queue', '')[:30]:<30} ")
    label = qstatus.task_label(row)
    parts.append(f"{row['slots']:>5} {label if label else ' ' * 7}")
    return "".join(parts)


def selected_rows(snap, opts):
    info = snap["jobs"]
    rows = [r for r in snap["rows"]
            if r["id"] in info and user_selected(info[r["id"]]["owner"], opts.users)
            and state_selected(r["state"], opts.states)]
    return sort_rows(rows, info)


def plain(snap, opts, out):
    rows = selected_rows(snap, opts)
    if not rows:
        return
    out.write(HEADER + "\n" + RULE + "\n")
    info = snap["jobs"]
    for row in rows:
        out.write(job_line(row, info) + "\n")


def main(argv, prog="qstat"):
    try:
        opts = parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    try:
        snap = qstatus.load()
        out = sys.stdout
        if opts.job_ids is not None:
            from gridtools.cli.sge import qstat_j
            return qstat_j.show(snap, opts, out)
        if opts.json:
            from gridtools.cli.sge import qstat_views
            return qstat_views.as_json(snap, opts, out)
        if opts.xml:
            from gridtools.cli.sge import qstat_views
            return qstat_views.as_xml(snap, opts, out)
        if opts.full or opts.group or opts.resources or opts.tasks or opts.ext or opts.pri or opts.urg:
            from gridtools.cli.sge import qstat_views
            return qstat_views.show(snap, opts, out)
        plain(snap, opts, out)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    return 0
