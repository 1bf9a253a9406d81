"""``qsub -sync y``: wait until every task of the job ended and return its exit status.

Polls the job's state file (written only by the daemon), starting every
10 ms and backing off to 0.5 s. A job that left the job store before a look
saw it finished (purged at once: many other jobs ended, or were deleted,
meanwhile) is read from its accounting records instead. Says per task, as
the tasks end, in Grid Engine's words: ``Job N exited with exit code 0.`` on
stdout (not with -terse), and on stderr ``Job N exited with exit code X.``,
``Job N exited because of signal SIGNAME`` or ``Unable to run job N`` (a task
that never ran: deleted while it waited, or from the error state). The exit
status is that of the first task to end with a non-zero one: its exit code,
1 for a signal or a task that never ran (Grid Engine's qsub gives 0 for the
latter, which would tell a script that the job succeeded).

SIGINT, SIGTERM and SIGHUP while qsub waits (or submits) delete the job, all
its tasks, as Grid Engine's qsub does; qsub says ``Interrupted!`` and
``Please wait while qsub shuts down.``, waits until the job is gone and
exits 1.
"""

import os
import signal
import sys
import time

from gridtools.formats import spoolyaml
from gridtools.spool import jobs as jobstore

#: signals that end a waiting qsub -sync y and delete its job
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: the accounting's failed code of a job killed by qdel ("assumedly after job")
KILLED = 100
#: seconds qsub waits for the job to be gone after an interruption (Grid Engine: 15)
SHUTDOWN_WAIT = 15.0
#: seconds between the deletions qsub asks for while the job is not gone
ASK_AGAIN = 3.0


class Interrupted(BaseException):
    """A stop signal arrived while qsub waited (no Exception, as qrsh's Ended: nothing
    that rides out its own failures may swallow it)."""


class _Guard:
    """Catches the stop signals from before the job is submitted: one that arrives
    while qsub submits is remembered and acted on when the wait starts."""

    def __init__(self):
        self.caught = None
        self.raising = False
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, _frame):
        if self.caught is None:
            self.caught = signum
        if self.raising:
            self.raising = False
            raise Interrupted()

    def start_raising(self):
        if self.caught is not None:
            raise Interrupted()
        self.raising = True

    def stop_raising(self):
        self.raising = False


def arm():
    """Catch SIGINT, SIGTERM and SIGHUP from now on (call before submitting)."""
    return _Guard()


def _tasks(spec):
    rng = spec.get("tasks")
    return list(range(rng[0], rng[1] + 1, rng[2])) if rng else [1]


def _newly_finished(state, numbers, reported):
    """Tasks that ended and were not reported yet, in the order they ended."""
    tasks = (state or {}).get("tasks") or {}
    found = []
    for n in numbers:
        t = tasks.get(str(n))
        if n not in reported and t and t.get("state") == "finished":
            found.append((float(t.get("end_time") or 0), n, t))
    return [(n, t) for _when, n, t in sorted(found, key=lambda item: (item[0], item[1]))]


def wait(spec, poll=0.01, guard=None, terse=False):
    import gc
    gc.enable()             # a wait may last long: the launcher turned the collector off
    guard = guard or arm()
    reporter = _Reporter(spec, terse)
    try:
        guard.start_raising()
        _wait(spec, poll, reporter)
    except Interrupted:
        guard.stop_raising()
        return _shut_down(spec)
    finally:
        guard.stop_raising()
    return reporter.code


def _wait(spec, poll, reporter):
    numbers = _tasks(spec)
    notice = _StoreNotice(spec["id"])
    reported = set()
    while True:
        try:
            state = jobstore.read_state(spec["id"])
        except spoolyaml.SpoolFormatError:
            state = None
        for n, task in _newly_finished(state, numbers, reported):
            reporter.task(n, task)
            reported.add(n)
        if len(reported) == len(numbers):
            _await_status(spec["id"])
            return
        if state is None and _gone(spec["id"]):
            done = _from_accounting(spec, [n for n in numbers if n not in reported])
            for n in sorted(done):
                reporter.task(n, done[n])
            _await_status(spec["id"])
            return
        if state is None:
            notice.check()
        time.sleep(poll)
        poll = min(poll * 1.5, 0.5)


def _shut_down(spec):
    """Delete the job (all its tasks), wait until it is gone, exit status 1."""
    sys.stderr.write("\nInterrupted!\nPlease wait while qsub shuts down.\n")
    sys.stderr.flush()
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)      # shutting down already: the job goes
    from gridtools.cli import ask
    from gridtools.errors import GridError
    end = time.time() + SHUTDOWN_WAIT
    asked = 0.0
    while time.time() < end and not _ended(spec):
        if time.time() - asked >= ASK_AGAIN:     # again: a job taken in after the first ask
            asked = time.time()
            try:
                ask.outcomes("delete", {"targets": [{"id": spec["id"], "tasks": None}], "force": False})
            except GridError as exc:
                sys.stderr.write(f"{exc}\n")
                return 1
        time.sleep(0.05)
    _await_status(spec["id"], timeout=max(0.1, end - time.time()))
    return 1


def _ended(spec):
    """True once no task of the job is pending, running or in error state any more."""
    try:
        state = jobstore.read_state(spec["id"])
    except spoolyaml.SpoolFormatError:
        return False
    if state is None:
        return _gone(spec["id"])
    tasks = state.get("tasks") or {}
    return all((tasks.get(str(n)) or {}).get("state") == "finished" for n in _tasks(spec))


def _gone(job_id):
    """True once the job left the job store: neither its id claim (which lasts until the
    daemon stored the job) nor, looked at after it, its folder is there."""
    from gridtools.spool import ids
    if os.path.lexists(os.path.join(ids.claims_dir("job"), str(job_id))):
        return False
    return not os.path.isdir(jobstore.job_dir(job_id))


def _from_accounting(spec, numbers):
    """The ends of a job that left the job store, by task: the exit status of each task's
    last accounting record (of this job: submitted when qsub sent it, by the kernel's
    clock, which stamps the submission time: ``spool.inbox.queued_at``), None for a task without
    one or whose last one says it never started (deleted before it ran, or from the
    error state)."""
    from gridtools.formats import accounting
    from gridtools.spool import acct
    job, task, status, submitted, started, failed = (
        accounting.FIELDS.index(name) for name in
        ("job_number", "task_number", "exit_status", "submission_time", "start_time", "failed"))
    done = {n: {"exit_status": None} for n in numbers}
    wanted, since = str(spec["id"]), int(spec.get("submit_time") or 0) - 1
    try:
        with open(acct.path(), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields = line.rstrip("\n").split(":")
                if len(fields) > task and fields[job] == wanted and \
                        fields[submitted].isdigit() and int(fields[submitted]) >= since:
                    number = int(fields[task]) if fields[task].isdigit() else 0
                    if (number or 1) in done and fields[status].lstrip("-").isdigit():
                        ran = fields[started] not in ("", "0")
                        done[number or 1] = {"exit_status": int(fields[status]) if ran else None,
                                             "failed": int(fields[failed]) if fields[failed].isdigit() else 0}
    except OSError:
        pass
    return done


class _StoreNotice:
    """Says once on stderr why a submitted job is not stored yet (the daemon could not
    write it: a full spool), as the daemon's published faults tell."""

    EVERY = 1.0         # seconds between looks at the status

    def __init__(self, job_id):
        self.job_id = job_id
        self.next = time.time() + self.EVERY
        self.said = False

    def check(self):
        if self.said or time.time() < self.next:
            return
        self.next = time.time() + self.EVERY
        if os.path.isdir(jobstore.job_dir(self.job_id)):
            return
        from gridtools.spool import status
        for fault in (status.read() or {}).get("faults") or ():
            if fault.get("kind") == "store" and fault.get("job") == self.job_id:
                sys.stderr.write(f"warning: {fault['text']}; it is queued and will be taken in\n")
                sys.stderr.flush()
                self.said = True


def wait_immediate(spec, guard=None, poll=0.01):
    """``-now y``: wait until the immediate job started (True) or was turned away (False:
    the scheduler rejected it, or it was deleted or left the job store before it ran). A
    stop signal (``guard``, armed before submitting) deletes the job, as for -sync y."""
    sys.stderr.write("Waiting for immediate job to be scheduled.\n")
    guard = guard or arm()
    try:
        guard.start_raising()
        started = _wait_immediate(spec, poll)
    except Interrupted:
        guard.stop_raising()
        _shut_down(spec)
        return False
    finally:
        guard.stop_raising()
    if started:
        sys.stderr.write(f"\nYour immediate job {spec['id']} has been successfully scheduled.\n")
    else:
        sys.stderr.write('\nYour "qsub" request could not be scheduled, try again later.\n')
    return started


def _wait_immediate(spec, poll):
    while True:
        try:
            state = jobstore.read_state(spec["id"])
        except spoolyaml.SpoolFormatError:
            state = {}
        if state is None and _gone(spec["id"]):
            return False
        tasks = ((state or {}).get("tasks") or {}).values()
        if any(t.get("state") == "running" or t.get("exit_status") is not None for t in tasks):
            return True
        if any("immediate" in t.get("failed_reason", "") or t.get("state") == "finished" for t in tasks):
            return False
        time.sleep(poll)
        poll = min(poll * 1.5, 0.2)


def _await_status(job_id, timeout=1.0):
    """Wait (briefly) until the published status no longer shows the job as active,
    so that a qstat right after qsub -sync agrees with it."""
    from gridtools.spool import status
    end = time.time() + timeout
    while time.time() < end:
        snap = status.read()
        if snap is None or not any(r["id"] == job_id and r["state"] != "z" for r in snap.get("rows", [])):
            return
        time.sleep(0.01)


class _Reporter:
    """Says how each task ended, as it ends; ``code``: qsub's exit status so far."""

    def __init__(self, spec, terse=False):
        self.spec = spec
        self.terse = terse
        self.code = 0

    def task(self, number, task):
        spec = self.spec
        label = f"{spec['id']}.{number}" if spec.get("tasks") else str(spec["id"])
        status = task.get("exit_status")
        signum = int(task.get("signal") or 0)
        if not signum and status is not None and int(task.get("failed") or 0) == KILLED \
                and 128 < int(status) <= 128 + 64:
            signum = int(status) - 128      # killed by qdel without its shepherd (forced)
        if status is None:
            line, code = f"Unable to run job {label}", 1
        elif signum:
            line, code = f"Job {label} exited because of signal {signal_name(signum)}", 1
        else:
            line, code = f"Job {label} exited with exit code {status}.", int(status)
        if code == 0:
            if not self.terse:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
        else:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        if self.code == 0:
            self.code = code


def signal_name(number):
    """SIGKILL for 9: a signal's name as Grid Engine's qsub prints it."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def report(spec, done, terse=False):
    """Say how the tasks of ``done`` (number -> task) ended, in task order; the exit status."""
    reporter = _Reporter(spec, terse)
    for n, task in sorted(done.items()):
        reporter.task(n, task)
    return reporter.code
