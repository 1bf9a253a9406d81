"""condor_history: jobs that have left the queue (HTCondor dialect).

    condor_history [-l | -json | -xml | -af[:quals] ATTR ... | -format FMT ATTR ...]
                   [-constraint EXPR] [-limit N | -match N] [-forwards]
                   [-since JOBID | EXPR] [-completedsince TIME] [-scanlimit N]
                   [-file FILE | -userlog FILE] [cluster | cluster.proc | owner] ...

Reads the history file the daemon appends a job's final ad to when it
leaves the queue (``spool/history`` and its rotation ``history.old``; see
daemon.history), newest first unless ``-forwards``. The default table has
a row per job: ID, OWNER, SUBMITTED, RUN_TIME, ST, COMPLETED, CMD.
The scan stops at the ad of job ``-since`` names (cluster.proc; a bare
cluster: its first ad met) or at the first ad its expression is true of,
at the first ad of a job that completed before ``-completedsince`` (Unix
time), and after ``-scanlimit`` ads; the ad it stops at is not shown.

The history file holds what every user may see of a job; its private
attributes (command path, arguments, files: ``jobads.PRIVATE_ATTRS``) are
in a file of its owner's (``history.private/<uid>``, see daemon.history),
joined to the job's ad for its owner and for root: another user's job shows
exactly what condor_q shows of it, without them. ``-file`` naming the cell's
own history file (or its rotation), by any path, joins them just the same.

``-userlog FILE`` lists the jobs of a job event log instead, with the ads
``logads`` rebuilds from its events, in job id order: all of them that
the constraint and the restriction list let through (the bounds of a scan,
``-limit``, ``-scanlimit``, ``-since``, ``-completedsince``, are the history
file's only).
"""

import os
import sys

from gridtools.cli.condor import queue as Q
from gridtools.errors import GridError, InputError, UsageError

USAGE = """\
Usage: condor_history [options]
    where [options] are
        -help                 Display this screen
        -file <file>          Read history data from specified file
        -userlog <file>       Read job data from specified job event log
        -forwards             List jobs in the order they finished
        -match <num>          Limit the number of jobs displayed
        -limit <num>          Same as -match
        -constraint <expr>    Display jobs that satisfy the expression
        -long                 Display entire ClassAds
        -json                 Display entire ClassAds in JSON
        -xml                  Display entire ClassAds in XML
        -format <fmt> <attr>  Print attribute attr using format fmt
        -since <jobid>|<expr> Stop scanning at this job id, or when expr is true
        -completedsince <time>  Stop scanning at a job that completed before time
        -scanlimit <num>      Stop scanning after num ads
        -autoformat[:jlhVr,tng] <attr> [<attr2> [...]]
        -af[:jlhVr,tng] <attr> [<attr2> [...]]
    and [cluster | cluster.proc | owner] restrict the jobs shown
"""


class Options:
    def __init__(self):
        self.selection = Q.Selection()
        self.view = "table"
        self.af_attrs, self.af_quals, self.formats = [], "", []
        self.limit = 0
        self.since = self.completed_since = None
        self.scanlimit = 0
        self.forwards = False
        self.file = None
        self.userlog = None          # -userlog: the jobs of a job event log (logads)
        self.help = False


def _is(arg, word, least=1):
    name = arg[1:].split(":", 1)[0]
    return arg.startswith("-") and least <= len(name) <= len(word) and word.startswith(name)


def _take(args, arg):
    if not args:
        raise UsageError(f"Error: Argument {arg} requires another parameter", 1)
    return args.pop(0)


def parse_args(argv):
    opts = Options()
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("-"):
            opts.selection.add_word(arg)
        elif _is(arg, "autoformat", 2) or _is(arg, "af", 2):
            opts.view, opts.af_quals = "af", arg.partition(":")[2]
            while args and not args[0].startswith("-"):
                opts.af_attrs.append(args.pop(0))
        elif _is(arg, "long", 1):
            opts.view = "long"
        elif _is(arg, "json", 4):
            opts.view = "json"
        elif _is(arg, "xml", 2):
            opts.view = "xml"
        elif _is(arg, "format", 2):
            fmt = _take(args, arg)
            opts.formats.append((fmt, _take(args, arg)))
            opts.view = "format"
        elif _is(arg, "constraint", 1):
            opts.selection.constraints.append(_take(args, arg))
        elif _is(arg, "match", 1) or _is(arg, "limit", 3):
            opts.limit = _count(_take(args, arg), "-match")
        elif _is(arg, "since", 3):
            opts.since = _take(args, arg)
        elif _is(arg, "completedsince", 3):
            opts.completed_since = _timestamp(_take(args, arg))
        elif _is(arg, "scanlimit", 2):
            opts.scanlimit = _count(_take(args, arg), "-scanlimit")
        elif _is(arg, "forwards", 4):
            opts.forwards = True
        elif _is(arg, "backwards", 1):
            opts.forwards = False
        elif _is(arg, "file", 2):
            opts.file = _take(args, arg)
        elif _is(arg, "userlog", 1):
            opts.userlog = _take(args, arg)
        elif _is(arg, "help", 1):
            opts.help = True
        elif not _is(arg, "wide", 1):
            raise UsageError(f"Error: Unknown argument {arg}", 1)
    return opts


def _count(text, option):
    try:
        return max(0, int(text))
    except ValueError:
        raise UsageError(f"Error: {option} requires a number, not {text}", 1) from None


def _timestamp(text):
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"Error: -completedsince requires a Unix time, not {text}", 1) from None


def _stop_test(opts):
    """The test of the ad a scan stops at (``-since``, ``-completedsince``), or None."""
    tests = []
    if opts.since is not None:
        cluster, dot, proc = opts.since.partition(".")
        if cluster.isdigit() and (not dot or proc.isdigit()):
            wanted = (int(cluster), int(proc) if dot else None)
            tests.append(lambda ad: ad.eval("ClusterId") == wanted[0]
                         and wanted[1] in (None, ad.eval("ProcId")))
        else:
            [expr] = Q.compile_constraints([opts.since])
            tests.append(lambda ad: Q.truthy(expr.eval(ad)))
    if opts.completed_since is not None:
        def before(ad, when=opts.completed_since):
            done = ad.eval("CompletionDate")
            return type(done) in (int, float) and 0 < done < when
        tests.append(before)
    if not tests:
        return None
    return lambda ad: any(test(ad) for test in tests)


# ---------------------------------------------------------------- reading

def history_files(opts):
    if opts.file:
        return [opts.file]
    from gridtools import cell
    base = cell.spool("history")
    return [base + ".old", base]


def _is_cell_history(path):
    """True when ``path`` is the cell's own history file (or its rotation), by
    whatever name: its ads get their private attributes as without -file."""
    try:
        st = os.stat(path)
        return any(os.path.samestat(st, os.stat(own)) for own in history_files(Options())
                   if os.path.exists(own))
    except (OSError, GridError):
        return False


def read_ads(paths, named=False):
    """The ads of history files, oldest first. The cell's files may not exist yet; a
    file ``named`` by -file must (HTCondor's words, exit 1)."""
    from gridtools.classad import parse_ad
    found = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            if named:
                raise GridError(f"Error opening history file {path}: {exc.strerror}", 1) from None
            if isinstance(exc, FileNotFoundError):
                continue
            raise InputError(f"Error: cannot read history file {path}: {exc.strerror}") from None
        block = []
        for line in text.splitlines():
            if line.startswith("*** "):
                if block:
                    found.append(parse_ad("\n".join(block)))
                block = []
            elif line.strip():
                block.append(line)
    return found


def log_ads(opts):
    """The ads of the jobs of the job event log ``-userlog`` names, rebuilt from its
    events (``logads``: every job it saw submitted, by job id, shown in that order).
    As HTCondor's condor_history prints every ad of a log its constraint lets
    through, ``-limit``, ``-scanlimit``, ``-since`` and ``-completedsince`` do not
    apply to it."""
    from gridtools.cli.condor import logads
    try:
        ads = logads.read(opts.userlog, Q.me())
    except OSError:
        raise GridError(f"Error: Can't open userlog {opts.userlog}", 1) from None
    opts.forwards = True
    opts.limit = opts.scanlimit = 0
    opts.since = opts.completed_since = None
    return ads


def private_files():
    """(uid, path) of the private history files the caller may read: its own (every
    user's for root)."""
    from gridtools import cell
    folder = cell.spool("history.private")
    uid = os.getuid()
    try:
        names = sorted({n.split(".")[0] for n in os.listdir(folder)}) if uid == 0 else [str(uid)]
    except OSError:
        return []
    return [(int(n), os.path.join(folder, n + suffix)) for n in names if n.isdigit() for suffix in (".old", "")]


def _uid_of(name, known):
    if name not in known:
        import pwd
        try:
            known[name] = pwd.getpwnam(name).pw_uid if isinstance(name, str) else None
        except KeyError:
            known[name] = None
    return known[name]


def join_private(ads):
    """Lay the private attributes the caller may read over the ads of their jobs (by
    GlobalJobId, which names one run of one proc). A user may rewrite their own file:
    its records are laid over the ads of that user's jobs only."""
    by_id = {}
    for uid, path in private_files():
        try:
            records = read_ads([path])
        except InputError:
            continue
        for record in records:
            key = record.eval("GlobalJobId")
            if isinstance(key, str):
                by_id[key] = (uid, record)
    if not by_id:
        return
    known = {}
    for ad in ads:
        uid, record = by_id.get(ad.eval("GlobalJobId"), (None, None))
        if record is not None and _uid_of(ad.eval("Owner"), known) == uid:
            for name in record:
                if name not in ("ClusterId", "ProcId", "GlobalJobId"):
                    ad[name] = record.lookup(name)


def select(opts, ads):
    sel = opts.selection
    exprs = Q.compile_constraints(sel.constraints) if sel.constraints else []
    stop = _stop_test(opts)
    chosen = []
    for scanned, ad in enumerate(ads if opts.forwards else reversed(ads)):
        if (opts.scanlimit and scanned >= opts.scanlimit) or (stop is not None and stop(ad)):
            break
        cluster, proc, owner = ad.eval("ClusterId"), ad.eval("ProcId"), ad.eval("Owner")
        if sel.named and not (cluster in sel.clusters or (cluster, proc) in sel.ids or owner in sel.users):
            continue
        if exprs and not Q.matches_all(ad, exprs):
            continue
        chosen.append(ad)
        if opts.limit and len(chosen) >= opts.limit:
            break
    return chosen


# ---------------------------------------------------------------- output

def table(ads):
    from gridtools.cli.condor.qviews import format_date, format_time
    ids = [f"{ad.eval('ClusterId')}.{ad.eval('ProcId')}" for ad in ads]
    width = max([12] + [len(i) for i in ids])
    lines = [f"{' ID':<{width}} {'OWNER':<14} {'  SUBMITTED':>11} {'  RUN_TIME  ':>12} ST "
             f"{'  COMPLETED':>11} CMD"]
    for jid, ad in zip(ids, ads):
        wall = _number(ad.eval("RemoteWallClockTime"), _number(ad.eval("RemoteUserCpu"), 0))
        status = ad.eval("JobStatus")
        lines.append(f"{jid:<{width}} {_text(ad.eval('Owner')):<14} "
                     f"{format_date(_number(ad.eval('QDate'), 0)):>11} {format_time(wall):>12} "
                     f"{Q.STATUS_LETTER.get(status, '?'):<2} "
                     f"{format_date(_number(ad.eval('CompletionDate'), 0)):>11} {_command(ad)}")
    return "\n".join(lines) + "\n"


def _number(value, default):
    return value if type(value) in (int, float) else default


def _text(value):
    return value if isinstance(value, str) else "??"


def _command(ad):
    cmd = ad.eval("Cmd")
    text = os.path.basename(cmd) if isinstance(cmd, str) else ""
    from gridtools.formats.condor.spec import arguments
    args = arguments(ad)
    return text + (" " + " ".join(args) if args else "")


def main(argv, prog="condor_history"):
    from gridtools.cli.condor import formatting
    try:
        opts = parse_args(argv)
        if opts.help:
            sys.stdout.write(USAGE)
            return 0
        if opts.userlog is not None:
            ads = log_ads(opts)
        else:
            try:
                ads = read_ads(history_files(opts), named=bool(opts.file))
            except GridError:
                if opts.view == "table":        # HTCondor prints the heading before it opens
                    sys.stdout.write(table([]))
                raise
            if not opts.file or _is_cell_history(opts.file):
                join_private(ads)
        ads = select(opts, ads)
        if opts.view == "long":
            out = formatting.long_ads(ads)
        elif opts.view == "json":
            out = formatting.json_ads(ads) if ads else ""
        elif opts.view == "xml":
            out = formatting.xml_ads(ads)
        elif opts.view == "af":
            out = formatting.autoformat(ads, opts.af_attrs, opts.af_quals)
        elif opts.view == "format":
            out = formatting.format_ads(ads, opts.formats)
        else:
            out = table(ads)
        sys.stdout.write(out)
        return 0
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
