"""qalter requests: changing the description and holds of jobs in the system.

A request of kind ``alter`` names target jobs (``{"id", "tasks"}``) and
carries a change set (see ``model.alteration``), context operations and hold
letters to add and remove. For each target the handler checks the requester
(owner, operator or manager), then every change; a job gets either all of
its changes or none. An altered description is written back to the spool
with its ``version`` raised by one (the descriptions one request changed are flushed to
disk together, before it is answered), and the next pass schedules with it.
Running tasks keep what they started with: a change reaches a task that
starts (or restarts) later. Answers use Grid Engine's messages; all of them,
refusals included, go to stdout as qalter prints them.
"""

from gridtools.daemon import apply, auth, intake, view
from gridtools.daemon.state import user_name
from gridtools.formats import jobcheck
from gridtools.formats.sge import admission
from gridtools.model import shared
from gridtools.model import alteration, predecessors
from gridtools.sched import urgency
from gridtools.spool import jobs as jobstore


class Refused(Exception):
    """A change the job or the requester does not allow; the message is the line to print."""


# ---------------------------------------------------------------- messages

#: field -> what "modified <what> of job N" calls it, in the order the changes are reported
MODIFIED = (
    ("deadline", "deadline time"), ("start_at", "start time"), ("account", "account"),
    ("cwd", "working directory"), ("ckpt", "checkpointing environment"),
    ("ckpt_when", "checkpoint occasion"), ("stderr", "stderr path list"),
    ("stdin", "stdin path list"), ("reserve", "reservation behaviour"),
    ("join", "output merge behaviour"), ("resources.hard", "hard resource list"),
    ("resources.soft", "soft resource list"), ("mail_options", "mail options"),
    ("mail_list", "mail list"), ("name", "job name"), ("hold_jid", None), ("hold_jid_ad", None),
    ("notify", "notify behaviour"), ("stdout", "stdout path list"), ("project", "project"),
    ("pe", "parallel environment"), ("pe", "slot range"), ("queues.hard", "hard queue list"),
    ("queues.soft", "soft queue list"), ("masterq", "master hard queue list"),
    ("rerun", "restart behaviour"), ("shell", "shell list"), ("env", "environment"),
    ("args", "script arguments"), ("context", "context"), ("tc", "task concurrency"),
    ("binding", "binding"),
)

#: field -> what "<user>@<host> sets <what> of job N to V" calls it (reported first)
SETS = (("override_tickets", "override tickets"), ("priority", "scheduling priority"),
        ("jobshare", "job share"), ("ar", "job advance reservation"))

HOLD_TITLES = {"s": ("manager", "manager hold"), "o": ("operator", "operator hold")}


def _touched(changes, context_ops):
    """The dotted names of what a change set touches (``resources.hard`` ...)."""
    names = set()
    for field, value in changes.items():
        if field in alteration.PARTS:
            names.update(f"{field}.{part}" for part in value)
        elif field == "export_all" or field == "submit_env":
            names.add("env")
        else:
            names.add(field)
    if context_ops:
        names.add("context")
    return names


def _report(job_id, who, changes, touched, deps):
    lines = []
    for field, what in SETS:
        if field in changes:
            value = changes[field] if changes[field] is not None else 0
            lines.append(f"{who} sets {what} of job {job_id} to {value}")
    for field, what in MODIFIED:
        if field not in touched:
            continue
        if what is None:
            blocking, exited = deps[field]
            kind = "hold list" if field == "hold_jid" else "hold array list"
            lines.append(f"modified job id {kind} of job {job_id}\n   blocking jobs: {_ids(blocking)}\n"
                         f"   exited jobs:   {_ids(exited)}")
        else:
            lines.append(f"modified {what} of job {job_id}")
    return lines


def _ids(items):
    return ",".join(str(i) for i in items) if items else "NONE"


# ---------------------------------------------------------------- checks

def _check_rights(state, user, job, changes):
    spec = job.spec
    if "override_tickets" in changes and not auth.is_operator(state, user):
        raise Refused(f'denied: "{user}" must be operator to change amount of override tickets')
    if changes.get("priority", spec.get("priority", 0)) > spec.get("priority", 0) \
            and not auth.is_operator(state, user):
        raise Refused(f'denied: "{user}" must be operator to increase job priority')
    if job.running():
        for field in ("project", "ar"):
            if field in changes and changes[field] != spec.get(field):
                raise Refused(f"job {job.id} can't modify running jobs")
    if changes.get("deadline") and not _deadline_user(state, user):
        raise Refused(f'denied: the user "{user}" is no deadline initiation user')
    if "project" in changes and changes["project"] != spec.get("project"):
        _check_project(state, job, changes["project"])
    ar_id = changes.get("ar", spec.get("ar"))
    if ar_id and ((changes.get("ar") and changes["ar"] != spec.get("ar")) or "resources" in changes):
        _check_reservation(state, job, ar_id, changes)


def _check_reservation(state, job, ar_id, changes):
    """qsub's rules for a job into advance reservation ``ar_id`` (it is there, the job
    fits its window), as Grid Engine checks a changed -ar, for the job as the change
    leaves it: a new -l h_rt must fit the window as qsub's did. (Its users are not
    checked: the scheduler keeps the job of an owner left out waiting, and says why.)"""
    import time
    from gridtools.daemon import arreq
    changed = alteration.apply(job.spec, {k: v for k, v in changes.items() if k in ("resources", "ar")})
    why = arreq.job_problem(state, dict(changed, ar=ar_id), time.time())
    if why:
        raise Refused(why)


def _deadline_user(state, user):
    """True when ``user`` (or their primary group) is in the deadlineusers userset."""
    import pwd
    from gridtools.daemon import admitjob
    try:
        group = intake._group_name(pwd.getpwnam(user).pw_gid)
    except KeyError:
        group = ""
    return admitjob.view(state).member(admission.DEADLINE_USERS, user, group)


def _check_project(state, job, project):
    """qsub's project rules for the job's owner (the access lists of the project, the
    cell's projects and xprojects, enforce_project), as Grid Engine checks a changed
    project: a project its owner may not submit to is no more theirs by qalter."""
    from gridtools.daemon import admitjob
    spec = dict(job.spec, project=project or None)
    why = admission._project_problem(spec, admitjob.view(state), spec["owner"], spec.get("group", ""))
    if why:
        raise Refused("denied: " + why.removeprefix("job rejected: "))


def _consumables(state):
    """Consumable name (and shortcut) -> function giving a request's amount."""
    from gridtools.sched.inputs import value_or_none
    return {name: (lambda text, _cx=cx: value_or_none(_cx, text))
            for name, cx in view.complexes(state.config).items() if cx.counted}


def _check_resources(state, job, changes):
    parts = changes.get("resources") or {}
    if not parts:
        return
    from gridtools.daemon import admitjob, condorjob
    condor = bool(job.spec.get("condor_ad"))
    why = admitjob.request_refusal(state, parts, condorjob.OWN_REQUESTS if condor else (), whole=not condor)
    if why:
        raise Refused(f"denied: {why}")
    consumables = _consumables(state)
    for name in parts.get("soft") or {}:
        if name in consumables:
            raise Refused(f'denied: soft requests on consumables like "{name}" are not supported')
    if "hard" not in parts or not job.running():
        return
    old = (job.spec.get("resources") or {}).get("hard") or {}
    texts = {"missing": 'denied: former resource request on consumable "{}" of running job lacks '
                        "in new resource request",
             "added": 'denied: resource request on consumable "{}" of running job was not contained '
                      "former resource request",
             "changed": "denied: can't change consumable resource request \"{}\" of running job"}
    try:
        conflicts = alteration.consumable_conflicts(old, parts["hard"], consumables)
    except Exception:  # noqa: BLE001 - an unreadable amount counts as a change
        conflicts = [("changed", next(iter(parts["hard"]), ""))]
    if conflicts:
        kind, name = conflicts[0]
        raise Refused(texts[kind].format(name))


def _slots_as_pe(state, job, changes):
    """A new hard ``-l slots=N`` (N > 1) for a job without a PE, and no ``-pe`` beside
    it: N slots of the cell's single-host PE, as qsub makes of it (see
    ``cli.sge.submit.slots_as_pe``); refused in Grid Engine's words when the cell has
    none. A job with a PE keeps its count."""
    from gridtools.formats.sge import pe as pe_format
    resources = changes.get("resources")
    hard = resources.get("hard") if isinstance(resources, dict) else None
    text = hard.get("slots") if isinstance(hard, dict) else None   # (other shapes: refused later)
    if text is None or "pe" in changes or job.spec.get("pe"):
        return
    try:
        count = int(str(text))
    except ValueError:
        return                                  # (the value checks refuse it)
    if count <= 1:
        return
    objects = state.config.objects
    rules = {name: obj.get("allocation_rule", "$pe_slots") for name, obj in objects["pe"].items()}
    listed = {name for obj in objects["queue"].values() for name in _names_in(obj.get("pe_list"))}
    name = pe_format.single_host_pe(rules, listed)
    if name is None:
        raise Refused(f"denied: {pe_format.NO_DIRECT_SLOTS}")
    changes["pe"] = [name, count, count]


def _names_in(value):
    """The names a queue's list attribute holds, its per-host overrides too."""
    lists = [value.default, *value.overrides.values()] if hasattr(value, "overrides") else [value]
    return {name for names in lists for name in (names or ())}


def _check_names(state, changes):
    """qalter's own check of the queues, PE, checkpointing environment and resources a
    change names (``admitjob.names_refusal``; the values have passed ``_check_whole``),
    made again against the daemon's configuration, with the words Grid Engine's qmaster
    answers qalter."""
    from gridtools.daemon import admitjob
    probe = {field: changes[field] for field in ("stdout", "stderr", "stdin", "shell", "masterq", "pe",
                                                 "ckpt", "queues", "resources") if changes.get(field)}
    why = admitjob.names_refusal(state, probe) if probe else None
    if why:
        raise Refused(jobcheck.alter_words(why))


def _check_name(changes):
    name = changes.get("name")
    if name is not None and (not name.strip() or "/" in name):
        raise Refused(f'denied: "{jobcheck.shown(name)}" is not a valid job name')


def _check_whole(work, job, changes, ops):
    """The job description as it would be after the changes must pass the submit checks;
    returns that description (None when nothing changes), to be stored as it is."""
    if not changes and not ops:
        return None
    changed = alteration.apply(job.spec, changes, ops)
    try:
        jobcheck.check(changed, types=work.types())
    except jobcheck.Invalid as exc:
        raise Refused(f"denied: {exc}") from None
    return changed


def _resolve_dependencies(state, job, changes):
    """{field: (blocking ids, exited ids)} for -hold_jid / -hold_jid_ad changes; checks them."""
    found = {}
    for field in ("hold_jid", "hold_jid_ad"):
        if field not in changes:
            continue
        items = [str(i) for i in changes[field]]
        if str(job.id) in items:
            raise Refused(f'denied: job "{job.id}" may not be it\'s own jobnet predecessor')
        blocking = intake.resolve_predecessors(state, items, job.spec["owner"], job.id)
        live = state.live_ids()
        exited = [int(i) for i in items if i.isdigit() and int(i) not in live]
        if field == "hold_jid_ad":
            _check_array_dependency(state, job, items, blocking)
        found[field] = (blocking, exited)
    if found:
        _check_cycles(state, job, found)
        kept = {"hold_jid": "predecessors", "hold_jid_ad": "ad_predecessors"}
        more = sum(len(found[f][0]) if f in found else len(job.spec.get(kept[f]) or ()) for f in kept)
        why = intake.held_on_refusal(state, job.spec["owner"], more, leaving=job)
        if why:
            raise Refused("denied: " + why.removeprefix("job rejected: "))
    return found


def _check_array_dependency(state, job, items, blocking):
    why = predecessors.ad_refusal(items, job.spec.get("tasks"),
                                  [state.jobs[jid].spec.get("tasks") for jid in blocking])
    if why:
        raise Refused(why)


def _check_cycles(state, job, found):
    def lookup(jid):
        other = state.jobs.get(jid)
        if other is None:
            return ()
        return tuple(other.spec.get("predecessors") or ()) + tuple(other.spec.get("ad_predecessors") or ())
    start = [j for blocking, _ in found.values() for j in blocking]
    via = alteration.dependency_cycle(job.id, start, lookup)
    if via is not None:
        raise Refused(f"job {job.id} dependency change would generate a dependency cycle with job {via}")


# ---------------------------------------------------------------- holds

def _hold_plan(job, target, add, remove):
    """{task number or None (the whole job): (letters before, letters after)} for what changes."""
    numbers = job.unfinished_numbers()                 # (running tasks hold too)
    if target.get("tasks"):             # (its cost grows with the job's tasks, not the ranges')
        from gridtools.model.taskset import select
        numbers = select(numbers, target["tasks"])
    elif not numbers:
        numbers = [None]
    plan = {}
    for number in numbers:
        before = set(job.holds_of(number) if number is not None else job.hold)
        after = (before | set(add)) - set(remove)
        if before != after:
            plan[number] = (before, after)
    return plan


def _check_hold(state, user, plan):
    for letter, (title, what) in HOLD_TITLES.items():
        for before, after in plan.values():
            if letter in before ^ after:
                allowed = auth.is_manager if letter == "s" else auth.is_operator
                if not allowed(state, user):
                    verb = "set" if letter in after else "remove"
                    raise Refused(f'denied: "{user}" must be {title} to {verb} {what}')


def _apply_hold(state, job, target, add, remove):
    if target.get("tasks"):
        for number in _hold_plan(job, target, add, remove):
            apply.hold(state, job, number, add, True)
            apply.hold(state, job, number, remove, False)
        return
    apply.hold(state, job, None, add, True)
    apply.hold(state, job, None, remove, False)


def _hold_lines(job, plan):
    if not plan:
        return []
    if not job.is_array:
        return [f"modified hold of job {job.id}"]
    return [f"modified hold of job-array task {job.id}.{n}" for n in sorted(n for n in plan if n)]


# ---------------------------------------------------------------- the handler

class _Work:
    """What one alter request works out once for all of its target jobs (the complex
    types the changed descriptions are checked with), and the ids of the descriptions it
    wrote, flushed to disk together before it is answered (``flush``)."""

    def __init__(self, state):
        self.state = state
        self.written = []
        self._types = None

    def types(self):
        if self._types is None:
            self._types = intake._complex_types(self.state)
        return self._types

    def flush(self):
        """The descriptions written, on disk (one flush of the spool's file system for
        many: ``jobstore.sync_specs``)."""
        written, self.written = self.written, []
        jobstore.sync_specs(written)


def _alter_job(state, user, body, target, work):
    """The answer lines for one target job; raises Refused when nothing may change.
    ``work``: the request's ``_Work``."""
    job = state.jobs.get(target["id"])
    if job is None or job.is_finished():
        raise Refused(f'denied: job "{target["id"]}" does not exist')
    if not auth.may_modify_job(state, user, job):
        raise Refused(f'denied: "{user}" must be at least owner of job {job.id} to change job attributes')
    changes, ops = dict(body.get("changes") or {}), body.get("context_ops") or []
    add, remove = body.get("hold_add", ""), body.get("hold_remove", "")
    _slots_as_pe(state, job, changes)
    _check_rights(state, user, job, changes)
    _check_name(changes)
    changed = _check_whole(work, job, changes, ops)
    _check_names(state, changes)
    if changes.get("pe") and urgency.ambiguous(changes["pe"], state.config.objects["pe"]):
        raise Refused(urgency.AMBIGUOUS.format("job"))
    _check_resources(state, job, changes)
    _check_condor_requests(state, user, job, changes, ops)
    deps = _resolve_dependencies(state, job, changes)
    plan = _hold_plan(job, target, add, remove) if add or remove else {}
    _check_hold(state, user, plan)
    lines = _hold_lines(job, plan)
    if plan:
        _apply_hold(state, job, target, add, remove)
    if changes or ops:
        _store(state, job, changes, deps, work, changed)
    elif plan:
        _store(state, job, {}, {}, work, alteration.apply(job.spec, {}))
    return lines + _report(job.id, f"{user}@{body.get('host', '')}", changes, _touched(changes, ops), deps)


def _changes_condor_requests(job, changes):
    return bool(job.spec.get("condor_ad")) and ("hard" in (changes.get("resources") or {}) or "pe" in changes)


def _check_condor_requests(state, user, job, changes, ops):
    """Refused when the change would rewrite an attribute of an HTCondor job's ads that
    condor_qedit may not change for ``user`` (the immutable and protected attributes,
    PROTECTED_JOB_ATTRS unless a queue super user): qalter is no way around them."""
    if not _changes_condor_requests(job, changes):
        return
    from gridtools.daemon import condorreq
    amounts = _condor_amounts(state, alteration.apply(job.spec, changes, ops), job.spec)
    get = state.condor.conf.get if state.condor is not None else (lambda _name: None)
    protected = frozenset() if condorreq.queue_super_user(get, user) else \
        condorreq.configured(get, condorreq.PROTECTED_KNOBS)
    immutable = condorreq.configured(get, condorreq.IMMUTABLE_KNOBS)
    for attr in amounts:
        refusal = condorreq.edit_refusal(attr, immutable, protected)
        if refusal is not None:
            raise Refused(f"denied: job {job.id}: {refusal.strip()}")


def _store(state, job, changes, deps, work, spec):
    """Store ``spec``, the job's description with the ``changes`` (and context
    operations) applied, as its new description; written to the spool unflushed (the
    request flushes all it wrote at once: ``_Work.flush``)."""
    old_name = job.spec["name"]
    if _changes_condor_requests(job, changes):
        _condor_requests(state, spec, job.spec)
    for field, target in (("hold_jid", "predecessors"), ("hold_jid_ad", "ad_predecessors")):
        if field in deps:
            spec[target] = deps[field][0]
    spec["version"] = int(spec.get("version") or 0) + 1
    jobstore.write_spec(spec, fsync=False)
    work.written.append(spec["id"])
    job.spec = shared.description(spec)
    if spec["name"] != old_name:
        state.names.get(old_name, set()).discard(job.id)
        state.names.setdefault(spec["name"], set()).add(job.id)
    state.touch(job)
    state.need_schedule = True


def _condor_requests(state, spec, was):
    """An HTCondor job's ads after qalter changed its hard resource list or its PE (``was``:
    the description before): RequestMemory (its memory request in MiB: ``_memory_request``),
    RequestGPUs and the ``Request<name>`` of its machine
    resources say what the new list asks for (0 for one it no longer names), and
    RequestCpus (MaxHosts of a parallel universe job) the new PE's slots, as
    ``condor_qedit`` of them changes the job's requests. An attribute whose request the
    change leaves as it was keeps what each proc's ad says. The requests held once are
    worked out again (see ``formats.condor.spec.per_job_requests``)."""
    from gridtools.daemon import condorjob
    from gridtools.daemon.devices import countable_complexes
    from gridtools.formats.condor import spec as condor_spec
    amounts = _condor_amounts(state, spec, was)
    numbers = condorjob.spec_numbers(spec)
    for attr, amount in amounts.items():
        try:
            number = float(amount)
            text = str(int(number)) if number == int(number) else repr(number)
        except (TypeError, ValueError, OverflowError):
            continue                            # (an amount with a unit, or none: no ClassAd number)
        spec["condor_ad"] = condorjob.edited_texts(spec, numbers, attr, text)
    spec.pop("per_job_requests", None)
    held_once = condor_spec.per_job_requests(spec.get("pe"), spec["resources"]["hard"],
                                             countable_complexes(state.config))
    if held_once:
        spec["per_job_requests"] = held_once


def _condor_amounts(state, spec, was):
    """attribute -> the amount a change of the hard resource list or the PE (``spec`` after
    it, ``was`` before) gives an HTCondor job's request attributes (see
    ``_condor_requests``)."""
    from gridtools import ads
    from gridtools.daemon.devices import countable_complexes
    from gridtools.formats.condor import spec as condor_spec
    counted = countable_complexes(state.config)
    hard, old_hard = spec["resources"]["hard"], (was.get("resources") or {}).get("hard") or {}
    first = ads.job_ad(spec, None, 1)
    amounts = {}
    complexes = {"RequestGPUs": condor_spec.GPU_REQUEST}
    for name in condor_spec.custom_requests(first):
        if name.lower() in counted:
            complexes["Request" + name] = counted[name.lower()]
    for attr, complex_name in complexes.items():
        if hard.get(complex_name) != old_hard.get(complex_name) and (attr in first or complex_name in hard):
            amounts[attr] = hard.get(complex_name, 0)
    memory, old_memory = _memory_request(hard), _memory_request(old_hard)
    if memory != old_memory:            # (RequestMemory is what condor_submit made mem_free of)
        amounts["RequestMemory"] = memory
    pe = spec.get("pe")
    if pe and list(pe) != list(was.get("pe") or ()) and pe[0] in (condor_spec.SMP_PE, condor_spec.PARALLEL_PE):
        for attr in (("MaxHosts", "MinHosts") if pe[0] == condor_spec.PARALLEL_PE else ("RequestCpus",)):
            amounts[attr] = pe[1]
    return amounts


def _memory_request(hard):
    """The MiB of the memory request of an HTCondor job's hard resource list: the first
    of ``jobads.MEMORY_REQUESTS`` it names (mem_free, which condor_submit makes of
    request_memory, or h_vmem ... qalter gave it), 0 for none."""
    from gridtools import jobads
    name = next((n for n in jobads.MEMORY_REQUESTS if n in hard), None)
    return jobads._megabytes(hard[name]) if name else 0


def alter(state, dispatcher, req, now):
    user = user_name(req.uid)
    body = req.body
    bad = alteration.invalid(body.get("changes") or {}, body.get("context_ops") or [])
    for key in ("hold_add", "hold_remove"):
        if not isinstance(body.get(key, ""), str) or set(body.get(key, "")) - set("uos"):
            bad.append(key)
    if bad or not isinstance(body.get("targets") or [], list):
        return 1, "", f"error: invalid change request ({', '.join(bad) or 'targets'})\n"
    from gridtools.daemon import serverjsv
    touched = _touched(body.get("changes") or {}, body.get("context_ops") or [])
    if body.get("hold_add") or body.get("hold_remove"):
        touched.add("user_hold")
    refused = serverjsv.alteration_refusal(state, touched)
    if refused:
        state.log(f"W|qalter of {user} refused: {refused}")
        return 1, refused + "\n", ""
    out, code = [], 0
    work = _Work(state)
    try:
        for target in body.get("targets") or []:
            try:
                out.extend(_alter_job(state, user, body, target, work))
            except Refused as exc:
                out.append(str(exc))
                code = 1
            else:
                state.log(f"I|job {target['id']} altered by {user}")
    finally:
        work.flush()                    # (before the answer says they changed)
    return code, "".join(line + "\n" for line in out), ""
