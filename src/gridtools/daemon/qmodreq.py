"""qmod requests: suspending, enabling, clearing and rescheduling jobs and queue instances.

A client sends one request of kind ``qmod`` with ``op`` (suspend,
unsuspend, disable, enable, clear, reschedule), ``scope`` (``job``,
``queue`` or ``any``: decide per word), the ``items`` named on the command
line (``{"word": text, "tasks": ranges or None}``) and ``force``. The
answer carries Grid Engine's messages, one line each, for stdout.

Rights: managers and operators may do everything; the owners of a queue
instance (its ``owner_list``) may do everything to it (suspend, unsuspend,
disable, enable, clear its error state, reschedule its jobs); the owner of
a job may suspend, unsuspend, clear and reschedule it. ``-f`` needs no more
rights than the change it forces, as in Grid Engine's master. As there, an
answer that cleared an error state, or lifted an administrator's suspension
while a suspend threshold still holds the job, makes qmod exit 1. Queue suspension reaches the tasks on the
next pass (see ``qcontrol``); job suspension is signalled at once. A job
whose checkpointing environment's ``when`` holds ``x`` is migrated instead
of being stopped, whether its queue or the job itself is suspended.
"""

import fnmatch

from gridtools.daemon import apply, auth, qcontrol, suspension, view
from gridtools.daemon.jobreq import select_tasks as _select_tasks
from gridtools.daemon.state import user_name
from gridtools.formats.sge.names import match_queue_spec
from gridtools.model.job import TaskState
from gridtools.spool.rows import ad_done_of, ad_waiting

#: queue operations: op -> (state letter, set it?, word of the messages)
QUEUE_OPS = {"disable": ("d", True, "disabled"), "enable": ("d", False, "enabled"),
             "suspend": ("s", True, "suspended"), "unsuspend": ("s", False, "unsuspended"),
             "clear": ("E", False, "no error")}


class Ctx:
    """One qmod request being answered."""

    def __init__(self, state, dispatcher, req, now):
        self.state, self.dispatcher, self.now = state, dispatcher, now
        body = req.body
        self.op = str(body.get("op", ""))
        self.scope = str(body.get("scope", "any"))
        self.force = bool(body.get("force"))
        self.user = user_name(req.uid)
        host = str(body.get("host") or "unknown")
        self.who = f"{self.user}@{host if host.replace('.', '').replace('-', '').isalnum() else 'unknown'}"
        self.operator = auth.is_operator(state, self.user)
        self.lines = []
        self.failed = False

    def say(self, line):
        self.lines.append(line)

    def refuse(self, line):
        self.lines.append(line)
        self.failed = True


def qmod(state, dispatcher, req, now):
    ctx = Ctx(state, dispatcher, req, now)
    scope = req.body.get("scope", "any")
    for item in req.body.get("items") or []:
        _item(ctx, scope, str(item.get("word", "")), item.get("tasks"))
    state.need_publish = True
    text = "".join(line + "\n" for line in ctx.lines)
    return (1 if ctx.failed else 0), text, ""


# ---------------------------------------------------------------- naming

def _item(ctx, scope, word, tasks):
    """Apply the request to what one word names: jobs, queue instances or both kinds."""
    state = ctx.state
    queues = _instances(state, word) if scope == "queue" or (scope == "any" and not word.isdigit()) else []
    jobs = _jobs_named(state, word) if scope != "queue" and not queues else []
    for name, queue, host in queues:
        _queue_op(ctx, name, queue, host)
    for job in jobs:
        _job_op(ctx, job, tasks)
    if queues or jobs:
        return
    _invalid(ctx, word)


def _invalid(ctx, word):
    """Grid Engine's answer for a name that found nothing: "invalid queue or job" for the
    job actions (-sj, -usj, -cj, -rj) and for -s and -us; "invalid queue" for the queue
    actions and for -c and -r, which Grid Engine's master does not count as job actions."""
    if ctx.scope == "job" or (ctx.scope == "any" and ctx.op in ("suspend", "unsuspend")):
        return ctx.refuse(f'invalid queue or job "{word}"')
    return ctx.refuse(f'invalid queue "{word}"')


def _jobs_named(state, word):
    """Jobs with a task not finished named by an id or a name pattern."""
    if word.isdigit():
        job = state.jobs.get(int(word))
        return [job] if job is not None and not job.is_finished() else []
    found = []
    for name, ids in state.names.items():
        if fnmatch.fnmatchcase(name, word):
            found.extend(state.jobs[j] for j in ids if j in state.jobs and not state.jobs[j].is_finished())
    return sorted(found, key=lambda j: j.id)


def _instances(state, spec):
    """(name, queue, host) of the queue instances a queue expression names."""
    groups = view.hostgroups(state.config)
    return [(i.name, i.queue, i.host) for i in qcontrol.instances(state)
            if match_queue_spec(spec, i.queue, i.host, groups)]


def _label(job, number):
    """("job", "7") or ("job-array task", "7.3") for messages."""
    return ("job-array task", f"{job.id}.{number}") if job.is_array else ("job", str(job.id))


# ---------------------------------------------------------------- queues

def _queue_allowed(ctx, queue, host):
    if ctx.operator:
        return True
    conf = ctx.state.config
    owners = view.qvalue(conf.objects["queue"][queue], "owner_list", host, view.hostgroups(conf))
    return ctx.user in (owners or ())


def _queue_op(ctx, name, queue, host):
    if not _queue_allowed(ctx, queue, host):
        if ctx.op == "reschedule":
            return ctx.refuse(f'{ctx.user} - you have no permission to reschedule jobs of queue instance "{name}"')
        return ctx.refuse(f'{ctx.user} - you have no permission to modify queue "{name}"')
    if ctx.op == "reschedule":
        for job, task in _tasks_in(ctx.state, name):
            _reschedule(ctx, job, task)
        return None
    letter, on, word = QUEUE_OPS[ctx.op]
    changed = qcontrol.set_letter(ctx.state, name, letter, on)
    if changed:
        ctx.say(f'{ctx.who} changed state of "{name}" ({word})')
        ctx.state.log(f"I|{ctx.who} changed state of {name} ({word})")
    elif ctx.force:
        ctx.say(f'{ctx.who} forced state change of "{name}" ({word})')
        _resignal(ctx, name)
    else:
        ctx.say(f'Queue instance "{name}" is already in the specified state: {word}')
    return None


def _tasks_in(state, name):
    return [(job, task) for job, task in state.running_tasks()
            if any(f"{q}@{h}" == name for q, h, _s in task.granted)]


def _resignal(ctx, name):
    """qmod -f: send every task of the instance the signal for the state it is in."""
    for job, task in _tasks_in(ctx.state, name):
        suspension.send(ctx.state, ctx.dispatcher, job, task, "suspend" if task.suspended else "resume")


# ---------------------------------------------------------------- jobs

def _job_op(ctx, job, tasks):
    if not auth.may_modify_job(ctx.state, ctx.user, job):
        return ctx.refuse(f'{ctx.user} - you have no permission to modify job "{job.id}"')
    numbers = [n for n in _select_tasks(job, tasks) if job.state_of(n) is not TaskState.FINISHED]
    action = {"suspend": _suspend, "unsuspend": _unsuspend, "reschedule": _reschedule,
              "clear": _clear_task}.get(ctx.op)
    if not numbers or action is None:   # a range without a live task of the job: nothing found
        return _invalid(ctx, str(job.id))
    # As Grid Engine: first the tasks that were started (enrolled: running, in error
    # state, or put back to pending by a reschedule or a cleared error), then the ones
    # that never started. A started task that is not running has no queue to signal:
    # suspending, resuming or rescheduling it says nothing.
    started = [n for n in numbers if _enrolled(job, n)]
    for n in started:
        if ctx.op == "clear" or job.state_of(n) is TaskState.RUNNING:
            action(ctx, job, job.task(n))
    waiting = [n for n in numbers if not _enrolled(job, n)]
    if job.is_array and not tasks:
        # the whole array: one answer for the job when none of its tasks was started
        if not started:
            ctx.say(f"Modify operation can not be applied on job {job.id} in pending/hold state")
    else:
        # the tasks that never started, those without a hold first, then by hold; one
        # that waits only for an array predecessor (-hold_jid_ad) is passed over, and
        # when that leaves nothing the job is not found, as in Grid Engine's master
        ad_done = ad_done_of(job, ctx.state.live_ids(), ctx.state.jobs.get) \
            if job.spec.get("ad_predecessors") else None
        answered = [n for n in waiting if _hold_rank(job, n) or not ad_waiting(n, ad_done)]
        if not started and not answered:
            return _invalid(ctx, str(job.id))
        for n in sorted(answered, key=lambda n: (_hold_rank(job, n), n)):
            ctx.say(f"Modify operation can not be applied on job-array task {job.id}.{n} in pending/hold state")
    ctx.state.touch(job)
    return None


def _enrolled(job, number):
    """True when the task was started once (Grid Engine's enrolled task): it runs, is in
    error state, or waits again after a run or an error."""
    task = job.tasks.get(number)
    if task is None:
        return False
    return task.state is not TaskState.PENDING or bool(task.restarted or task.start_time or task.end_time)


def _hold_rank(job, number):
    """Where a pending task comes in Grid Engine's answers: those without a hold, then
    those in user hold, then system hold, then operator hold."""
    letters = job.holds_of(number)
    for rank, letter in enumerate("uso", 1):
        if letter in letters:
            return rank
    return 0


def _suspend(ctx, job, task):
    kind, ident = _label(job, task.number)
    if "s" in task.suspended and not ctx.force:
        return ctx.say(f"{ctx.user} - {kind} {ident} is already suspended")
    if qcontrol.migrates_on_suspend(ctx.state, job):
        suspension.requeue(ctx.state, ctx.dispatcher, job, task)       # checkpoint(5) "x"
    else:
        suspension.change(ctx.state, ctx.dispatcher, job, task, "s", True, force=ctx.force)
    if ctx.force:
        return ctx.say(f"{ctx.user} - forced suspension of {kind} {ident}")
    ctx.state.log(f"I|{ctx.who} suspended {kind} {ident}")
    return ctx.say(f"{ctx.user} - suspended {kind} {ident}")


def _unsuspend(ctx, job, task):
    # a suspend threshold's stop is not the administrator's to lift, -f or not
    kind, ident = _label(job, task.number)
    if "T" in task.suspended and "s" not in task.suspended:
        return ctx.say(f"{ctx.user} - {kind} {ident} is not suspended by administrator - "
                       "modify suspend threshold list of queue to remove suspend state")
    if "s" not in task.suspended:
        if not ctx.force:
            return ctx.say(f"{ctx.user} - {kind} {ident} is already unsuspended")
        suspension.change(ctx.state, ctx.dispatcher, job, task, "s", False, force=True)
        return ctx.say(f"{ctx.user} - forced enabling of {kind} {ident}")
    suspension.change(ctx.state, ctx.dispatcher, job, task, "s", False, force=ctx.force)
    ctx.state.log(f"I|{ctx.who} unsuspended {kind} {ident}")
    if "T" in task.suspended:
        return ctx.refuse(f"{ctx.who} removed administrator suspension of {kind} {ident} "
                          "(suspend threshold is still active)")
    if ctx.force:
        return ctx.say(f"{ctx.who} forced unsuspension of {kind} {ident}")
    return ctx.say(f"{ctx.user} - unsuspended {kind} {ident}")


def rerunnable(state, job, task):
    """True when a running task may be rescheduled: ``-r y``, or the queue's ``rerun``."""
    asked = job.spec.get("rerun")
    if asked is not None:
        return bool(asked)
    conf = state.config
    queue = conf.objects["queue"].get(task.queue)
    if queue is None:
        return False
    return bool(view.qvalue(queue, "rerun", task.host, view.hostgroups(conf)))


def _ckpt_refusal(state, job, ident, kind):
    """Why a job with a checkpointing environment may not be rescheduled (its ``-c`` letters,
    else the environment's ``when``, hold no ``r``), or None."""
    name = job.spec.get("ckpt")
    if not name:
        return None
    env = state.config.objects["ckpt"].get(name)
    if env is None:
        return f"{ident} requests ckpt object {name}. This ckpt object does not exist."
    asked = str(job.spec.get("ckpt_when") or "")
    when = asked if asked and not (asked[:1].isdigit() or asked[:1] == ":") else \
        ("m" if asked else str(env.get("when") or ""))
    if "r" not in when:
        return f"{ident} requests ckpt object {name}. Therefore this {kind} is not restartable."
    return None


def _reschedule(ctx, job, task):
    # a task that cannot be rescheduled is a warning, as Grid Engine answers it: qmod
    # still exits 0. The checks come in Grid Engine's order: submitted -r n, interactive,
    # checkpointing without "r", being deleted, and a queue without rerun; -f passes all
    # but the interactive one.
    kind, ident = _label(job, task.number)
    if not ctx.force and job.spec.get("rerun") is False:
        return ctx.say(f"The {kind} {ident} is not restartable")
    if job.spec.get("interactive"):
        return ctx.say(f"{ident} is a qsh, qlogin, qrsh or a qrlogin {kind}. "
                       f"These types of {kind} are not restartable")
    if not ctx.force:
        refusal = _ckpt_refusal(ctx.state, job, ident, kind)
        if refusal:
            return ctx.say(refusal)
    if task.deleting and not ctx.force:
        return ctx.say(f"The {kind} {ident} is already in deleted state. No rescheduling!")
    if not ctx.force and not rerunnable(ctx.state, job, task):
        # reschedule.c chooses the name with its test the wrong way round, so Grid
        # Engine's warning always reads "queue none"; scripts match that text
        return ctx.say(f"The {kind} {ident} is running in queue none where jobs are not rerunable.")
    if task.deleting:
        apply.end_rescheduled(ctx.state, ctx.dispatcher, job, task, ctx.now)
    else:
        suspension.requeue(ctx.state, ctx.dispatcher, job, task)
    how = "Forced" if ctx.force else "Pushed"
    ctx.state.log(f"W|{how} rescheduling of {kind} {ident} on host {task.host}")
    return ctx.say(f"{how} rescheduling of {kind} {ident} on host {task.host}")


def _clear_task(ctx, job, task):
    """qmod -cj of a started task: its error state cleared, or Grid Engine's answer that
    it has none (both exit 1, as Grid Engine's answers are errors)."""
    kind, ident = _label(job, task.number)
    if apply.clear_error(ctx.state, job, task.number):
        ctx.refuse(f"{ctx.who} cleared error state of {kind} {ident}")
        ctx.state.need_schedule = True
        return None
    if job.is_array:
        return ctx.refuse(f"Job-array task {ident} is not in error state")
    return ctx.refuse(f"Job {job.id} is not in error state")
