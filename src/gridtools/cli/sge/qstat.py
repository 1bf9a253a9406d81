"""qstat: show the status of jobs and queues (Grid Engine dialect).

Reads the daemon's published snapshot; the plain listing of 10,000 jobs
costs one file read and string formatting, no configuration parsing. This
module holds the option parsing, the job selection every view shares (owner,
state, hold kind) and the plain job table; the other views live in
``qstat_views`` (queues, -g c/d/t, -r, -ext/-pri/-urg, -xml, -json) and
``qstat_j`` (-j), imported only when asked for.
"""

import posix
import sys
import time

from gridtools.cli.sge import qstatus
from gridtools.cli.sge.tokens import split_list
from gridtools.spool.listing import TIME_FORMAT, line_format
from gridtools.errors import GridError, UsageError

# options taking one argument (-j and -F take an optional one)
_WITH_ARG = {"-u", "-s", "-q", "-l", "-pe", "-qs", "-U", "-explain", "-g", "-F", "-j"}
# options without argument -> Options attribute set to True
_FLAGS = {"-f": "full", "-xml": "xml", "-json": "json", "-r": "resources", "-t": "tasks",
          "-ext": "ext", "-pri": "pri", "-urg": "urg", "-ne": "hide_empty", "-ncb": "ncb",
          "-help": "help"}
# -s letters: single ones and the two-letter hold kinds
_STATE_WORDS = ("hu", "ho", "hs", "hd", "hj", "ha", "p", "r", "s", "z", "h", "a")
_EXPAND = {"h": ("hu", "ho", "hs", "hd", "hj", "ha"), "a": ("p", "r", "s")}
QUEUE_STATE_LETTERS = "acdosuACDES"
# running states that count as suspended for -s s
SUSPENDED = frozenset(qstatus.SUSPENDED)


class Options:
    """What the command line asked for."""

    def __init__(self):
        self.users = None            # None: the caller's jobs only
        self.states = None           # None: everything but finished jobs; else a set of words
        self.full = False
        self.job_ids = None          # -j given: list of job identifiers ([] for all)
        self.xml = False
        self.json = False
        self.resources = False       # -r
        self.tasks = False           # -t
        self.ext = False
        self.pri = False
        self.urg = False
        self.group = ""              # -g letters (c, d, t)
        self.queues = []             # -q
        self.queue_states = None     # -qs
        self.pes = []                # -pe
        self.requests = {}           # -l
        self.access_users = []       # -U
        self.explain = ""
        self.full_resources = None   # -F: [] for all, else names
        self.hide_empty = False
        self.ncb = False
        self.help = False

    @property
    def selects_queues(self):
        return bool(self.queues or self.pes or self.requests or self.access_users
                    or self.queue_states is not None)


def parse_states(value):
    """The -s argument as a set of words (p r s z hu ho hs hd hj ha); None if invalid."""
    words = set()
    i = 0
    while i < len(value):
        word = next((w for w in _STATE_WORDS if value.startswith(w, i)), None)
        if word is None:
            return None
        words.update(_EXPAND.get(word, (word,)))
        i += len(word)
    return words or None


#: options whose argument is a list that may not be empty
_LISTS = ("-u", "-q", "-pe", "-U", "-l", "-j")


def _apply(opts, word, value):
    """Store an option's argument; returns False when the argument is not valid."""
    if word in _LISTS and not split_list(value):
        return False
    if word == "-u":
        opts.users = split_list(value)
    elif word == "-s":
        opts.states = parse_states(value)
        return opts.states is not None
    elif word == "-j":
        opts.job_ids = split_list(value)
    elif word == "-q":
        opts.queues.extend(split_list(value))
    elif word == "-g":
        opts.group += value
        return bool(value) and all(c in "cdt" for c in value)
    elif word == "-explain":
        opts.explain += value
        opts.full = True
        return bool(value) and all(c in "acAE" for c in value)
    elif word == "-F":
        opts.full, opts.full_resources = True, split_list(value)
    elif word == "-qs":
        opts.queue_states = value
        return bool(value) and all(c in QUEUE_STATE_LETTERS for c in value)
    elif word == "-pe":
        opts.pes.extend(split_list(value))
    elif word == "-U":
        opts.access_users.extend(split_list(value))
    elif word == "-l":
        from gridtools.cli.sge.optvalues import parse_resource_list
        opts.requests.update(parse_resource_list(value))
    return True


def take_value(opts, argv, i):
    """Apply the option ``argv[i]`` with the argument after it; the index past them.
    UsageError when the argument is missing or not valid."""
    word = argv[i]
    if i + 1 >= len(argv):
        raise UsageError(f'invalid option argument "{word}"')
    if not _apply(opts, word, argv[i + 1]):
        raise UsageError(f'invalid option argument "{word} {argv[i + 1]}"')
    return i + 2


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
            i = take_value(opts, argv, i)
            continue
        flag = _FLAGS.get(word)
        if flag is None:
            raise UsageError(f'invalid option argument "{word}"')
        setattr(opts, flag, True)
        i += 1
    if opts.tasks and "t" not in opts.group:
        opts.group += "t"
    return opts


def default_words():
    """Options from the cell's ``sge_qstat`` file and ``~/.sge_qstat`` (sge_qstat(5))."""
    from gridtools import cell
    from gridtools.cli.sge.tokens import read_option_file, read_user_option_file
    words = read_option_file(cell.etc("sge_qstat"))
    words += read_user_option_file(".sge_qstat")
    user = _me()
    return [user if w == "$user" else w for w in words]


# ---------------------------------------------------------------- selection

def _me():
    import pwd
    try:
        return pwd.getpwuid(posix.getuid()).pw_name
    except KeyError:
        return str(posix.getuid())


def _group_members(name):
    import grp
    import pwd
    try:
        entry = grp.getgrnam(name)
    except KeyError:
        return set()
    members = set(entry.gr_mem)
    members.update(p.pw_name for p in pwd.getpwall() if p.pw_gid == entry.gr_gid)
    return members


def user_filter(users):
    """A predicate on owner names for a -u list (None: the caller only)."""
    if users is None:
        me = _me()
        return lambda owner: owner == me
    if "*" in users:
        return lambda owner: True
    names = {u for u in users if not u.startswith("@")}
    for group in (u[1:] for u in users if u.startswith("@")):
        names |= _group_members(group)
    return lambda owner: owner in names


def user_selected(owner, users):
    return user_filter(users)(owner)


#: -s words that look at a job's dependencies and start time (not only at its row)
JOB_FACT_STATES = frozenset({"hj", "hd", "ha"})


def state_selected(words, state, hold):
    """True when -s ``words`` select a row in ``state`` with ``hold`` letters, going by
    the row alone (``StateFilter`` also asks ``JOB_FACT_STATES`` of the job)."""
    if words is None:
        return state != "z"
    if state == "z":
        return "z" in words
    held = any(("h" + letter) in words and letter in hold for letter in "uos")
    if state in qstatus.ACTIVE:
        return ("s" if state in SUSPENDED else "r") in words or held
    return "p" in words or held


class StateFilter:
    """Decides whether a row passes -s (hold kinds look at the job's dependencies)."""

    def __init__(self, words, snap):
        self.words = words
        self.snap = snap
        self._live = None

    def live(self):
        if self._live is None:
            self._live = {r["id"] for r in self.snap["rows"] if r["state"] != "z"}
        return self._live

    def __call__(self, row):
        state, words = row["state"], self.words
        if state_selected(words, state, row.get("hold") or ""):
            return True
        if words is None or state == "z" or state in qstatus.ACTIVE:
            return False
        return self._held(row, words)

    def _held(self, row, words):
        job = self.snap["jobs"].get(row["id"], {})
        if "hj" in words and any(p in self.live() for p in job.get("predecessors") or ()):
            return True
        if "hd" in words and row.get("ad"):
            return True
        return "ha" in words and (job.get("start_at") or 0) > time.time()


def sort_rows(rows, info=None):
    """Running rows first (by job id), then pending ones by priority, then submission,
    then finished ones in the order they ended (Grid Engine lists its finished jobs as
    they joined that list: ``listing.finished_order``)."""
    from gridtools.spool.listing import finished_order

    def key(row):
        active = row["state"] in qstatus.ACTIVE
        return (0 if active else 1, row["id"] if active else 0,
                -row.get("prio", 0.0) if not active else 0, row["time"] if not active else 0,
                row["id"], row.get("task") or 0)
    return sorted((r for r in rows if r["state"] != "z"), key=key) + finished_order(rows)


def selected_rows(snap, opts):
    """The job rows -u and -s select, in display order."""
    info = snap["jobs"]
    owner_ok = user_filter(opts.users)
    state_ok = StateFilter(opts.states, snap)
    rows = [r for r in snap["rows"]
            if r["id"] in info and owner_ok(info[r["id"]]["owner"]) and state_ok(r)]
    return sort_rows(rows)


# ---------------------------------------------------------------- plain table

def fmt_time(epoch):
    return time.strftime(TIME_FORMAT, time.localtime(epoch))


class _Times:
    """fmt_time with a cache: thousands of jobs share few distinct seconds."""

    def __init__(self):
        self.cache = {}

    def __call__(self, epoch):
        key = int(epoch)
        text = self.cache.get(key)
        if text is None:
            text = self.cache[key] = fmt_time(key)
        return text


def _formats(qlen):
    """Header, rule and line format of the plain table for a queue column ``qlen`` wide."""
    header = ("job-ID  prior   name       user         state submit/start at     "
              f"{'queue':<{qlen}} slots ja-task-ID ")
    return header, "-" * (83 + qlen), line_format(qlen)


def queue_width(snap):
    """Width of the queue column: the longest queue instance name, at least 30."""
    return max([30] + [len(q["name"]) for q in snap.get("queues") or ()])


def job_line(row, info, fmt="%7d %.5f %-10.10s %-12.12s %-5s %s %-30.30s %5d %s", when=fmt_time):
    """One line of the plain table (``%`` formatting: the fastest way for 10,000 lines)."""
    job = info.get(row["id"]) or {}
    label = qstatus.task_label(row) if (row.get("task") is not None or row.get("tasks")) else "       "
    return fmt % (row["id"], row.get("prio", 0.0), job.get("name", ""), job.get("owner", ""),
                  row["state"], when(row["time"]), row.get("queue", ""), row["slots"], label)


def plain(snap, opts, out):
    rows = selected_rows(snap, opts)
    if not rows:
        return
    info = snap["jobs"]
    when = _Times()
    header, rule, fmt = _formats(queue_width(snap))
    out.write(header + "\n" + rule + "\n")
    out.write("\n".join([job_line(row, info, fmt, when) for row in rows]) + "\n")


def from_listing(opts):
    """True when the published listing alone answers: the plain table, its rows chosen
    by owner and by -s words that need no job facts."""
    return (opts.job_ids is None and not (opts.json or opts.xml) and not _needs_views(opts)
            and not (opts.states and opts.states & JOB_FACT_STATES))


def plain_listing(listing, opts, out):
    """The plain table (the lines ``plain`` writes) from the published listing: the
    daemon's lines of the runs selected when they show times as this process does,
    else lines rendered here (those of a run of jobs differ in their job ids only)."""
    from gridtools.spool import listing as L
    owner_ok = user_filter(opts.users)
    words = opts.states
    runs = listing["runs"]
    rendered = listing.get("lines")
    if rendered is None or len(rendered) != len(runs) or listing.get("zone") != L.zone():
        rendered = None
        when, tail = _Times(), _formats(listing["qlen"])[2][3:] + "\n"
    texts = []
    for i, run in enumerate(runs):
        job = run[L.JOB]
        if not owner_ok(job[L.J_OWNER]) or not state_selected(words, run[L.STATE], run[L.HOLD]):
            continue
        if rendered is not None:
            texts.append(rendered[i])
            continue
        rest = tail % (run[L.PRIO], job[L.J_NAME], job[L.J_OWNER], run[L.STATE], when(run[L.TIME]),
                       run[L.QUEUE], run[L.SLOTS], L.task_label(run))
        texts.extend([f"{n:7d}{rest}" for n in range(run[L.ID], run[L.ID] + run[L.COUNT])])
    if texts:
        header, rule, _fmt = _formats(listing["qlen"])
        out.write(f"{header}\n{rule}\n" + "".join(texts))


def _needs_views(opts):
    return bool(opts.full or opts.group or opts.resources or opts.ext or opts.pri or opts.urg
                or opts.selects_queues)


def usage(stream):
    from gridtools.cli.sge import usage_text
    stream.write(usage_text.VERSION_LINE + "\n" + usage_text.QSTAT)


def run(opts):
    if from_listing(opts):
        listing = qstatus.load_listing(lines=True)
        if listing is not None:
            for line in qstatus.fault_lines(listing["faults"]):
                sys.stderr.write(line + "\n")
            plain_listing(listing, opts, sys.stdout)
            return 0
    snap = qstatus.load()
    from gridtools.cli.sge.loadvalues import check_requests
    opts.requests = check_requests(opts.requests, snap.get("complexes"))
    out = sys.stdout
    for line in qstatus.warnings(snap):
        sys.stderr.write(line + "\n")
    if opts.job_ids is not None:
        from gridtools.cli.sge import qstat_j
        return qstat_j.show(snap, opts, out)
    from gridtools.cli.sge import qstat_select
    qstat_select.check_names(snap, opts)
    if opts.json or opts.xml:
        from gridtools.cli.sge import qstat_views
        return (qstat_views.as_json if opts.json else qstat_views.as_xml)(snap, opts, out)
    if _needs_views(opts):
        from gridtools.cli.sge import qstat_views
        return qstat_views.show(snap, opts, out)
    plain(snap, opts, out)
    return 0


def parsed_or_usage(parse, argv, usage_of):
    """(options, None) of a command line, or (None, exit code) once the usage is printed:
    on standard error with the error (1), or on standard output for -help (0). The
    way of qstat, qselect and qhost."""
    try:
        opts = parse(argv)
    except GridError as exc:
        usage_of(sys.stderr)
        sys.stderr.write(f"{exc}\n")
        return None, 1
    if opts.help:
        usage_of(sys.stdout)
        return None, 0
    return opts, None


def main(argv, prog="qstat"):
    opts, code = parsed_or_usage(lambda words: parse_args(default_words() + words), list(argv), usage)
    if opts is None:
        return code
    try:
        return run(opts) or 0
    except GridError as exc:
        if str(exc):                # (a -q list that matches no queue: exit 1 without a word)
            sys.stderr.write(f"{exc}\n")
        return exc.exit_code
