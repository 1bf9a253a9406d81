"""Intake: applying the queued requests, in order, to the daemon's state.

Each request kind has one handler: ``handler(state, dispatcher, req, now)``
returning None or ``(exit code, stdout text, stderr text)``, which is sent
back to a client that asked for a reply. The requester is the owner uid of the
request file; a handler re-checks every permission itself (the client's own
checks only serve to print the right message early). A request that cannot
be applied is logged and dropped; it never stops the daemon.
"""

import fnmatch
import functools
import grp
import pwd
import shutil
import time

from gridtools.daemon import auth, crash, faults, publish
from gridtools.daemon.state import user_name
from gridtools.errors import GridError, SpoolError
from gridtools.model import transitions as tr
from gridtools.formats import spoolyaml
from gridtools.model.job import Job, TaskState
from gridtools.spool import jobs as jobstore
from gridtools.spool import requests as spool_requests

HANDLERS = {}


def handler(kind):
    def register(func):
        HANDLERS[kind] = func
        return func
    return register


#: requests applied per pass at most, so that scheduling interleaves with a large intake
BATCH = 200


class Deferred(Exception):
    """A request that cannot be applied yet (the spool is full): it stays queued, and
    so do the requests after it, to keep their order."""


def run(state, dispatcher, now=None, skip=()):
    """Apply queued requests in order (at most BATCH), except those named in ``skip``
    (applied already, not settled yet). Returns ([(request, answer)] applied, True
    when a request had to wait). Their effects are written before this returns;
    ``settle`` answers and removes them once the status shows them."""
    done = []
    for req in spool_requests.pending(limit=BATCH + len(skip)):
        if req.name in skip:
            continue
        func = HANDLERS.get(req.kind)
        answer = (1, "", f"error: unknown request {req.kind!r}\n")
        try:
            if func is None:
                state.log(f"W|dropped request {req.name}: unknown kind {req.kind!r}")
            else:
                answer = func(state, dispatcher, req, now or time.time()) or (0, "", "")
        except Deferred:
            state.flush()
            return done, True
        except Exception as exc:  # noqa: BLE001 - one bad request must not stop the rest
            state.log(f"E|request {req.name} ({req.kind}) failed: {exc!r}")
            answer = (1, "", f"error: {exc}\n")
        done.append((req, answer))
        crash.point("intake")
        if len(done) >= BATCH:
            break
    state.flush()
    crash.point("intake")
    return done, False


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
        for name, ids in state.names.items():
            if fnmatch.fnmatchcase(name, item):
                found.extend(j for j in sorted(ids) if j in live and j != exclude
                             and state.jobs[j].spec["owner"] == owner)
    return sorted(set(found))


@handler("submit")
def submit(state, dispatcher, req, now):
    spec = req.body.get("job") or {}
    if "id" not in spec or spec["id"] in state.jobs:
        state.log(f"W|dropped submit {req.name}: missing or duplicate job id")
        return
    _identity(spec, req.uid)
    if spec.get("priority", 0) > 0 and not auth.is_operator(state, spec["owner"]):
        spec["priority"] = 0
        state.log(f"W|job {spec['id']}: positive priority needs operator rights, set to 0")
    spec["predecessors"] = resolve_predecessors(state, spec.get("hold_jid") or [], spec["owner"], spec["id"])
    spec["ad_predecessors"] = resolve_predecessors(state, spec.get("hold_jid_ad") or [],
                                                   spec["owner"], spec["id"])
    script = None
    if not spec.get("binary"):
        script = req.read_script()
        if script is None:
            state.log(f"W|dropped submit of job {spec['id']}: script missing")
            return
    _store(state, spec, script)
    job = Job(spec)
    if spec.get("user_hold"):
        job.hold = "u"
    state.add(job)
    state.log(f"I|job {spec['id']} ({spec['name']}) submitted by {spec['owner']}")


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


# ---------------------------------------------------------------- delete

def _select_tasks(job, tasks):
    """Task numbers of ``job`` named by a task range list (None = all)."""
    numbers = list(job.numbers())
    if not tasks:
        return numbers
    wanted = set()
    for first, last, step in tasks:
        wanted.update(range(first, last + 1, step))
    return [n for n in numbers if n in wanted]


@handler("delete")
def delete(state, dispatcher, req, now):
    """Delete job tasks; answers what was done to each target (see ``outcome``)."""
    requester = user_name(req.uid)
    force = bool(req.body.get("force"))
    done = []
    for target in req.body.get("targets") or []:
        job = state.jobs.get(int(target["id"]))
        if job is None or job.is_finished():
            done.append(outcome(target, missing=True))
            continue
        if not auth.may_modify_job(state, requester, job):
            state.log(f"W|{requester} may not delete job {job.id}")
            done.append(outcome(target, denied=True))
            continue
        deleted, registered = [], []
        for number in _select_tasks(job, target.get("tasks")):
            st = job.state_of(number)
            if st is not TaskState.FINISHED:
                (registered if st is TaskState.RUNNING else deleted).append(number)
            _delete_task(state, dispatcher, job, number, now, force)
        state.touch(job)
        state.need_schedule = True
        done.append(outcome(target, array=job.is_array, deleted=deleted, registered=registered))
    return 0, spoolyaml.dump({"outcomes": done}), ""


def outcome(target, missing=False, denied=False, array=False, **numbers):
    """What a request did to one target job: ``missing`` (no such job, or it ended),
    ``denied``, else the task numbers of each effect (as ranges)."""
    result = {"id": int(target["id"]), "missing": missing, "denied": denied, "array": array}
    for key, found in numbers.items():
        result[key] = publish.ranges(sorted(found))
    return result


def _delete_task(state, dispatcher, job, number, now, force):
    st = job.state_of(number)
    if st in (TaskState.PENDING, TaskState.ERROR):
        tr.delete_pending(job, number, now)
        dispatcher.task_ended(job, number)
    elif st is TaskState.RUNNING:
        task = job.task(number)
        if tr.request_delete(job, number) or force:
            dispatcher.signal_task(job, task, "delete")
        if force:
            dispatcher.force_end(job, task, now)


# ---------------------------------------------------------------- hold / release

@handler("hold")
def hold(state, dispatcher, req, now):
    """Set or release holds; answers, per target, the tasks the change concerned."""
    requester = user_name(req.uid)
    letters = req.body.get("letters", "u")
    on = bool(req.body.get("on", True))
    done = []
    for target in req.body.get("targets") or []:
        job = state.jobs.get(int(target["id"]))
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
                    tr.set_hold(job, number, letters, on)
        else:
            tr.set_hold(job, None, letters, on)
        state.touch(job)
        state.need_schedule = True
        done.append(outcome(target, array=job.is_array, changed=concerned))
    return 0, spoolyaml.dump({"outcomes": done}), ""


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


from gridtools.daemon import confreq  # noqa: E402,F401 (registers handlers)
from gridtools.daemon import alterreq  # noqa: E402,F401
from gridtools.daemon import qmodreq  # noqa: E402,F401
