"""Tasks of a parallel job started from inside it (``qrsh -inherit HOST command``).

A ``pe_task`` request names a running task of a parallel job, one of the
hosts granted to it and a command. Only the job's owner may ask (root too
only in its own jobs), only when the job's parallel environment has
``control_slaves TRUE`` (a job without one has none), and no
more at once on a host than the job's slots there (one fewer on the master
host when ``job_is_first_task`` is TRUE: the job script is a task). A
request refused is answered as Grid Engine's qrsh reports it, whatever the
reason (the execution daemon of the host "didn't accept task"); the reason
goes to the messages file, in the words of Grid Engine's execd. The
command runs under its own shepherd on that host, in a folder of the
task's spool (``jobs/<id>/<n>/pe.<k>``), started by the execution daemon
that serves that host (``gridtools execd``) or, when none does, by the
dispatcher's exec server, as the job's owner, with the job's
environment (``HOSTNAME``, ``JOB_ID``, ``PE_HOSTFILE``, ...) and its
streams tied to the FIFOs qrsh relays. Its usage is the job's: with the
PE's ``accounting_summary FALSE`` each such task gets its own accounting
record (``pe_taskid`` names it), with ``TRUE`` it is added to the usage of
the job's own record. A task still running when the job's own task has
ended is ended too, and so is one whose qrsh -inherit process went away (as
an interactive job whose qrsh went away: nobody reads its output any more).
A task is stopped and continued with its job: while the job's own task is
suspended (``qmod -sj``, its queue instance suspended, a suspend threshold)
the shepherd of every task inside it, on every host, is told to suspend it
too (the queue's ``suspend_method``, else SIGSTOP), and to resume it when
the job's task is resumed; one started while its job is suspended is
stopped as soon as its shepherd runs. Each task's folder keeps where it
runs (``task.yaml``) and, once accounted, an ``accounted`` mark: a
restarted daemon finds the tasks it has still to account there (under
``accounting_summary TRUE`` the usage summed so far is kept in memory only).
"""

import os
import signal

from gridtools.daemon.state import user_name
from gridtools.exec import tasklock
from gridtools.model.job import TaskState
from gridtools.spool import acct
from gridtools.spool import jobs as jobstore
from gridtools.spool.files import makedirs

#: usage fields a slave task adds to its master's under accounting_summary TRUE
SUMMED = ("ru_utime", "ru_stime", "mem", "io", "ru_minflt", "ru_majflt", "ru_inblock", "ru_oublock",
          "ru_nvcsw", "ru_nivcsw")


class Refused(Exception):
    pass


#: beside each such task: where it runs (read back by a restarted daemon), and the mark
#: that its result was accounted
INFO_FILE = "task.yaml"
ACCOUNTED = "accounted"


def _tasks(state):
    """(job id, task, pe task id) -> {"host", "dir", "start"} of the tasks not yet accounted;
    a restarted daemon finds them again in the folders of its running tasks."""
    if getattr(state, "pe_tasks", None) is None:
        state.pe_tasks = {}
        for job, task in state.running_tasks():
            _recover(state.pe_tasks, job, task)
    return state.pe_tasks


def folders(folder):
    """(number, path) of the ``pe.<n>`` folders of a task folder."""
    return _folders(folder)


def tasks_of(state):
    """The tasks inside jobs not yet accounted (see ``_tasks``): also the nodes of an
    HTCondor parallel universe job (``daemon.parnodes``)."""
    return _tasks(state)


def _recover(found, job, task):
    from gridtools.formats import spoolyaml
    from gridtools.spool.files import read_text
    folder = jobstore.task_dir(job.id, task.number)
    for ident, tdir in _folders(folder):
        text = read_text(os.path.join(tdir, INFO_FILE))
        if text is None or os.path.exists(os.path.join(tdir, ACCOUNTED)):
            continue
        try:
            info = spoolyaml.load(text)
        except spoolyaml.SpoolFormatError:
            continue
        found[(job.id, task.number, ident)] = dict(info, dir=tdir)


def _folders(folder):
    """(number, path) of the ``pe.<n>`` folders of a task."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted((int(n[3:]), os.path.join(folder, n)) for n in names
                  if n.startswith("pe.") and n[3:].isdigit())


def _pe(state, job, task):
    return state.config.objects["pe"].get(task.pe or (job.spec.get("pe") or [""])[0]) or {}


def _flag(value):
    return str(value).strip().lower() in ("true", "1", "yes")


def _not_accepted(state, job_id, host, why):
    """The refusal of a task request as Grid Engine's qrsh reports it (the execution
    daemon of ``host`` did not accept the task, and nothing more: a caller who is not
    the job's owner learns nothing of the job), with the real reason ``why`` logged in
    the messages file as Grid Engine's execd logs it."""
    state.log(why)
    return Refused(f"error: executing task of job {job_id} failed: execution daemon on host "
                   f'"{host}" didn\'t accept task')


def _target(state, req):
    """(job, task, host) the request names, checked as Grid Engine's execution daemon
    checks a task request: the job runs on the host, the caller is its owner (compared
    strictly: root too may start tasks only in its own jobs), its parallel environment
    controls its slaves, and the host has room for another task."""
    body = req.body
    try:
        job_id = int(body["job_id"])
        number = int(body.get("task") or 1)
        host = str(body["host"])
    except (KeyError, TypeError, ValueError):
        raise Refused("error: invalid request") from None
    job = state.jobs.get(job_id)
    task = job.task(number) if job is not None and job.state_of(number) is TaskState.RUNNING else None
    named = host
    host = next((g[1] for g in task.granted if g[1].lower() == host.lower()), None) \
        if task is not None else None       # host names compare without regard to case
    if host is None:
        raise _not_accepted(state, job_id, named,
                            f"W|received task belongs to job {job_id} but this job is not here")
    requester = user_name(req.uid)
    if requester != job.spec["owner"]:
        raise _not_accepted(state, job.id, host, f'W|denied request of user "{requester}" to start a pe '
                                                 f'task in job of user "{job.spec["owner"]}"')
    pe = _pe(state, job, task)
    if not _flag(pe.get("control_slaves")):
        raise _not_accepted(state, job.id, host, f"E|received task belongs to job {job.id} but this job "
                                                 "is not suited for starting tasks")
    if _running_on(state, job, task, host) >= _task_room(pe, task, host):
        raise _not_accepted(state, job.id, host, f"E|no free queue for job {job.id} of user "
                                                 f"{requester} (localhost = {host})")
    return job, task, host


def _task_room(pe, task, host):
    """How many tasks the job may run on ``host`` besides its master process: the slots
    granted there, one fewer on the master host when the job script is the first task."""
    room = sum(int(g[2]) for g in task.granted if g[1] == host)
    if host == task.granted[0][1] and _flag(pe.get("job_is_first_task")):
        room -= 1
    return room


def _running_on(state, job, task, host):
    return sum(1 for key, info in _tasks(state).items()
               if key[:2] == (job.id, task.number) and info["host"] == host)


def _strings(value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Refused("error: invalid request")
    return value


def _plan(dispatcher, job, task, host, body, tdir):
    granted = [g for g in task.granted if g[1] == host][:1] or [[task.queue, host, 1]]
    # one task holds one slot: its per-slot limits are not multiplied, as Grid Engine's
    # shepherd of a task started by qrsh -inherit has no host_slots to multiply them by
    plan = dispatcher.build_plan(job, task.number, granted, task.pe, host_slots=1,
                                 qrsh_client=body.get("client"))   # ended when it goes away
    plan["env"].update(job_sizes(task.granted))     # the job's, not those of the task's one slot
    command = _strings(body.get("command"))
    if not command:
        raise Refused("error: no command given")
    streams = body.get("streams") or {}
    if not isinstance(streams, dict):
        raise Refused("error: invalid request")
    plan["env"] = _environment(plan, body.get("env"))
    noshell = bool(body.get("noshell"))
    exe, argv = _command(job, command, noshell)
    # -noshell: found on the task's PATH when it executes (execvp), its failure reported
    plan["exec_search"] = noshell
    plan["exec_failure"] = "qrsh_starter" if noshell else None
    plan["shell_check"] = None                      # (a task runs as qrsh -inherit asks)
    plan.update(exec=exe, argv=argv, prolog=None, epilog=None, pe_start=None, pe_stop=None,
                stdout=str(streams.get("stdout")), stderr=str(streams.get("stderr")),
                stdin=str(streams.get("stdin")), join=False, result_dir=tdir, pe_task=True,
                stream_names={})
    own_tmpdir(plan, job, task.number, tdir)
    if isinstance(body.get("cwd"), str) and os.path.isabs(body["cwd"]):
        plan["cwd"] = body["cwd"]
        plan["env"]["PWD"] = body["cwd"]
    return plan


def job_sizes(granted):
    """NSLOTS, NHOSTS and NQUEUES of a parallel job granted ``granted`` ([queue, host,
    slots], ...): what every task inside it sees, as Grid Engine's execd sets them from the
    job's whole granted list."""
    return {"NSLOTS": str(sum(int(n) for _q, _h, n in granted)),
            "NHOSTS": str(len({h for _q, h, _n in granted})), "NQUEUES": str(len(granted))}


def own_tmpdir(plan, job, number, tdir):
    """Give the plan of a task inside a job (folder ``tdir``) a TMPDIR of its own beside
    the job's (exec.tmpdir), and the job's PE_HOSTFILE."""
    spec = plan.get("tmpdir")
    if isinstance(spec, dict):
        spec = dict(spec, name=spec["name"] + "." + os.path.basename(tdir))
        spec["path"] = os.path.join(spec["base"], spec["cell"], spec["name"])
        plan["tmpdir"] = spec
        tmpdir = spec["path"]
    else:
        tmpdir = plan["env"]["TMPDIR"] + "." + os.path.basename(tdir)
    plan["env"] = dict(plan["env"], TMPDIR=tmpdir, TMP=tmpdir,
                       PE_HOSTFILE=os.path.join(jobstore.task_dir(job.id, number), "pe_hostfile"))
    return plan


def _command(job, command, noshell):
    """(program, argv) of a task: with -noshell the command itself (a program that cannot
    be executed is reported as Grid Engine's qrsh_starter does, see ``exec.jobproc``),
    else ``<owner's login shell> -c "<the words joined by blanks>"``."""
    if noshell:
        return command[0], command
    import pwd
    try:
        shell = pwd.getpwnam(job.spec["owner"]).pw_shell or "/bin/sh"
    except KeyError:
        shell = "/bin/sh"
    return shell, [os.path.basename(shell), "-c", " ".join(command)]


def _environment(plan, extra):
    """The task's environment: the job's, with the variables qrsh -inherit passed (-V,
    -v) over it, and the Grid Engine variables of the task over those (as Grid Engine's
    execd sets HOSTNAME, TMPDIR, ... after a task's own variables)."""
    env = dict(plan["env"])
    if extra is None:
        return env
    if not isinstance(extra, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in extra.items()):
        raise Refused("error: invalid request")
    env.update(extra)
    for name in plan.get("proc_env") or ():
        if name in plan["env"] and name not in ("PATH", "LANG", "PWD"):
            env[name] = plan["env"][name]
    return env


def start(state, dispatcher, req, now):
    """The ``pe_task`` request: start the slave task; answers the folder its result goes to."""
    try:
        job, task, host = _target(state, req)
        known = _tasks(state)
        ident = _next_ident(state, job, task.number)
        tdir = os.path.join(jobstore.task_dir(job.id, task.number), f"pe.{ident}")
        plan = _plan(dispatcher, job, task, host, req.body, tdir)
    except Refused as exc:
        return 1, "", f"{exc}\n"
    makedirs(tdir, jobstore.DIR_MODE)          # (others pass through, list nothing)
    info = {"host": host, "start": now, "queue": task.queue}
    from gridtools.formats import spoolyaml
    from gridtools.spool.files import atomic_write
    atomic_write(os.path.join(tdir, INFO_FILE), spoolyaml.dump(info), fsync=False)
    plan["launch"] = tasklock.launch_token(now)          # the launch its shepherd may run
    known[(job.id, task.number, ident)] = dict(info, dir=tdir)
    dispatcher.execution.run_plan(plan, tdir, host)
    state.log(f"I|job {job.id}.{task.number}: task {ident}.{host} started")
    return 0, tdir + "\n", ""


#: tasks whose next ``pe.<n>`` number ``_next_ident`` keeps before it forgets those of
#: jobs gone
MOST_NUMBERED = 1000


def _next_ident(state, job, number):
    """The number of the next task inside task ``number`` of ``job``: one more than the
    last given, found from its folders once a daemon (a request refused before its
    folder is made takes none, and asks no listing)."""
    given = getattr(state, "pe_numbers", None)
    if given is None:
        given = state.pe_numbers = {}
    key = (job.id, number)
    if key not in given:
        if len(given) >= MOST_NUMBERED:
            for old in [k for k in given if k[0] not in state.jobs]:
                del given[old]
        given[key] = max([n for n, _path in _folders(jobstore.task_dir(job.id, number))] + [0])
    given[key] += 1
    return given[key]


def _end_orphan(state, key, info):
    """A task whose job's own task is over is ended (its shepherd told to stop); True
    when there is nothing left to wait for (no shepherd, no result)."""
    job = state.jobs.get(key[0])
    if job is not None and job.state_of(key[1]) is TaskState.RUNNING:
        return False
    pid = _shepherd(info["dir"])
    if not pid:
        return not os.path.exists(os.path.join(info["dir"], jobstore.RESULT_FILE))
    end_task(info, pid)
    return False


def end_task(info, pid=None):
    """Tell the shepherd of a task (``info``: its entry in ``tasks_of``) to stop, once."""
    if info.get("ending"):
        return
    pid = _shepherd(info["dir"]) if pid is None else pid
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        info["ending"] = True


def follow_suspension(state, job=None, number=None):
    """Have the shepherd of every task inside a running job (only those of task
    ``number`` of ``job`` when given) suspend or resume it as its job's own task is
    suspended or not (SIGUSR1 / SIGUSR2, as the job's own shepherd is told); True while
    some of them have no shepherd yet to tell."""
    waiting = False
    for key, info in _tasks(state).items():
        if job is not None and key[:2] != (job.id, number):
            continue
        owner = state.jobs.get(key[0])
        task = owner.tasks.get(key[1]) if owner is not None else None
        if task is None or task.state is not TaskState.RUNNING or info.get("ending"):
            continue
        wanted = bool(task.suspended)
        if bool(info.get("stopped")) == wanted:
            continue
        pid = _shepherd(info["dir"], here=True)
        if not pid:
            waiting = waiting or _starting(info["dir"])
            continue
        try:
            os.kill(pid, signal.SIGUSR1 if wanted else signal.SIGUSR2)
        except OSError:
            continue
        info["stopped"] = wanted
    return waiting


def _starting(tdir):
    """True while a task's shepherd has still to start (no lock record, no result)."""
    return tasklock.read_lock(tdir) is None and \
        not os.path.exists(os.path.join(tdir, jobstore.RESULT_FILE))


def _shepherd(tdir, here=False):
    """The live shepherd pid of a task folder, proven by its lock and start time; 0 if
    none (and, ``here``, when it runs on another machine)."""
    from gridtools.exec.jobproc import start_ticks
    from gridtools.spool.files import is_locked
    if not is_locked(os.path.join(tdir, jobstore.SHEPHERD_LOCK)):
        return 0
    record = tasklock.read_lock(tdir)
    if record is None or not record.pid or (here and not record.here()):
        return 0
    return record.pid if start_ticks(record.pid) == record.ticks else 0


def collect(state, now):
    """Account the slave tasks that ended (ending those that outlived their job);
    returns how many ended."""
    from gridtools.formats import spoolyaml
    from gridtools.spool.files import read_text
    ended = []
    for key, info in list(_tasks(state).items()):
        text = read_text(os.path.join(info["dir"], jobstore.RESULT_FILE))
        if text is None:
            if _end_orphan(state, key, info):
                del _tasks(state)[key]
            continue
        try:
            result = spoolyaml.load(text)
        except spoolyaml.SpoolFormatError:
            result = {}
        ended.append((key, info, result))
        del _tasks(state)[key]
        with open(os.path.join(info["dir"], ACCOUNTED), "w"):
            pass
    records = [r for r in (_account(state, key, info, result) for key, info, result in ended) if r]
    if records:
        acct.append(records)
    for key, info, result in ended:     # (what each used counts for its owner's share, as the job's)
        job = state.jobs.get(key[0])
        if job is not None and result.get("usage"):
            state.usage.task_ended(job.spec, f"{key[1]}.pe.{key[2]}", result, now)
    for key, info, result in ended:
        if "node" in info:             # a node of an HTCondor parallel universe job: its event
            from gridtools.daemon import parnodes
            parnodes.node_ended(state, state.jobs.get(key[0]), key[1], info["node"], result)
    return len(ended)


def _account(state, key, info, result):
    job = state.jobs.get(key[0])
    if job is None:
        return None
    task = job.task(key[1])
    usage = result.get("usage") or {}
    if _flag(_pe(state, job, task).get("accounting_summary")):
        return None                     # (summed into the job's record: merged_usage)
    from gridtools.accounting import records
    from gridtools.daemon import view
    slave = task.replaced(host=info["host"], start_time=float(result.get("start_time") or info["start"]),
                          end_time=float(result.get("end_time") or info["start"]), slots=1,
                          exit_status=int(result.get("exit_status") or 0), failed=int(result.get("failed") or 0))
    lists = view.userlists_of(state.config, job.spec["owner"], job.spec.get("group", ""))
    rec = records.record(job.spec, slave, usage, lists, view.queue_priority(state.config, task.queue, info["host"]))
    rec["pe_taskid"] = f"{key[2]}.{info['host']}"
    return rec


def merged_usage(state, job, task, usage):
    """The usage of a master task with what the tasks inside it added in this run, under
    accounting_summary TRUE: read from their results in the task's folder (those begun
    since the task's run did), so a daemon that started again meanwhile loses none."""
    if not _flag(_pe(state, job, task).get("accounting_summary")):
        return usage
    from gridtools.formats import spoolyaml
    from gridtools.spool.files import read_text
    merged = dict(usage or {})
    since = float(task.start_time or 0) - 1
    for _n, tdir in _folders(jobstore.task_dir(job.id, task.number)):
        text = read_text(os.path.join(tdir, jobstore.RESULT_FILE))
        if text is None:
            continue
        try:
            result = spoolyaml.load(text)
        except spoolyaml.SpoolFormatError:
            continue
        if not isinstance(result, dict) or float(result.get("start_time") or 0) < since:
            continue                    # (an earlier run's)
        for name in SUMMED:
            value = (result.get("usage") or {}).get(name, 0)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                merged[name] = float(merged.get(name, 0) or 0) + value
    return merged