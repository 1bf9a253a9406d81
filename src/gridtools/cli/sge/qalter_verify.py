"""qalter -w: could a job that is already queued ever run?

The job's description is read from the spool, the changes of the command
line are applied to a copy, and the copy goes through the real scheduler
pass (``verify.check_spec``): against the cell with every queue empty and
no load for ``-w v``, ``-w e`` and ``-w w``; against the cell as it is now,
with the tasks that run and the hosts' load, for ``-w p``. A running or
held job is not verified. Nothing is changed by ``-w v`` or ``-w p``.
"""

import sys

from gridtools.cli import status
from gridtools.cli.sge import jobsel, qstatus, verify

RUNNING_OR_HELD = "verification: job is already running or is held"
NO_QUEUES = "verification: no suitable queues"


def _denial(snap, target):
    """The refusal line when the caller may not alter the job, else None."""
    user = jobsel.me()
    owner = snap["jobs"][target["id"]].get("owner")
    if owner != user and not jobsel.is_operator(user):
        return f'denied: "{user}" must be at least owner of job {target["id"]} to change job attributes'
    return None


def running_or_held(snap, job_id):
    """True when a task of the job runs, or every waiting task has a hold."""
    rows = jobsel.rows_of(snap, job_id)
    if any(r["state"] in qstatus.ACTIVE for r in rows):
        return True
    waiting = [r for r in rows if r["state"] not in qstatus.ACTIVE]
    return bool(waiting) and all(r.get("hold") for r in waiting)


def _spec(job_id, changes, context_ops):
    """The job's description with the changes applied (None when it is gone)."""
    from gridtools.model import alteration
    from gridtools.spool import jobs as jobstore
    from gridtools.spool import inbox
    try:
        spec = jobstore.read_spec(job_id)
    except PermissionError:     # another user's job: its description is private
        return None
    if spec is None:            # submitted a moment ago, not taken in by the daemon yet
        found = next((r for r in inbox.pending_submits()
                      if (r.body.get("job") or {}).get("id") == job_id), None)
        # (else taken in since: the daemon writes the description before it removes the request)
        spec = status.as_taken_in(found.body["job"], found.uid) if found is not None \
            else jobstore.read_spec(job_id)
    return alteration.apply(spec, changes, context_ops) if spec is not None else None


def _outcome(snap, target, changes, context_ops, mode):
    """(could run, lines to print) for one job."""
    spec = _spec(target["id"], changes, context_ops)
    if spec is None:
        return False, [f'denied: job "{target["id"]}" does not exist']
    running = verify.occupation(snap, exclude=spec["id"]) if mode == "p" else ()
    ok, reasons, slots = verify.check_spec(spec, use_load=(mode == "p"), running=running)
    if ok:
        if spec.get("pe"):
            return True, [f"verification: found possible assignment with {slots} slots"]
        return True, ["verification: found suitable queue(s)"]
    return False, verify.job_lines(spec["id"], reasons) + [NO_QUEUES]


def report(targets, snap, changes, context_ops, mode):
    """``-w v`` / ``-w p``: print the verification of each job; 1 when one cannot run."""
    code = 0
    for target in targets:
        denial = _denial(snap, target)
        if denial:
            print(denial)
            code = 1
            continue
        if running_or_held(snap, target["id"]):
            print(RUNNING_OR_HELD)
            continue
        ok, lines = _outcome(snap, target, changes, context_ops, mode)
        print("\n".join(lines))
        code = code if ok else 1
    return code


def gate(targets, snap, changes, context_ops, mode):
    """``-w e`` / ``-w w``: (jobs to change, exit code); ``e`` drops jobs that could never run."""
    kept, code = [], 0
    for target in targets:
        if _denial(snap, target) or running_or_held(snap, target["id"]):
            kept.append(target)
            continue
        ok, _lines = _outcome(snap, target, changes, context_ops, "v")
        if ok:
            kept.append(target)
        elif mode == "e":
            sys.stderr.write("error: no suitable queues\n")
            code = 1
        else:
            sys.stderr.write("warning: no suitable queues\n")
            kept.append(target)
    return kept, code
