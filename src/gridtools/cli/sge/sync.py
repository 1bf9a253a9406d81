"""``qsub -sync y``: wait until every task of the job ended and return its exit status.

Polls the job's state file (written only by the daemon), starting every
10 ms and backing off to 0.5 s. A job that left the job store before a look
saw it finished (purged at once: many other jobs ended, or were deleted,
meanwhile) is read from its accounting records instead. Prints Grid
Engine's ``Job N exited with exit code X.`` line per task on stderr, or
``Unable to run job N`` for a task that never ran (deleted while it waited,
or from the error state). The exit status is the job's (for an array job,
the highest of its tasks'); a task that never ran gives 1 (Grid Engine's
qsub gives 0, which would tell a script that the job succeeded).
"""

import os
import sys
import time

from gridtools.formats import spoolyaml
from gridtools.spool import jobs as jobstore


def _tasks(spec):
    rng = spec.get("tasks")
    return list(range(rng[0], rng[1] + 1, rng[2])) if rng else [1]


def _finished(state, numbers):
    tasks = (state or {}).get("tasks") or {}
    done = {}
    for n in numbers:
        t = tasks.get(str(n))
        if not t or t.get("state") != "finished":
            return None
        done[n] = t
    return done


def wait(spec, poll=0.01):
    import gc
    gc.enable()             # a wait may last long: the launcher turned the collector off
    numbers = _tasks(spec)
    notice = _StoreNotice(spec["id"])
    while True:
        try:
            state = jobstore.read_state(spec["id"])
        except spoolyaml.SpoolFormatError:
            state = None
        done = _finished(state, numbers)
        if done is None and state is None and _gone(spec["id"]):
            done = _from_accounting(spec, numbers)
        if done is not None:
            _await_status(spec["id"])
            return report(spec, done)
        if state is None:
            notice.check()
        time.sleep(poll)
        poll = min(poll * 1.5, 0.5)


def _gone(job_id):
    """True once the job left the job store: neither its id claim (which lasts until the
    daemon stored the job) nor, looked at after it, its folder is there."""
    from gridtools.spool import ids
    if os.path.lexists(os.path.join(ids.claims_dir("job"), str(job_id))):
        return False
    return not os.path.isdir(jobstore.job_dir(job_id))


def _from_accounting(spec, numbers):
    """The ends of a job that left the job store, by task: the exit status of each task's
    last accounting record (of this job: submitted when qsub sent it or after, by the
    daemon's clock, which stamps the submission time), None for a task without
    one or whose last one says it never started (deleted before it ran, or from the
    error state)."""
    from gridtools.formats import accounting
    from gridtools.spool import acct
    job, task, status, submitted, started = (
        accounting.FIELDS.index(name) for name in
        ("job_number", "task_number", "exit_status", "submission_time", "start_time"))
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
                        done[number or 1] = {"exit_status": int(fields[status]) if ran else None}
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


def wait_immediate(spec, poll=0.01):
    """``-now y``: wait until the immediate job started (True) or was turned away (False)."""
    sys.stderr.write("Waiting for immediate job to be scheduled.\n")
    while True:
        try:
            state = jobstore.read_state(spec["id"]) or {}
        except spoolyaml.SpoolFormatError:
            state = {}
        tasks = (state.get("tasks") or {}).values()
        if any(t.get("state") == "running" or t.get("exit_status") is not None for t in tasks):
            sys.stderr.write(f"\nYour immediate job {spec['id']} has been successfully scheduled.\n")
            return True
        if any("immediate" in t.get("failed_reason", "") for t in tasks):
            sys.stderr.write('\nYour "qsub" request could not be scheduled, try again later.\n')
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


def report(spec, done):
    worst = 0
    for n, task in sorted(done.items()):
        label = f"{spec['id']}.{n}" if spec.get("tasks") else str(spec["id"])
        status = task.get("exit_status")
        if status is None:
            sys.stderr.write(f"Unable to run job {label}\n")
            worst = max(worst, 1)
            continue
        sys.stderr.write(f"Job {label} exited with exit code {status}.\n")
        worst = max(worst, int(status))
    return worst
