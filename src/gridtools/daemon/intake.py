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
line, logged and removed; it never stops the daemon. Submits are taken in
here; deletes and holds in ``daemon.jobreq``.

A request is the daemon's once ``spool.inbox.take`` moved it out of the
queue, before it is read: its client can no longer withdraw it, and it is
answered even when the daemon is killed first (the next one takes it up
before the queue). One its client withdrew before is skipped.
"""

import functools
import grp
import os
import pwd
import shutil
import time

from gridtools.daemon import admitjob, auth, condorjob, crash, faults, journal
from gridtools.daemon.state import user_name
from gridtools.errors import GridError, SpoolError
from gridtools.formats import jobcheck, reqcheck
from gridtools.formats.sge import admission
from gridtools.model import predecessors
from gridtools.model.job import Job
from gridtools.spool import ids
from gridtools.spool import jobs as jobstore
from gridtools.spool import inbox, requests as spool_requests

#: requests applied per pass at most, so that scheduling interleaves with a large intake
BATCH = 1000


class Deferred(Exception):
    """A request that cannot be applied yet (the spool is full, or the server JSV is
    verifying its job: ``serverjsv.Background``): it stays taken (the next intake
    begins with it), and the requests after it stay queued, to keep their order."""


def run(state, dispatcher, now=None, skip=()):
    """Apply queued requests in order (at most BATCH), except those named in ``skip``
    (applied already, not settled yet). Returns ([(request, answer)] applied, True
    when a request had to wait). New jobs are on disk when this returns; the other
    effects are written by the pass's flush (jobs purged in the same pass never are),
    and ``settle`` answers and removes the requests once the status shows them."""
    done = []
    _HELD_ON.clear()                    # (jobs left since the last intake)
    pending = [name for name in inbox.pending(limit=BATCH + len(skip)) if name not in skip]
    if pending:
        state.reload_config(now=now, look=True)     # requests meet the limits of etc/ as it is now
    waited = False
    for name in pending:
        req = inbox.take(name)
        if req is None:
            continue                    # withdrawn by its client: never to be done
        try:
            answer = apply_one(state, dispatcher, req, now or time.time())
        except Deferred:
            waited = True
            break
        finally:
            state.taken_here.add(req.name)      # (until it is settled: ``forget_settled``)
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
    and the clients' id hint moves on; the journal's new records are flushed to disk
    after them. What could not be flushed is tried again at the next intake; until it is
    on disk no request is settled."""
    _commit_specs(state)
    journal.commit(state)


def _commit_specs(state):
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
    published); returns those that could not be settled yet. A refused submission is
    removed before it is answered: it queued nothing, and a query made once its client
    has the refusal must not show its job as still coming (``inbox.pending_submits``)."""
    left = []
    for req, answer in done:
        refused = req.kind == "submit" and answer[0] != 0
        if refused:
            _remove(req)
        try:
            inbox.answer(req, *answer)
        except GridError:
            left.append((req, answer))
            continue
        if not refused:
            _remove(req)
    return left


def forget_settled(state, settled):
    """The requests ``settled`` (answered and removed) are no longer this process's to
    take in again."""
    state.taken_here.difference_update(req.name for req, _answer in settled)


def _remove(req):
    """Remove an applied request; whatever it turned out to be, the others are settled."""
    try:
        req.remove()
    except Exception:  # noqa: BLE001 - a planted entry must not keep the others unanswered
        pass


def _record_ids(state):
    """Tell the clients (through the daemon's hint) the last job id taken in: the furthest
    of the ids taken in that a client could have been given (``_within_reach``). A job
    whose id was claimed far ahead, with a request written for it, is taken in but moves
    the hint no further: everybody else's ids do not jump after it."""
    hint = ids.peek("job")
    last = _furthest(hint, state.taken_ids, _within_reach(state, hint, len(state.taken_ids)))
    state.taken_ids.clear()
    if last != hint:
        ids.record("job", last)


#: ids a client may be given beyond those ``_within_reach`` counts (claims made and
#: released again while the daemon looked)
REACH_SLACK = 64


def _within_reach(state, hint, taken):
    """How far after ``hint`` a client's id can lie: a client takes the id after the
    claims that follow the hint, skipping the jobs there, so no further than the run of
    claims there, the ``taken`` ids whose claims are gone, the jobs ahead and some slack."""
    ahead = sum(1 for job_id in state.jobs if 0 < (job_id - hint) % jobcheck.MAX_JOB_ID <= ids.WINDOW)
    try:
        run = ids.run_length("job", hint)
    except SpoolError:
        run = 0
    return run + taken + ahead + REACH_SLACK


def _furthest(hint, numbers, reach):
    """The id of ``numbers`` furthest after ``hint`` (counting on from MAX_JOB_ID to 1) and
    no more than ``reach`` after it; ``hint`` when there is none."""
    best, last = 0, hint
    for number in numbers:
        distance = (number - hint) % jobcheck.MAX_JOB_ID
        if best < distance <= reach:
            best, last = distance, number
    return last


def record_stored_ids(state):
    """Daemon start: move the clients' id hint past the jobs an earlier daemon stored but
    ended before it recorded (their submits, applied again, are refused as in use and
    record nothing): once such a job is purged its id must not be handed out again."""
    hint, damaged = ids.peek("job"), ids.damaged("job")
    if damaged:                         # (peek read the highest id known instead)
        state.log(f"E|{ids.hint_path('job')} says no job id: job ids go on after {hint}, the highest "
                  "id in the spool and the accounting file")
    ahead = [job_id for job_id in state.jobs if 0 < (job_id - hint) % jobcheck.MAX_JOB_ID <= ids.WINDOW]
    last = _furthest(hint, ahead, _within_reach(state, hint, 0))
    if last != hint or damaged:
        try:
            ids.record("job", last)
        except SpoolError:
            pass                        # (a spool that cannot be written: no new job either)


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

#: seconds a user's group membership is taken from memory: a burst of submits reads the
#: group database once, and a user taken out of a group cannot submit with it for longer
ACCOUNT_KEPT = 2.0
_ACCOUNTS = {}


def _account(uid):
    """(name, primary gid, all gids) of a uid, as the user and group databases say now
    (read again after ACCOUNT_KEPT seconds)."""
    now = time.monotonic()
    kept = _ACCOUNTS.get(uid)
    if kept is not None and now - kept[0] < ACCOUNT_KEPT:
        return kept[1]
    name = user_name(uid)
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        found = name, uid, frozenset({uid})
    else:
        groups = {entry.pw_gid} | {g.gr_gid for g in grp.getgrall() if name in g.gr_mem}
        found = name, entry.pw_gid, frozenset(groups)
    if len(_ACCOUNTS) >= 256:
        _ACCOUNTS.clear()
    _ACCOUNTS[uid] = (now, found)
    return found


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


def uid_domain(state):
    """The UID_DOMAIN a job's User names (user@domain, as condor_userprio names its
    submitters): condor_config's, else this machine's full name."""
    from gridtools import cell, seclevels
    get = state.condor.conf.get if state.condor is not None else (lambda name: None)
    return seclevels.identity("", get, cell.hostname()).domain


#: most job ids all the jobs of one owner may wait for (-hold_jid, -hold_jid_ad: a name or
#: pattern is kept as the ids it matched, so that each job holding on "*" would keep them
#: all, and the jobs of an owner so many ids as the square of their number)
MOST_HELD_ON = 100_000


#: owner -> the job ids their jobs wait for, counted at most once an intake (``run`` lets
#: it go; what the intake adds is added): a pipeline submitting thousands of dependent
#: jobs in one intake is not counted over all the jobs for each
_HELD_ON = {}


def _waits_for(job):
    return len(job.spec.get("predecessors") or ()) + len(job.spec.get("ad_predecessors") or ())


def held_on_refusal(state, owner, more, leaving=None):
    """Why a job of ``owner`` that waits for ``more`` job ids (another ``leaving`` job of
    theirs waiting for none of those it waited for) is refused, or "" (then it counts)."""
    if not more:
        return ""
    total = _HELD_ON.get(owner)
    if total is None:
        total = _HELD_ON[owner] = sum(_waits_for(job) for job in state.jobs.values()
                                      if job.spec.get("owner") == owner and not job.is_finished())
    total += more - (_waits_for(leaving) if leaving is not None else 0)
    if total > MOST_HELD_ON:
        return (f"job rejected: the jobs of user {owner} would wait for more than {MOST_HELD_ON} "
                "jobs in all (-hold_jid, -hold_jid_ad)")
    _HELD_ON[owner] = total
    return ""


def resolve_predecessors(state, items, owner, exclude):
    """Job ids named by -hold_jid items (ids, names, patterns) that are still in the system."""
    if not items:
        return []
    return predecessors.resolve(items, owner, exclude, state.live_ids(), state.names,
                                lambda jid: state.jobs[jid].spec["owner"])


def _too_many_procs(state, spec):
    """The refusal of a cluster with more procs than the cell's MAX_JOBS_PER_SUBMISSION
    (as HTCondor's schedd enforces it, whatever the submitter's own configuration said)."""
    from gridtools.formats.condor.jobad import max_jobs
    from gridtools.model.job import task_numbers
    value = state.condor.conf.get("MAX_JOBS_PER_SUBMISSION") if state.condor is not None else None
    if len(task_numbers(spec)) > max_jobs(value):
        return "Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION"
    return None


def _accounting(state, spec, uid):
    """Why a new HTCondor job may not count for the accounting group its ads name, as
    submitted (before the cell's transforms, an administrator's): ``condorreq.
    accounting_refusal`` of each proc's AccountingGroup (its literal value, or the
    expression); None when every one may."""
    from gridtools import jobads
    from gridtools.classad.nodes import Literal
    from gridtools.daemon.condorreq import accounting_refusal
    get = state.condor.conf.get if state.condor is not None else (lambda _name: None)
    owner = user_name(uid)
    for text in dict.fromkeys(spec["condor_ad"] if isinstance(spec["condor_ad"], list) else [spec["condor_ad"]]):
        expr = jobads.parsed_ad(text).lookup("AccountingGroup") if text else None
        why = accounting_refusal(get, owner, expr.value if isinstance(expr, Literal) else expr)
        if why is not None:
            return why
    return None


def accounting_group(text):
    """The accounting group an HTCondor job's ad (``text``) names: its AcctGroup (what
    condor_submit made of accounting_group), else the group part of an AccountingGroup
    of the form ``group.user``; None when it names none."""
    from gridtools import jobads
    ad = jobads.parsed_ad(text) if text else None
    if ad is None:
        return None
    group = ad.eval("AcctGroup")
    if isinstance(group, str) and group:
        return group
    whole = ad.eval("AccountingGroup")
    if isinstance(whole, str) and "." in whole:
        return whole.rpartition(".")[0] or None
    return None


def _group_project(state, spec):
    """An HTCondor job whose accounting group (proc 0's, as the cell's transforms left
    it: ``accounting_group``) is the name of a project of the cell that its owner may
    submit to gets that project as a ``qsub -P`` job has it (qacct, qstat -ext, the
    share tree), as a ``-P`` project is a Grid Engine job's accounting group. A group
    that names no such project leaves the job without one (or with its owner's default
    project). The project is taken at submission: a later change of the group or of the
    projects does not change it."""
    from gridtools.daemon import admitjob
    from gridtools.formats.sge import admission
    texts = spec["condor_ad"]
    group = accounting_group(texts[0] if isinstance(texts, list) else texts)
    if not group or spec.get("project") or state.config.objects["project"].get(group) is None:
        return
    mapped = dict(spec, project=group)
    if admission._project_problem(mapped, admitjob.view(state), spec["owner"], spec.get("group", "")) is None:
        spec["project"] = group


def _held_once(spec, counted):
    """Set an HTCondor job's ``per_job_requests`` from its parallel environment and hard
    requests (``formats.condor.spec.per_job_requests``: its gpu request and machine
    resources, ``counted``), as condor_submit sets it: a client's list is never believed
    (it would hold any consumable once for all the job's slots). A Grid Engine job holds
    none once."""
    from gridtools.formats.condor.spec import per_job_requests
    held_once = per_job_requests(spec.get("pe"), (spec.get("resources") or {}).get("hard") or {}, counted)
    if held_once:
        spec["per_job_requests"] = held_once


def submit(state, dispatcher, req, now):
    raw = req.body.get("job")
    claimed = raw.get("id") if isinstance(raw, dict) and type(raw.get("id")) is int else None
    if req.replayed and claimed in state.jobs and state.jobs[claimed].spec.get("uid") == req.uid:
        # (taken in by a daemon that ended before it answered, or by a pass of this one cut
        # short before it answered: applied again, it is done)
        if req.name in state.taken_here:
            state.log(f"I|job {claimed} of request {req.name} was taken in by a pass that was cut "
                      "short before it answered; it is answered now")
        else:
            state.log(f"I|job {claimed} of request {req.name} was taken in before the daemon restarted")
        # a daemon killed before its intake's commit left the job's id claim: it goes once
        # the description is on disk (_commit), as a first intake's would (a claim left
        # behind keeps ``qsub -sync y`` from ever finding a purged job gone)
        if claimed not in state.taken_ids and ids.claimed_by("job", claimed, req.uid):
            state.taken_ids.append(claimed)
        return 0, "", ""
    try:
        spec = jobcheck.check(raw, types=_complex_types(state), max_tasks=_max_aj_tasks(state))
        pending = spec.pop("requests_pending", False)
        spec.pop("per_job_requests", None)      # the daemon's own, never the client's (_held_once)
        problem = _not_new(state, spec, req.uid)
        if not problem and not spec.get("condor_ad") and "universe" in spec:
            problem = "a Grid Engine job has no universe"      # (HTCondor's, read from its ad)
        if not problem and spec.get("condor_ad"):
            problem = condorjob.check_new(spec) or _too_many_procs(state, spec) or _accounting(state, spec, req.uid)
            if not problem:
                from gridtools.daemon.devices import countable_complexes
                counted = countable_complexes(state.config)
                found = job_transforms(state)
                if found:                       # (its ads as the cell's transforms change them)
                    changed, problem = condorjob.transform(spec, found, counted)
                    if changed is not None:
                        spec, pending = jobcheck.check(changed, types=_complex_types(state),
                                                       max_tasks=_max_aj_tasks(state)), False
                if not problem and pending:     # (requests its ad gives as expressions)
                    spec = jobcheck.check(condorjob.settle_requests(spec, counted),
                                          types=_complex_types(state), max_tasks=_max_aj_tasks(state))
                elif not problem:
                    _held_once(spec, counted)
    except jobcheck.Invalid as exc:
        problem = str(exc)
    except (ArithmeticError, ValueError, TypeError) as exc:     # (an ad no check foresaw)
        problem = f"the job's requests cannot be read: {exc}"
    if problem:
        if claimed is not None and ids.claimed_by("job", claimed, req.uid):
            ids.release("job", claimed)
        return refuse(state, req, problem)
    _identity(spec, req.uid)
    if spec.get("override_tickets") and not auth.is_operator(state, spec["owner"]):
        return _turn_away(state, spec, f'denied: "{spec["owner"]}" must be operator to change amount of '
                                       "override tickets")
    verified = None
    if not spec.get("condor_ad"):
        from gridtools.daemon import serverjsv
        server = serverjsv.url(state)
        if server is None:
            if not serverjsv.BACKGROUND.busy():
                serverjsv.KEPT.release()    # (one left running when the url was set)
        else:                           # (Grid Engine's server JSV, after the client's)
            found = serverjsv.BACKGROUND.outcome(state, (req.name, server), spec, server)
            if found is None:           # (being verified: taken in again once it is)
                raise Deferred()
            changed, why = found
            if why is None and changed is not spec:
                try:
                    changed = jobcheck.check(changed, types=_complex_types(state), max_tasks=_max_aj_tasks(state))
                except jobcheck.Invalid as exc:
                    why = f"the job as the server JSV left it is not valid: {exc}"
                else:
                    spec = changed
                    _identity(spec, req.uid)
            if why is not None:
                return _turn_away(state, spec, why)
            verified = {"name": spec["name"], "tasks": spec.get("tasks")}
    # the kernel's clock, never the client's: it orders the queue (when the request was queued,
    # so that a stopped or busy daemon neither reorders nor redates the jobs it takes in late)
    spec["submit_time"] = inbox.queued_at(req, now)
    spec["uid_domain"] = uid_domain(state)
    spec["predecessors"] = resolve_predecessors(state, spec.get("hold_jid") or [], spec["owner"], spec["id"])
    spec["ad_predecessors"] = resolve_predecessors(state, spec.get("hold_jid_ad") or [],
                                                   spec["owner"], spec["id"])
    if spec.get("condor_ad"):
        _group_project(state, spec)
    why = (_not_allowed(state, spec) or admitjob.refusal(state, spec) or _submit_refusal(state, spec)
           or _over_job_limits(state, spec)
           or held_on_refusal(state, spec["owner"], len(spec["predecessors"]) + len(spec["ad_predecessors"])))
    if why:
        return _turn_away(state, spec, why)
    script = None
    if not spec.get("binary"):
        cap = _max_script(state)
        script = req.read_script(cap)
        if script is None:
            ids.release("job", spec["id"])
            return refuse(state, req, "the job script is missing, not a plain file of the "
                                      f"submitter's or larger than {cap} bytes")
    try:
        _store(state, spec, script, now)
    except _Unstorable as exc:
        return _turn_away(state, spec, f"the job could not be stored: {exc}")
    state.taken_ids.append(spec["id"])          # its claim goes once it is on disk (_commit)
    job = Job(spec)
    if spec.get("user_hold"):
        job.hold = "u"
    state.add(job)
    state.log(f"I|job {spec['id']} ({spec['name']}) submitted by {spec['owner']}")
    condorjob.submitted(state, job, spec["submit_time"])      # (000 dated as its QDate)
    admitjob.accept(state, dispatcher, job, now)
    if verified is not None:            # (the name and tasks qsub says, as the server JSV left them)
        import json
        return 0, json.dumps(verified), ""


def _not_allowed(state, spec):
    """Why Grid Engine would refuse a job whose description is sound ("" when it would
    not), checked in its order: a Grid Engine job naming queues, PEs, checkpointing
    environments or resources the cell does not have (``admitjob.names_refusal``), a
    wildcard PE with a slot range whose matching PEs disagree on the job's urgency
    slots, a positive priority from a user who is no
    operator or manager, a request qsub would refuse (``admitjob.request_refusal``),
    then a -hold_jid_ad that names jobs of another task range (qsub
    checks them before it queues a job; qalter refuses the same)."""
    from gridtools.sched import urgency
    if not spec.get("condor_ad"):
        why = admitjob.names_refusal(state, spec, new_job=True)
        if why:
            return why
    if spec.get("pe") and urgency.ambiguous(spec["pe"], state.config.objects["pe"]):
        return urgency.AMBIGUOUS.format("job")
    tasks = [state.jobs[p].spec.get("tasks") for p in spec["ad_predecessors"]]
    return (admission.priority_refusal(spec.get("priority", 0), auth.is_operator(state, spec["owner"]))
            or admitjob.request_refusal(state, spec.get("resources"),
                                        condorjob.OWN_REQUESTS if spec.get("condor_ad") else (),
                                        whole=not spec.get("condor_ad"))
            or predecessors.ad_refusal(spec.get("hold_jid_ad"), spec.get("tasks"), tasks) or "")


#: seconds the count of the procs in the queue is kept (counted again after; the
#: submissions taken in meanwhile are added to it)
COUNTS_KEPT = 1.0
_COUNTS = {}


def job_limits(state, spec):
    """(MAX_JOBS_SUBMITTED, MAX_JOBS_PER_OWNER) that hold for a job described by ``spec``,
    or None when neither does. Jobs of both dialects count, as condor_q shows them all (a
    Grid Engine job's tasks are its procs); a Grid Engine job is held to a limit the
    configuration sets, not to HTCondor's defaults (its own limits are max_u_jobs,
    max_jobs and max_aj_tasks)."""
    conf = state.condor.conf if state.condor is not None else None
    if conf is None:
        return None
    from gridtools.errors import ConfigError
    from gridtools.formats.condor.jobad import INT_MAX, MAX_JOBS_PER_OWNER, MAX_JOBS_SUBMITTED
    from gridtools.formats.condor_config import integer
    condor = bool(spec.get("condor_ad"))

    def limit(name, default):
        """The knob's limit (none, INT_MAX, for a Grid Engine job unless it is set)."""
        if not condor and (conf.main is None or name not in conf.main):
            return INT_MAX
        try:
            return integer(conf, name, default)
        except ConfigError:
            return default if condor else INT_MAX
    most, per_owner = limit("MAX_JOBS_SUBMITTED", MAX_JOBS_SUBMITTED), limit("MAX_JOBS_PER_OWNER", MAX_JOBS_PER_OWNER)
    if not condor and most == per_owner == INT_MAX:
        return None
    return most, per_owner


def _over_job_limits(state, spec):
    """Why HTCondor's schedd limits refuse a new job ("" when they do not):
    MAX_JOBS_SUBMITTED, the procs in the queue with the new ones, and
    MAX_JOBS_PER_OWNER, its owner's (``job_limits``). A cluster materialized late counts
    the procs it makes first; the later ones are held to the limits as they are made
    (``factory.advance``)."""
    found = job_limits(state, spec)
    if found is None:
        return ""
    from gridtools.model.job import task_numbers
    most, per_owner = found
    new = len(task_numbers(spec))
    if spec.get("materialize"):
        new = min(new, int(spec["materialize"]))
    total, owners = _queue_counts(state)
    owner = spec["owner"]
    if total + new > most:
        return "Number of submitted jobs would exceed MAX_JOBS_SUBMITTED"
    if owners.get(owner, 0) + new > per_owner:
        return "Number of submitted jobs would exceed MAX_JOBS_PER_OWNER"
    counted_in(owner, new)
    return ""


def queue_room(state, spec, fresh=False):
    """How many more procs of ``spec``'s owner MAX_JOBS_SUBMITTED and MAX_JOBS_PER_OWNER
    let into the queue now (None: no limit holds); counted anew when ``fresh``."""
    found = job_limits(state, spec)
    if found is None:
        return None
    total, owners = _queue_counts(state, fresh)
    return max(0, min(found[0] - total, found[1] - owners.get(spec["owner"], 0)))


def counted_in(owner, new):
    """``new`` procs of ``owner`` came into the queue: the kept counts grow with them."""
    if "total" in _COUNTS:
        _COUNTS["total"] += new
        _COUNTS["owners"][owner] = _COUNTS["owners"].get(owner, 0) + new


_SCHEDD = {}


def schedd_ad(state):
    """The schedd's ad, as the daemon last published it (``cli.condor.submitters``: its
    job counts and schedd cron attributes, as condor_status -schedd shows them), read
    at most every COUNTS_KEPT seconds: the MY of the submit requirements and of the
    schedd cron jobs' conditions."""
    now = time.monotonic()
    if _SCHEDD.get("state") is not state or now - _SCHEDD["at"] >= COUNTS_KEPT:
        from gridtools.cli.condor.submitters import current_schedd_ad
        _SCHEDD.update(state=state, at=now, ad=current_schedd_ad(time.time()))
    return _SCHEDD["ad"]


def _queue_counts(state, fresh=False):
    """(the procs in the queue, owner -> theirs): counted at most every COUNTS_KEPT
    seconds (now, when ``fresh``)."""
    now = time.monotonic()
    if not fresh and _COUNTS.get("state") is state and now - _COUNTS["at"] < COUNTS_KEPT:
        return _COUNTS["total"], _COUNTS["owners"]
    from gridtools.model.job import TaskState
    total, owners = 0, {}
    for jid in state.live_ids():
        job = state.jobs[jid]
        done = sum(1 for task in job.tasks.values() if task.state is TaskState.FINISHED)
        count = len(job.tasks) - done if job.deleted else max(len(job.made()) - done, 0)
        owner = job.spec["owner"]
        owners[owner] = owners.get(owner, 0) + count
        total += count
    _COUNTS.update(state=state, at=now, total=total, owners=owners)
    return total, owners


def job_transforms(state):
    """The cell's job transforms (JOB_TRANSFORM_NAMES: ``formats.condor.transforms``),
    read once for each reading of its condor_config; what was left out goes to the
    messages then."""
    conf = state.condor.conf if state.condor is not None else None
    names = conf.get("JOB_TRANSFORM_NAMES") if conf is not None else None
    if not names or not names.strip() or conf.main is None:
        return []
    from gridtools.formats.condor import transforms
    user_maps(state, conf)
    return _read_once(state, conf, ("job transforms", names), lambda: transforms.load(names, conf.main.raw))


def user_maps(state, conf):
    """Install the schedd's ClassAd user maps of the cell's condor_config, which
    userMap() reads (``formats.condor.usermaps``), read once for each reading of it."""
    from gridtools.formats.condor import usermaps
    usermaps.install(_read_once(state, conf, ("user maps",), lambda: usermaps.load(conf.get)))


def _read_once(state, conf, key, load):
    """What ``load()`` reads ((found, problems)) of the configuration ``conf``, once for
    each reading of it (``key``); its problems go to the messages then."""
    def read():
        found, problems = load()
        for line in problems:
            state.log(f"W|{line}")
        return found
    return conf.derived(key, read)


def _submit_refusal(state, spec):
    """Why the cell's submit requirements refuse a job ("" when none does):
    SUBMIT_REQUIREMENT_NAMES of its condor_config (``formats.condor.submitreqs``),
    checked against each proc's ad as HTCondor's schedd checks them (the one ad of a
    cluster whose procs share theirs, as a Grid Engine job's tasks do), whatever the
    submitter's condor_submit found. They are rules every job of the queue meets, a
    Grid Engine job too (its ad is the one condor_q shows)."""
    conf = state.condor.conf if state.condor is not None else None
    names = conf.get("SUBMIT_REQUIREMENT_NAMES") if conf is not None else None
    if not names or not names.strip():
        return ""
    from gridtools.formats.condor import submitreqs
    found = _read_once(state, conf, ("submit requirements", names), lambda: submitreqs.rules(conf.get, names))
    if not found:
        return ""
    user_maps(state, conf)
    schedd = schedd_ad(state)
    job = Job(spec)
    numbers = condorjob.spec_numbers(spec)
    for number in numbers if isinstance(spec.get("condor_ad"), list) else numbers[:1]:
        refusal, _warnings = submitreqs.check(found, schedd, condorjob.proc_ad(job, number))
        if refusal is not None:
            return refusal.strip()
    return ""


def _turn_away(state, spec, why):
    """Refuse a sound job that Grid Engine would not take: nothing is queued and its id
    is free again. The answer is qsub's words (a client that asked for one sees them)."""
    ids.release("job", spec["id"])
    state.log(f"W|job {spec['id']} of {spec['owner']} refused: {why}")
    return 1, "", f"Unable to run job: {why}\nExiting.\n"


#: seconds a new job that does not fit in the spool may hold up the requests after it;
#: then it is refused (a user's job too large for the disk left kept everybody's waiting)
STORE_PATIENCE = 60.0
#: since when each job waits to be stored (id -> time)
_WAITING_STORE = {}


class _Unstorable(Exception):
    """A new job that did not fit in the spool for STORE_PATIENCE seconds."""


def _store(state, spec, script, now=None):
    """Write the new job into the store; when it does not fit, take back what was
    written and defer the request (it is taken in again later), for STORE_PATIENCE
    seconds at most (``_Unstorable`` then: it is refused)."""
    key = (faults.STORE, spec["id"])
    now = now if now is not None else time.time()
    try:
        jobstore.create(spec, script)
    except SpoolError as exc:
        shutil.rmtree(jobstore.job_dir(spec["id"]), ignore_errors=True)
        since = _WAITING_STORE.setdefault(spec["id"], now)
        if now - since >= STORE_PATIENCE:
            _WAITING_STORE.pop(spec["id"], None)
            faults.clear(state, key, f"job {spec['id']} refused: it could not be stored for "
                                     f"{int(STORE_PATIENCE)} seconds")
            raise _Unstorable(str(exc)) from None
        faults.note(state, key, faults.STORE, f"job {spec['id']} waits to be stored: {exc}", job=spec["id"])
        raise Deferred() from None
    _WAITING_STORE.pop(spec["id"], None)
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
