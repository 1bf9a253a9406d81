"""condor_wait: wait until the jobs of a user log are done (HTCondor dialect).

    condor_wait [-wait SECONDS] [-num N] [-status] [-echo] LOGFILE [JOBID]

Follows the log (formats.condor.userlog): a job is known from its submit
event (000) and done at its terminated (005) or aborted (009) event. Ends
with ``All jobs done.`` (exit 0) when every job the log submitted (or JOBID:
``C``, ``C.P`` or ``C.P.S``) is done, with ``Specifed number of jobs (N)
done.`` once N jobs are done, or with ``Time expired.`` (exit 1) after
``-wait`` seconds. ``-status`` prints each job's events as they come,
``-echo`` the events themselves.
"""

import select
import sys
import time

from gridtools.errors import GridError, UsageError

#: seconds between looks at a log that has not grown (no change notice exists for plain files)
POLL = 0.1

USAGE = """
Use: condor_wait [options] <log-file> [job-number]
Where options are:
    -help             Display options
    -status           Show job start and terminate info
    -echo             Print the events as they are read
    -wait <seconds>   Wait no more than this time
    -num <number>     Wait for this many jobs to end
                       (default is all jobs)
    The job-number may be a cluster, cluster.proc or cluster.proc.subproc
"""


class Options:
    def __init__(self):
        self.log = None
        self.job = None
        self.wait = None
        self.num = 0
        self.status = False
        self.echo = False


def parse_args(argv):
    opts, args = Options(), list(argv)
    while args:
        arg = args.pop(0)
        if arg.startswith("-") and len(arg) > 1:
            _option(opts, arg, args)
        elif opts.log is None:
            opts.log = arg
        elif opts.job is None:
            opts.job = _job_number(arg)
        else:
            raise UsageError(f"Extra argument: {arg}\n" + USAGE, 1)
    if opts.log is None:
        raise UsageError(USAGE.strip("\n"), 1)
    return opts


def _option(opts, arg, args):
    name = arg.lstrip("-")
    if name in ("help", "h"):
        raise UsageError(USAGE.strip("\n"), 0)
    if "wait".startswith(name):
        opts.wait = _number(args, "-wait requires an argument")
    elif "num".startswith(name):
        opts.num = _number(args, "-num requires an argument")
        if opts.num <= 0:
            raise UsageError("-num must be greater than zero", 1)
    elif "status".startswith(name):
        opts.status = True
    elif name.startswith("echo"):
        opts.echo = True
    elif name.startswith("debug"):
        opts.status = True
    else:
        raise UsageError(USAGE.strip("\n"), 1)


def _number(args, message):
    if not args:
        raise UsageError(message, 1)
    try:
        return int(args.pop(0))
    except ValueError:
        raise UsageError(message, 1) from None


def _job_number(text):
    parts = text.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise UsageError(f"Couldn't understand job number: {text}", 1)
    return tuple(int(p) for p in parts)


def _matches(event, job):
    if job is None:
        return True
    fields = (event.cluster, event.proc, event.subproc)
    return all(want == have for want, have in zip(job, fields))


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
    stop = time.time() + opts.wait if opts.wait is not None else None
    initial = True
    while True:
        if stop is not None and time.time() > stop:
            print("Time expired.")
            return 1
        events = follower.events()
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
        if initial:
            initial = False
            if not progress.table and not opts.num:
                print("All jobs done.")
                return 0
        elif not progress.table and not progress.submitted:
            sys.stderr.write("This log does not mention any jobs!\n" if opts.job is None else
                             "This log does not mention that job!\n")
            return 1
        _pause(stop)


def _pause(stop):
    wait = POLL if stop is None else max(0.0, min(POLL, stop - time.time()))
    select.select([], [], [], wait)


def main(argv, prog="condor_wait"):
    try:
        return run(parse_args(argv))
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
