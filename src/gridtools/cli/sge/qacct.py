"""qacct: report usage from the accounting file, as Grid Engine's qacct does.

Options are read by hand, left to right, the way Grid Engine reads them: an
option with an optional value (-o, -g, -h, -j, -P, -D, -pe, -slots, -ar, -A,
-q) takes the next word unless it starts with ``-``; without a value it
groups the summary by that field. -help prints the usage at once.
"""

import errno
import os
import sys
import time

from gridtools import cell
from gridtools.accounting import report
from gridtools.accounting.qacct import (Selection, Summary, is_queue_domain,
                                        parse_date_time, parse_resource_list,
                                        parse_task_ranges, queue_pattern,
                                        scan_unsigned, time_window)
from gridtools.errors import InputError, Lines, UsageError
from gridtools.formats.accounting import read

USAGE = """\
SGE 8.1.9
usage: qacct [options]
 [-ar [ar_id]]                     list [matching] advance reservations
 [-A [account_string]]             list [matching] account
 [-b begin_time]                   jobs started after
 [-d days]                         jobs started during the last d days
 [-D [department]]                 list [matching] department
 [-e end_time]                     jobs started before
 [-E]                              select job end time, not start
 [[-f] acctfile]                   use alternate accounting file
 [-g [groupid|groupname]]          list [matching] group
 [-h [host]]                       list [matching] host
 [-help]                           display this message
 [-j [job_id|job_name|pattern]]    list all [matching] jobs
 [-l attr=val,...]                 request given complex attributes
 [-m]                              list only master tasks
 [-o [owner]]                      list [matching] owner
 [-u [owner]]                      list [matching] owner
 [-pe [pe_name]]                   list [matching] parallel environment
 [-P [project]]                    list [matching] project
 [-q [queue]]                      list [matching] queue
 [-slots [slots]]                  list [matching] job slots
 [-t taskid[-taskid[:step]]]       list all [matching] tasks (requires -j option)

 begin_time, end_time              [[CC]YYMMDDhhmm[.SS]
 queue                             [cluster_queue|queue_instance|queue_domain|pattern]
"""

NO_JOBS = "no jobs running since startup"
# MSG_QINSTANCE_NOQUEUES: a -q queue domain that names no queue instance.
NO_QUEUES = "No queues remaining after -q queue selection"

# option -> (grouping key, Selection attribute) for options whose value
# selects records and whose absence of a value groups the summary.
_GROUPING = {
    "-o": ("owner", "owner"), "-u": ("owner", "owner"),
    "-g": ("group", "group"), "-h": ("host", "host"),
    "-P": ("project", "project"), "-D": ("department", "department"),
    "-pe": ("pe", "pe"), "-A": ("account", "account"),
    "-slots": ("slots", "slots"), "-ar": ("ar", "ar"),
}


class _Help(Exception):
    """-help was given."""


class Options:
    """What the command line asked for."""

    def __init__(self):
        self.sel = Selection()
        self.flags = set()      # grouping keys given without a value
        self.fixed = {}         # grouping key -> the value an option fixed
        self.jobs = None        # None, "all" (bare -j) or "one" (id or name)
        self.days = self.begin = self.end = None
        self.file = None
        self.queue_refs = []    # the -q arguments, as given


class _Words:
    """The argument list with a cursor."""

    def __init__(self, argv):
        self.argv = list(argv)
        self.i = 0

    def next(self):
        word = self.argv[self.i]
        self.i += 1
        return word

    def optional(self):
        """The next word if it is a value (does not start with -), else None."""
        if self.i < len(self.argv) and not self.argv[self.i].startswith("-"):
            return self.next()
        return None

    def required(self):
        if self.i < len(self.argv):
            return self.next()
        raise UsageError(f"{self.argv[self.i - 1]} option must have argument", exit_code=1)


#: Grid Engine's words (MSG_PARSE_INVALID_AR_MUSTBEUINT) for an -ar value that is no number
BAD_AR = "ERROR! invalid advance reservation id, must be an unsigned integer"


def _scanned(text, message=""):
    """The number sscanf("%u") reads from ``text``, as Grid Engine reads -d and -ar;
    without one, a usage error with ``message`` (Grid Engine gives -d the usage alone)."""
    value = scan_unsigned(text)
    if value is None:
        raise UsageError(message, exit_code=1)
    return value


def _group_name(text):
    gid = scan_unsigned(text)
    if gid is None:
        return text
    import grp
    try:
        return grp.getgrgid(gid).gr_name
    except (KeyError, OverflowError):
        return text


def _grouping_option(opts, option, value):
    key, attr = _GROUPING[option]
    if value is None:
        opts.flags.add(key)
        return
    if key == "ar":
        value = _scanned(value, BAD_AR)
        if not value:
            return
    elif key == "slots":
        # read with atol(), as Grid Engine reads it: no number is 0, which filters nothing
        value = scan_unsigned(value) or 0
        if not value:
            return
    elif key == "group":
        value = _group_name(value)
    setattr(opts.sel, attr, value)
    opts.fixed[key] = value


def _queue_option(opts, value):
    opts.flags.add("queue")
    if value is not None:
        opts.flags.add("host")
        opts.queue_refs.append(value)


def _job_option(opts, value):
    if value is None:
        opts.jobs = "all"
    elif scan_unsigned(value) == 0:
        # job number 0 asks for no job, as Grid Engine's qacct takes it (no job is 0):
        # without another -j, the summary of all jobs
        opts.sel.job_id = None
        if opts.jobs == "one" and opts.sel.job_name is None:
            opts.jobs = None
    elif scan_unsigned(value) is not None:     # as sscanf("%u") reads it: 2x is job 2
        opts.jobs, opts.sel.job_id = "one", scan_unsigned(value)
    else:
        opts.jobs, opts.sel.job_name = "one", value


def first_range(ranges):
    """The one range of a -t list Grid Engine's qacct uses: the first of the list that
    range_list_parse_from_string builds, range by range, with expand_range_list. That
    puts a range lying above the list's first one (or one with a step) at the head and
    merges overlapping ranges of step 1, so ``1,3`` selects task 3 and ``2-3,1-2`` 1-3."""
    built = []
    for low, high, step in ranges:
        _expand(built, [low, high, step])
    return tuple(built[0])


def _expand(built, new):
    """expand_range_list(): add range ``new`` ([min, max, step]) to the list ``built``."""
    rmin, rmax, rstep = new
    i = 0
    while i < len(built):
        ep = built[i]
        if rstep != ep[2] or rstep > 1 or ep[2] > 1 or rmin > ep[1]:
            built.insert(0, new)
            return
        if rmax < ep[0]:
            i += 1
            continue
        if ep[0] <= rmin and rmax <= ep[1]:
            return                                  # contained in ep
        if rmin < ep[0]:
            # new covers ep's bottom, or all of ep: widen ep, and take in what follows
            ep[0], ep[1] = rmin, max(ep[1], rmax)
            j = i + 1
            while j < len(built):
                other = built[j]
                if rmin < other[0]:
                    del built[j]
                    j += 1                          # (the C loop steps twice here)
                elif rmin <= other[1]:
                    ep[0] = other[0]
                    del built[j]
                    break
                else:
                    break
            return
        ep[1] = rmax                                # overlaps ep's top
        return
    built.append(new)


def _task_option(opts, words):
    value = words.optional()
    if value is None:
        raise UsageError("ERROR! -t option must have a list of task id ranges", exit_code=1)
    try:
        ranges = parse_task_ranges(value)
    except InputError:
        raise UsageError(f"ERROR! invalid list of task id ranges: {value}", exit_code=1) from None
    opts.sel.tasks = [first_range(ranges)]


def _time_option(opts, option, value, now):
    if option == "-d":
        opts.days = _scanned(value)
        return
    try:
        stamp = parse_date_time(value, now)
    except InputError as err:
        # Grid Engine prints a blank line, its message, then the usage
        raise UsageError(Lines(f"\n{err}"), exit_code=1) from None
    if option == "-b":
        opts.begin = stamp
    else:
        opts.end = stamp


def _resource_option(opts, value):
    try:
        opts.sel.resources = parse_resource_list(value)
    except InputError as err:
        raise UsageError(f"ERROR! {err}", exit_code=1) from None


def _one_option(opts, word, words, now):
    if word in _GROUPING:
        _grouping_option(opts, word, words.optional())
    elif word == "-q":
        _queue_option(opts, words.optional())
    elif word == "-j":
        _job_option(opts, words.optional())
    elif word == "-t":
        _task_option(opts, words)
    elif word in ("-b", "-e", "-d"):
        _time_option(opts, word, words.required(), now)
    elif word == "-l":
        _resource_option(opts, words.required())
    elif word == "-f":
        opts.file = words.required()
    elif word == "-E":
        opts.sel.by_end_time = True
    elif word == "-m":
        opts.sel.master_only = True
    elif word == "-help":
        raise _Help()
    elif not word.startswith("-") or word == "-":
        opts.file = word
    else:
        raise UsageError("", exit_code=1)      # an unknown option: the usage alone


def parse_args(argv, now):
    """Options for ``argv``; raises _Help or UsageError (exit code 1)."""
    opts = Options()
    words = _Words(argv)
    while words.i < len(words.argv):
        _one_option(opts, words.next(), words, now)
    if opts.sel.tasks and opts.jobs != "one":
        raise UsageError("error: -t option requires -j option", exit_code=1)
    opts.sel.begin, opts.sel.end = time_window(opts.begin, opts.end, opts.days, now)
    if not any(is_queue_domain(text) for text in opts.queue_refs):
        opts.sel.queues = [queue_pattern(text) for text in opts.queue_refs]
    return opts


def _resolve_queue_domains(opts):
    """With a queue domain among the -q arguments, every one is resolved to the queue
    instances the cell's configuration (etc/queues, etc/hostgroups) defines, as Grid
    Engine's qacct asks qmaster; False when none is left."""
    if not any(is_queue_domain(text) for text in opts.queue_refs):
        return True
    from gridtools.accounting.qacct import resolve_queue_refs
    from gridtools.cli.sge.qacct_queues import cell_queues
    cqueues, groups = cell_queues()
    opts.sel.queues = [name.replace("[", "[[]") for name in
                       resolve_queue_refs(opts.queue_refs, cqueues, groups)]
    return bool(opts.sel.queues)


def _not_found(sel):
    """Grid Engine's message for a -j that matched nothing."""
    job = sel.job_id if sel.job_name is None else f'"{sel.job_name}"'
    if sel.tasks:
        low, high, step = sel.tasks[0]
        return f"error: Job-array tasks {job}.{low}-{high}:{step} not found"
    if sel.job_name is None:
        return f"error: job id {sel.job_id} not found"
    return f"error: job name {sel.job_name} not found"


def _invalid_line(number, err):
    sys.stderr.write(f"error: ignoring invalid entry in line {number}\n")


def _scan(opts, source):
    """Print the -j entries, and return (anything selected, Summary)."""
    sel, out = opts.sel, sys.stdout
    summary = Summary(opts.flags)
    # A -j entry shows every field; a summary needs only what it reads.
    fields = None if opts.jobs else sel.fields() | summary.fields()
    found, check = False, sel.active()
    for record in read(source, sel.prefilter(), _invalid_line, fields):
        if check and not sel.matches(record):
            continue
        if not found and "host" in opts.fixed:
            # the host as the records name it, however -h spelt it (Grid Engine
            # shows the resolved name)
            opts.fixed["host"] = record["hostname"]
        found = True
        if opts.jobs:
            out.write(report.job_block(record))
        summary.add(record)
    return found, summary


def _run(opts):
    from gridtools.formats.linereader import Unending
    path = opts.file or cell.spool("accounting")
    if path != "-" and not os.path.exists(path):
        sys.stderr.write(f"{path}: {os.strerror(errno.ENOENT)}\n")
        sys.stdout.write(NO_JOBS + "\n")
        return 1
    try:
        if not _resolve_queue_domains(opts):
            sys.stderr.write(NO_QUEUES + "\n")
            return 1
        found, summary = _scan(opts, sys.stdin.buffer if path == "-" else path)
    except Unending as err:
        sys.stderr.write(f"error: {path}: {err}: stopped reading\n")
        return 1
    except OSError as err:
        if err is getattr(sys.stdout, "lost", None):
            raise       # the report could not be written: a closed pipe, a full disk
        sys.stderr.write(f"error: unable to read {path}: {err.strerror}\n")
        return 1
    if opts.jobs == "one":
        if not found:
            sys.stderr.write(_not_found(opts.sel) + "\n")
            return 1
        return 0
    columns = opts.flags | set(opts.fixed)
    sys.stdout.write(report.summary_table(columns, opts.fixed, summary))
    return 0


def main(argv, prog="qacct"):
    """Run qacct with ``argv``; return its exit code."""
    try:
        opts = parse_args(argv, int(time.time()))
    except _Help:
        sys.stdout.write(USAGE)
        return 0
    except UsageError as err:
        text = str(err)
        sys.stderr.write((text + "\n" if text else "") + USAGE)
        return err.exit_code
    return _run(opts)
