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
import time

from gridtools.daemon import auth
from gridtools.daemon.state import user_name
from gridtools.model import transitions as tr
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


def run(state, dispatcher, now=None):
    """Apply queued requests in order (at most BATCH); returns how many were applied."""
    count = 0
    done = []
    for req in spool_requests.pending(limit=BATCH):
        func = HANDLERS.get(req.kind)
        answer = (1, "", f"error: unknown request {req.kind!r}\n")
        try:
            if func is None:
                state.log(f"W|dropped request {req.name}: unknown kind {req.kind!r}")
            else:
                answer = func(state, dispatcher, req, now or time.time()) or (0, "", "")
        except Exception as exc:  # noqa: BLE001 - one bad request must not stop the rest
            state.log(f"E|request {req.name} ({req.kind}) failed: {exc!r}")
            answer = (1, "", f"error: {exc}\n")
        done.append((req, answer))
        count += 1
    # a request's effect is on disk before the request disappears or is answered
    state.flush()
    for req, answer in done:
        spool_requests.answer(req, *answer)
        req.remove()
    return count


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
    jobstore.create(spec, script)
    job = Job(spec)
    if spec.get("user_hold"):
        job.hold = "u"
    state.add(job)
    state.log(f"I|job {spec['id']} ({spec['name']}) submitted by {spec['owner']}")
    admitjob.accept(state, dispatcher, job, now)


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
    requester = user_name(req.uid)
    for target in req.body.get("targets") or []:
        job = state.jobs.get(int(target["id"]))
        if job is None or job.is_finished():
            continue
        if not auth.may_modify_job(state, requester, job):
            state.log(f"W|{requester} may not delete job {job.id}")
            continue
        force = bool(req.body.get("force"))
        for number in _select_tasks(job, target.get("tasks")):
            _delete_task(state, dispatcher, job, number, now, force)
        state.touch(job)
        state.need_schedule = True


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
    requester = user_name(req.uid)
    letters = req.body.get("letters", "u")
    on = bool(req.body.get("on", True))
    for target in req.body.get("targets") or []:
        job = state.jobs.get(int(target["id"]))
        if job is None:
            continue
        if not auth.may_hold(state, requester, job, letters):
            state.log(f"W|{requester} may not change hold {letters} of job {job.id}")
            continue
        if target.get("tasks"):
            for number in _select_tasks(job, target["tasks"]):
                if job.state_of(number) is TaskState.PENDING:
                    tr.set_hold(job, number, letters, on)
        else:
            tr.set_hold(job, None, letters, on)
        state.touch(job)
        state.need_schedule = True


from gridtools.daemon import confreq  # noqa: E402,F401 (registers handlers)
from gridtools.daemon import alterreq  # noqa: E402,F401
from gridtools.daemon import qmodreq  # noqa: E402,F401
from gridtools.daemon import admitjob, arreq, petask  # noqa: E402

arreq.register(handler)
handler("pe_task")(petask.start)
