"""condor_wait: wait until the jobs of a user log are done (HTCondor dialect).

    condor_wait [-wait SECONDS] [-num N] [-status] [-echo] [-debug] LOGFILE [JOBID]

Follows the log (formats.condor.userlog): a job is known from its submit
event (000) and done at its terminated (005) or aborted (009) event. Ends
with ``All jobs done.`` (exit 0) when every job the log submitted (or JOBID:
``C``, ``C.P`` or ``C.P.S``, -1 for any) is done, also when its first reading
of the log found none of them, as HTCondor's does; with ``Specifed number of
jobs (N) done.`` once N jobs are done, or with ``Time expired.`` (exit 1)
after ``-wait`` seconds (``This log does not mention any jobs!``, or ``that
job!``, on the standard error instead when no job it waits for was submitted
there yet; with ``-num``, also at a later end of the log). ``-wait 0`` reads the
log to its end and stops there with exit 0 whatever it found, as HTCondor's
does. ``-allevents`` (``-all`` and longer) does not stop for ended jobs: it reads
the log to its end (or for ``-wait`` seconds), to transcribe it with ``-echo``.
``-status`` prints each job's events as they come, ``-echo`` the events themselves.

Options are HTCondor's, spelled out in full. The usage text goes to the
standard error, with exit 0 for ``-help`` and 1 for a command line that
cannot be run (``UsageText``).
"""

import re
import select
import sys
import time

from gridtools.errors import GridError

#: seconds between looks at a log that has not grown (no change notice exists for plain files)
POLL = 0.1
#: a job number as HTCondor reads it (sscanf "%d.%d.%d": leading fields, the rest ignored)
_JOB_NUMBER = re.compile(r"\s*([-+]?\d+)(?:\.\s*([-+]?\d+)(?:\.\s*([-+]?\d+))?)?")
#: the field of a job number that matches any value
ANY = -1
#: -num of -allevents (HTCondor's INT_MAX: no number of ended jobs stops it)
ALL_EVENTS = 2147483647

USAGE = """
Use: {prog} [options] <log-file> [job-number]
Where options are:
    -help             Display options
    -version          Display Condor version
    -debug            Show extra debugging info
    -status           Show job start and terminate info
    -echo             Echo log events relevant to [job-number]
    -num <number>     Wait for this many jobs to end
                       (default is all jobs)
    -wait <seconds>   Wait no more than this time
                       (default is unlimited)
    -allevents        Continue on even if all jobs have ended.
                      use with -echo to transcribe the whole log
                      cannot be used with -num

This command watches a log file, and indicates when
a specific job (or all jobs mentioned in the log)
have completed or aborted.  It returns success if
all such jobs have completed or aborted, and returns
failure otherwise.

Examples:
    {prog} logfile
    {prog} logfile 35
    {prog} logfile 1406.35
    {prog} -wait 60 logfile 13.25.3
    {prog} -num 2 logfile
"""


class UsageText(Exception):
    """Stop and print ``lead`` then the usage text on the standard error."""

    def __init__(self, lead="", exit_code=1):
        super().__init__(lead)
        self.lead, self.exit_code = lead, exit_code


class Version(Exception):
    """Stop and print the version (exit 1, as HTCondor's condor_wait does)."""


class Options:
    def __init__(self):
        self.log = None
        self.job = None
        self.wait = None             # None: no limit; 0: read to the end of the log and stop
        self.num = 0
        self.status = False
        self.echo = False


def parse_args(argv):
    opts, args, job = Options(), list(argv), None
    while args:
        arg = args.pop(0)
        if arg == "-1" and opts.log is not None and job is None:
            job = arg                                  # a bare -1 is any cluster
        elif arg.startswith("-"):
            _option(opts, arg, args)
        elif opts.log is None:
            opts.log = arg
        elif job is None:
            job = arg
        else:
            raise UsageText(f"Extra argument: {arg}\n\n")
    if opts.log is None:
        raise UsageText()
    if job is not None:
        opts.job = _job_number(job)
    return opts


def _option(opts, arg, args):
    if arg == "-help":
        raise UsageText(exit_code=0)
    if arg == "-version":
        raise Version()
    if arg in ("-status", "-debug"):
        opts.status = True
    elif arg == "-echo":
        opts.echo = True
    elif arg == "-wait":
        opts.wait = _number(args, "-wait requires an argument\n")
    elif arg == "-num":
        if opts.num == ALL_EVENTS:
            raise UsageText("-num cannot be used with -allevents\n")
        opts.num = _number(args, "-num requires an argument\n")
        if opts.num < 1:
            raise UsageText("-num must be greater than zero\n")
    elif len(arg) >= 4 and "allevents".startswith(arg[1:]):
        if opts.num:
            raise UsageText("-allevents cannot be used with -num\n")
        opts.num = ALL_EVENTS                      # (no number of ended jobs stops it)
        if not opts.wait:
            opts.wait = 0                          # (the end of the log does, unless -wait says)
    else:
        raise UsageText()


def _number(args, missing):
    """The next argument as C's atoi reads it: its leading integer, else 0."""
    if not args:
        raise UsageText(missing)
    found = re.match(r"\s*[-+]?\d+", args.pop(0))
    return int(found.group()) if found else 0


def _job_number(text):
    found = _JOB_NUMBER.match(text)
    if not found:
        raise GridError(f"Couldn't understand job number: {text}", 1)
    return tuple(ANY if f is None else int(f) for f in found.groups())


def _matches(event, job):
    if job is None:
        return True
    fields = (event.cluster, event.proc, event.subproc)
    return all(want in (ANY, have) for want, have in zip(job, fields))


class Follower:
    """The events of a log as they are appended (a partly written event waits)."""

    def __init__(self, fh):
        self.fh = fh
        self.rest = ""

    def events(self):
        from gridtools.formats.condor.userlog import parse_events
        chunk = self.fh.read()
        if not chunk:
            return []
        self.rest += chunk
        cut = self.rest.rfind("\n...\n")
        if cut < 0:
            return []
        text, self.rest = self.rest[:cut + 5], self.rest[cut + 5:]
        return parse_events(text)


class Progress:
    """What the log told so far of the jobs waited for."""

    def __init__(self, opts):
        self.opts = opts
        self.table = set()
        self.submitted = self.ended = 0

    def take(self, event):
        from gridtools.formats.condor.userlog import EventType, render_event
        if not _matches(event, self.opts.job):
            return
        key = f"{event.cluster}.{event.proc}.{event.subproc}"
        if self.opts.echo and isinstance(event.type, EventType):
            sys.stdout.write(render_event(event))
        word = {EventType.SUBMIT: "submitted", EventType.JOB_TERMINATED: "completed",
                EventType.JOB_ABORTED: "aborted"}.get(event.type)
        if event.type is EventType.EXECUTE and self.opts.status:
            print(f"{key} executing on host {event.info.get('ExecuteHost', '')}")
        if word is None:
            return
        if self.opts.status:
            print(f"{key} {word}")
        if event.type is EventType.SUBMIT:
            self.table.add(key)
            self.submitted += 1
        else:
            self.table.discard(key)
            self.ended += 1


def run(opts):
    try:
        fh = open(opts.log, encoding="utf-8", errors="replace")
    except OSError as exc:
        sys.stderr.write(f"Couldn't open {opts.log}: {exc.strerror}\n")
        return 1
    with fh:
        return _follow(opts, Follower(fh), Progress(opts))


def _follow(opts, follower, progress):
    stop = time.time() + opts.wait if opts.wait else None
    initial, looked = True, False
    while True:
        if stop is not None and time.time() > stop:
            # (a deadline passed before the log is read, a negative -wait: time expired)
            if not progress.submitted and looked:
                return _unmentioned(opts, 1)
            print("Time expired.")
            return 1
        events = follower.events()
        looked = True
        for event in events:
            progress.take(event)
            if opts.num and progress.ended >= opts.num:
                print(f"Specifed number of jobs ({opts.num}) done.")
                return 0
            if not progress.table and progress.submitted and not opts.num and not initial:
                print("All jobs done.")
                return 0
        if events:
            continue
        first, initial = initial, False
        if first and not progress.table and not opts.num:     # (a log that names none of them too)
            print("All jobs done.")
            return 0
        if not first and not progress.table and not progress.submitted:
            return _unmentioned(opts, 0 if opts.wait == 0 else 1)
        if opts.wait == 0:            # the end of the log, jobs done or not: HTCondor's -wait 0
            return 0
        _pause(stop)


def _unmentioned(opts, code):
    """A log that names none of the jobs waited for, at its end (-wait 0) or when time ran out."""
    sys.stderr.write("This log does not mention any jobs!\n" if (opts.job or (ANY,))[0] == ANY else
                     "This log does not mention that job!\n")
    return code


def _pause(stop):
    wait = POLL if stop is None else max(0.0, min(POLL, stop - time.time()))
    select.select([], [], [], wait)


def usage(prog):
    return USAGE.format(prog=prog)


def main(argv, prog="condor_wait"):
    try:
        return run(parse_args(argv))
    except UsageText as stop:
        sys.stderr.write(stop.lead + usage(prog))
        return stop.exit_code
    except Version:
        from gridtools.formats.condor.jobad import DEFAULT_PLATFORM, DEFAULT_VERSION
        sys.stdout.write(f"{DEFAULT_VERSION}\n{DEFAULT_PLATFORM}\n")
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
