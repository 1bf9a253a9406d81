"""Intake: applying the queued requests, in order, to the daemon's state.

Each request kind has one handler (the table ``daemon.handlers.HANDLERS``):
``handler(state, dispatcher, req, now)``
returning None or ``(exit code, stdout text, stderr text)``, which is sent
back to a client that asked for a reply. The requester is the owner uid of the
request file; a handler re-checks every permission itself (the client's own
checks only serve to print the right message early). Every request is
untrusted: its body is checked (``formats.reqcheck``, and a job description
by ``formats.jobcheck``) before a handler sees it, and no path is ever made
from a client's text. A request that cannot be applied is refused with one
line, logged and removed; it never stops the daemon.
"""

import fnmatch
import functools
import grp
import os
import pwd
import shutil
import time

from gridtools.daemon import admitjob, apply, auth, condorjob, crash, faults
from gridtools.daemon.state import user_name
from gridtools.errors import GridError, SpoolError
from gridtools.formats import jobcheck, reqcheck
from gridtools.model.job import Job, TaskState
from gridtools.model.taskset import RangeBuilder
from gridtools.spool import ids
from gridtools.spool import jobs as jobstore
from gridtools.spool import rows
from gridtools.spool import requests as spool_requests

#: requests applied per pass at most, so that scheduling interleaves with a large intake
BATCH = 1000


class Deferred(Exception):
    """A request that cannot be applied yet (the spool is full): it stays queued, and
    so do the requests after it, to keep their order."""


def run(state, dispatcher, now=None, skip=()):
    """Apply queued requests in order (at most BATCH), except those named in ``skip``
    (applied already, not settled yet). Returns ([(request, answer)] applied, True
    when a request had to wait). New jobs are on disk when this returns; the other
    effects are written by the pass's flush (jobs purged in the same pass never are),
    and ``settle`` answers and removes the requests once the status shows them."""
    done = []
    pending = [name for name in spool_requests.pending(limit=BATCH + len(skip)) if name not in skip]
    if pending:
        state.reload_config(now=now, look=True)     # requests meet the limits of etc/ as it is now
    waited = False
    for name in pending:
        req = spool_requests.take(name)
        try:
            answer = apply_one(state, dispatcher, req, now or time.time())
        except Deferred:
            waited = True
            break
        req.applied()
        done.append((req, answer))
        crash.point("intake")
        if len(done) >= BATCH:
            break
    _commit(state)
    crash.point("intake")
    return done, waited


def _commit(state):
    """Group commit of an intake: the new jobs' descriptions are flushed to disk at once,
    then their id claims are let go (a claim outlives a description a crash could lose)
    and the clients' id hint moves on. Descriptions that could not be flushed are tried
    again at the next intake; until they are on disk no request is settled."""
    waiting = state.unsynced + state.taken_ids
    if not waiting:
        return
    try:
        jobstore.sync_specs(waiting)
    except OSError as exc:              # their claims stay (the sweep removes them)
        state.unsynced = waiting
        faults.note(state, (faults.WRITE, "sync"), faults.WRITE,
                    f"cannot flush new jobs to disk, retrying: {exc.strerror}")
    else:
        state.unsynced = []
        faults.clear(state, (faults.WRITE, "sync"), "new jobs flushed to disk again")
        for job_id in waiting:
            ids.release("job", job_id)
    if state.taken_ids:
        _record_ids(state)


def settle(done):
    """Answer and remove applied requests (after their effects were written and
    published); returns those that could not be settled yet."""
    left = []
    for req, answer in done:
        try:
            spool_requests.answer(req, *answer)
        except GridError:
            left.append((req, answer))
            continue
        req.remove()
    return left


def _record_ids(state):
    """Tell the clients (through the daemon's hint) the last job id taken in."""
    last = ids.peek("job")
    for number in state.taken_ids:
        last = number if number > last or last - number > ids.WINDOW else last
    state.taken_ids.clear()
    ids.record("job", last)


def apply_one(state, dispatcher, req, now):
    """Check one request and run its handler; the answer (code, out, err)."""
    if req.problem:
        state.log(f"W|dropped request {req.name} of {user_name(req.uid)}: the file {req.problem}")
        return 1, "", f"error: invalid request: the file {req.problem}\n"
    try:
        req.body = reqcheck.check(req.kind, req.body)
    except jobcheck.Invalid as exc:
        return refuse(state, req, str(exc))
    from gridtools.daemon import condorsec
    denied = condorsec.check(state, req)
    if denied is not None:
        return denied
    try:
        from gridtools.daemon.handlers import HANDLERS
        return HANDLERS[req.kind](state, dispatcher, req, now) or (0, "", "")
    except Deferred:
        raise
    except Exception as exc:  # noqa: BLE001 - one bad request must not stop the rest
        state.log(f"E|request {req.name} ({req.kind}) of {user_name(req.uid)} failed: {exc!r}")
        return 1, "", f"error: the {req.kind} request could not be applied (see the daemon's messages)\n"


def refuse(state, req, why):
    """Log a request that is refused as malformed; the one-line answer for its client."""
    kind = req.kind if req.kind in reqcheck.BODIES else ""
    what = f"invalid {kind} request" if kind else "invalid request"
    state.log(f"W|refused {what} {req.name} of {user_name(req.uid)}: {why}")
    return 1, "", f"error: {what}: {why}\n"


# ---------------------------------------------------------------- submit

@functools.lru_cache(maxsize=256)
def _account(uid):
    """(name, primary gid, all gids) of a uid; cached for the daemon's life."""
    name = user_name(uid)
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return name, uid, frozenset({uid})
    groups = {entry.pw_gid} | {g.gr_gid for g in grp.getgrall() if name in g.gr_mem}
    return name, entry.pw_gid, frozenset(groups)


@functools.lru_cache(maxsize=256)
def _group_name(gid):
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _identity(spec, uid):
    """Owner, uid, group and gid of a submitted job, taken from the request file's owner."""
    owner, primary, allowed = _account(uid)
    spec["owner"], spec["uid"] = owner, uid
    spec["gid"] = spec.get("gid") if spec.get("gid") in allowed else primary
    spec["group"] = _group_name(spec["gid"])


def resolve_predecessors(state, items, owner, exclude):
    """Job ids named by -hold_jid items (ids, names, patterns) that are still in the system."""
    if not items:
        return []
    live = state.live_ids()
    found = []
    for item in items:
        if item.isdigit():
            jid = int(item)
            if jid in live and jid != exclude:
                found.append(jid)
            continue
        for name, named in state.names.items():
            if fnmatch.fnmatchcase(name, item):
                found.extend(j for j in sorted(named) if j in live and j != exclude
                             and state.jobs[j].spec["owner"] == owner)
    return sorted(set(found))


def submit(state, dispatcher, req, now):
    raw = req.body.get("job")
    claimed = raw.get("id") if isinstance(raw, dict) and type(raw.get("id")) is int else None
    try:
        spec = jobcheck.check(raw, types=_complex_types(state), max_tasks=_max_aj_tasks(state))
        problem = _not_new(state, spec, req.uid)
        if not problem and spec.get("condor_ad"):
            problem = condorjob.check_new(spec)
    except jobcheck.Invalid as exc:
        problem = str(exc)
    if problem:
        if claimed is not None and ids.claimed_by("job", claimed, req.uid):
            ids.release("job", claimed)
        return refuse(state, req, problem)
    _identity(spec, req.uid)
    if spec.get("priority", 0) > 0 and not auth.is_operator(state, spec["owner"]):
        spec["priority"] = 0
        state.log(f"W|job {spec['id']}: positive priority needs operator rights, set to 0")
    spec["predecessors"] = resolve_predecessors(state, spec.get("hold_jid") or [], spec["owner"], spec["id"])
    spec["ad_predecessors"] = resolve_predecessors(state, spec.get("hold_jid_ad") or [],
                                                   spec["owner"], spec["id"])
    script = None
    if not spec.get("binary"):
        cap = _max_script(state)
        script = req.read_script(cap)
        if script is None:
            ids.release("job", spec["id"])
            return refuse(state, req, "the job script is missing, not a plain file of the "
                                      f"submitter's or larger than {cap} bytes")
    _store(state, spec, script)
    state.taken_ids.append(spec["id"])          # its claim goes once it is on disk (_commit)
    job = Job(spec)
    if spec.get("user_hold"):
        job.hold = "u"
    state.add(job)
    state.log(f"I|job {spec['id']} ({spec['name']}) submitted by {spec['owner']}")
    condorjob.submitted(state, job, now)
    admitjob.accept(state, dispatcher, job, now)


def _store(state, spec, script):
    """Write the new job into the store; when it does not fit, take back what was
    written and defer the request (it is taken in again later)."""
    key = (faults.STORE, spec["id"])
    try:
        jobstore.create(spec, script)
    except SpoolError as exc:
        shutil.rmtree(jobstore.job_dir(spec["id"]), ignore_errors=True)
        faults.note(state, key, faults.STORE, f"job {spec['id']} waits to be stored: {exc}", job=spec["id"])
        raise Deferred() from None
    faults.clear(state, key, f"job {spec['id']} stored")


def _not_new(state, spec, uid):
    """Why a checked job description may not become a new job ("" when it may)."""
    job_id = spec["id"]
    if job_id in state.jobs or os.path.lexists(jobstore.spec_path(job_id)):
        return f"job id {job_id} is in use"
    if not ids.claimed_by("job", job_id, uid):
        return f"job id {job_id} was not claimed by {user_name(uid)}"
    return ""


def _global_conf(state):
    return state.config.objects["conf"].get("global") or {}


def _max_aj_tasks(state):
    """The configuration's max_aj_tasks (0: no limit)."""
    try:
        return max(0, int(_global_conf(state).get("max_aj_tasks", 75000)))
    except (TypeError, ValueError):
        return 75000


def _max_script(state):
    """Largest job script: qmaster_params MAX_SCRIPT_SIZE, else the spool's default."""
    from gridtools.formats import values
    from gridtools.formats.sge.conf import parse_params
    text = parse_params(_global_conf(state).get("qmaster_params")).get("MAX_SCRIPT_SIZE")
    try:
        size = values.parse_memory(text) if text else spool_requests.MAX_SCRIPT
    except jobcheck.InputError:
        size = spool_requests.MAX_SCRIPT
    return int(min(size, 1 << 40))


def _complex_types(state):
    """Complex name and shortcut -> type, for checking resource requests."""
    from gridtools.daemon import view
    return {name: cx.type.value for name, cx in view.config_parts(state)["complexes"].items()}


# ---------------------------------------------------------------- delete

def _select_tasks(job, tasks):
    """Task numbers of ``job`` named by a task range list (None = all)."""
    numbers = job.numbers()
    if not tasks:
        return list(numbers)
    wanted = [range(first, last + 1, step) for first, last, step in tasks]
    return [n for n in numbers if any(n in r for r in wanted)]


#: more untouched tasks than this are deleted with the job as a whole, without a record each
DELETE_AT_ONCE = 1000


def delete(state, dispatcher, req, now):
    """Delete job tasks; answers what was done to each target (see ``outcome``)."""
    requester = user_name(req.uid)
    force = bool(req.body.get("force"))
    done = []
    for target in req.body.get("targets") or []:
        job = state.jobs.get(target["id"])
        if job is None or job.is_finished():
            done.append(outcome(target, missing=True))
            continue
        if not auth.may_modify_job(state, requester, job):
            state.log(f"W|{requester} may not delete job {job.id}")
            done.append(outcome(target, denied=True))
            continue
        done.append(_delete_job(state, dispatcher, job, target, now, force))
    return 0, outcomes_text(done), ""


def _delete_job(state, dispatcher, job, target, now, force):
    """Delete the tasks of one target; its outcome. A whole large array is deleted
    without a record per untouched task."""
    tasks = target.get("tasks")
    untouched = job.untouched()
    at_once = not tasks and len(untouched) > DELETE_AT_ONCE
    numbers = sorted(job.tasks) if at_once else _select_tasks(job, tasks)
    deleted, registered = [], []
    for number in numbers:
        st = job.state_of(number)
        if st is not TaskState.FINISHED:
            (registered if st is TaskState.RUNNING else deleted).append(number)
        _delete_task(state, dispatcher, job, number, now, force)
    result = outcome(target, array=job.is_array, deleted=deleted, registered=registered)
    if at_once:
        result["deleted"] = _merged_runs(result["deleted"], untouched)
        apply.delete_untouched(state, job, now)
    elif job.is_finished():
        state.note_finished(job.id)
    return result


def _merged_runs(runs, untouched):
    """Task ranges of ``runs`` ([[first, last, step], ...]) and of ``untouched``."""
    numbers = sorted({n for first, last, step in runs for n in range(first, last + 1, step)})
    builder = RangeBuilder()
    for first, last, step in sorted([list(run) for run in untouched.runs] + [[n, n, 1] for n in numbers]):
        builder.add_run(first, last, step)
    return builder.out


def outcomes_text(done):
    """The answer of a request that acts on jobs: what it did to each (JSON, which the
    commands read faster than the spool's YAML when there are thousands)."""
    import json
    return json.dumps({"outcomes": done}, separators=(",", ":"))


def outcome(target, missing=False, denied=False, array=False, **numbers):
    """What a request did to one target job: ``missing`` (no such job, or it ended),
    ``denied``, else the task numbers of each effect (as ranges)."""
    result = {"id": int(target["id"]), "missing": missing, "denied": denied, "array": array}
    for key, found in numbers.items():
        result[key] = rows.ranges(sorted(found))
    return result


def _delete_task(state, dispatcher, job, number, now, force):
    apply.delete_task(state, dispatcher, job, number, now, force)


# ---------------------------------------------------------------- hold / release

def hold(state, dispatcher, req, now):
    """Set or release holds; answers, per target, the tasks the change concerned."""
    requester = user_name(req.uid)
    letters = req.body.get("letters", "u")
    on = bool(req.body.get("on", True))
    done = []
    for target in req.body.get("targets") or []:
        job = state.jobs.get(target["id"])
        if job is None or job.is_finished():
            done.append(outcome(target, missing=True))
            continue
        if not auth.may_hold(state, requester, job, letters):
            state.log(f"W|{requester} may not change hold {letters} of job {job.id}")
            done.append(outcome(target, denied=True))
            continue
        concerned = _hold_concerns(job, target.get("tasks"), letters, on)
        if target.get("tasks"):
            for number in _select_tasks(job, target["tasks"]):
                if job.state_of(number) is TaskState.PENDING:
                    apply.hold(state, job, number, letters, on)
        else:
            apply.hold(state, job, None, letters, on)
        done.append(outcome(target, array=job.is_array, changed=concerned))
    return 0, outcomes_text(done), ""


def _hold_concerns(job, tasks, letters, on):
    """Task numbers a hold change concerns, as Grid Engine reports them: running tasks,
    and pending ones when setting a hold or when they hold one of the letters."""
    found = []
    for number in _select_tasks(job, tasks):
        st = job.state_of(number)
        if st is TaskState.RUNNING or (st in (TaskState.PENDING, TaskState.ERROR) and
                                       (on or set(job.holds_of(number)) & set(letters))):
            found.append(number)
    return found


