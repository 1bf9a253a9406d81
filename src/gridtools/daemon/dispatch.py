"""Carrying out decisions: starting, signalling and ending tasks.

Starting a task: build its plan, write the plan and the task's new state to
the spool, then fork the shepherd (or hand the task to the execution daemon
that serves its host). Signalling a shepherd is done only after checking its
pid file's process start time, so a recycled pid is never signalled.
"""

import os
import pwd
import signal
import time

from gridtools import binpath, cell
from gridtools.daemon import apply, condorjob, crash, devices, execd, jobside, parnodes, petask, view
from gridtools.exec import ckpt, client, launch, load, poolplugins, tasklock, tmpdir
from gridtools.exec import plan as plan_mod
from gridtools.formats import values
from gridtools.model.resources import Consumable
from gridtools.spool import jobs as jobstore
from gridtools.errors import SpoolError
from gridtools.spool.files import Lock, atomic_write, is_locked

#: the failed code of a run ended by rescheduling (accounting(5): "rescheduling")
FAILED_RESCHEDULED = 25

_SIGNALS = {"delete": signal.SIGTERM, "requeue": signal.SIGHUP, "kill": signal.SIGQUIT,
            "suspend": signal.SIGUSR1, "resume": signal.SIGUSR2, "checkpoint": ckpt.CHECKPOINT_NOW}

#: seconds after which a pass tries again to start what could not be prepared
START_RETRY = 1.0


def _conf_value(conf_obj, key, default=None):
    value = (conf_obj or {}).get(key, default)
    return default if value is None else value


def _procedure(text):
    """A prolog/epilog setting as [user, command], or None for NONE."""
    if not text or str(text).lower() == "none":
        return None
    text = str(text)
    user, at, rest = text.partition("@")
    if at and "/" not in user and rest.startswith("/"):
        return [user, rest]
    return ["", text]


#: the limits that hold for each slot of a job: its shepherd sets them multiplied by the
#: slots the job holds on the host, as Grid Engine's does (setrlimits.c), unless the job
#: asks for the limit as a consumable JOB (a value for the job as a whole)
PER_SLOT_LIMITS = ("s_cpu", "h_cpu", "s_data", "h_data", "s_stack", "h_stack", "s_vmem", "h_vmem")


def _numeric_limits(spec, queue_limits, host_slots=1, complexes=None):
    """The job's limits as numbers: its hard ``-l`` request capped by the queue's value,
    those of PER_SLOT_LIMITS multiplied by ``host_slots`` (the slots the job holds on the
    host, 1 for an HTCondor job: its request_memory is no limit). ``complexes``: the
    complex table (name -> model.resources.Complex) telling which are consumable JOB."""
    hard = (spec.get("resources") or {}).get("hard") or {}
    asked = {}
    for name in plan_mod.LIMITS:
        if name in hard:
            parse = values.parse_time if name.endswith(("_rt", "_cpu")) else values.parse_memory
            try:
                asked[name] = parse(str(hard[name]))
            except Exception:  # noqa: BLE001 - validated at submit; ignore if not
                continue
    result = {}
    for name in plan_mod.LIMITS:
        q = queue_limits.get(name, values.INFINITY)
        result[name] = min(asked[name], q) if name in asked else q
    if host_slots > 1 and not spec.get("condor_ad"):
        for name in PER_SLOT_LIMITS:
            if name in asked and _consumable_job(complexes, name):
                continue
            if result[name] != values.INFINITY:
                result[name] = result[name] * host_slots
    return result


def _consumable_job(complexes, name):
    cx = (complexes or {}).get(name)
    return cx is not None and cx.consumable is Consumable.JOB


class Dispatcher:
    """Starts and controls shepherds for the daemon."""

    def __init__(self, state, execution):
        self.state = state
        self.execution = execution
        self.watch = ShepherdWatch()
        self.dying = set()            # (job, task) lost, whose processes were killed and linger
        self.deletes_sent = {}        # (job, task) -> when its shepherd was last told "delete"

    # ------------------------------------------------------------ start
    def build_plan(self, job, number, granted, pe="", qrsh_client=None, host_slots=None):
        """Everything the shepherd of task ``number`` needs (see exec.plan); ``qrsh_client``:
        the qrsh whose FIFOs are the streams of a task started by ``qrsh -inherit``
        (``exec.client.identity``), looked after as an interactive job's client.
        ``host_slots``: the slots the per-slot limits are multiplied by (PER_SLOT_LIMITS);
        by default those ``granted`` on the first host (where the job script runs)."""
        conf = self.state.config
        spec = job.spec
        queue_name, host = granted[0][0], granted[0][1]
        q = self.queue_values(queue_name, host)
        gconf = conf.objects["conf"].get("global") or {}
        ctx = _task_context(job, number, granted, q, gconf, pe)
        if host_slots is None:
            host_slots = sum(int(g[2]) for g in granted if g[1] == host)
        limits = _numeric_limits(spec, q.limits(), host_slots, view.config_parts(self.state)["complexes"])
        exe, argv = plan_mod.command_line(spec, ctx)
        plan = {
            "job_id": job.id, "task": number, "owner": spec["owner"], "uid": spec["uid"],
            "gid": spec["gid"], "cwd": ctx["cwd"], "exec": exe, "argv": argv,
            # a command started without a shell (-b y -shell n, qrsh -noshell) is found on
            # the job's PATH, as Grid Engine's shepherd finds it (execvp)
            "exec_search": bool(spec.get("binary")) and not spec.get("shell_wrap", True),
            "shell_check": plan_mod.shell_check(spec, ctx, exe),
            # (and a qrsh -noshell command that cannot be, said as qrsh_starter says it)
            "exec_failure": "qrsh_starter" if spec.get("interactive") and spec.get("binary")
            and not spec.get("shell_wrap", True) else None,
            "env": plan_mod.job_environment(spec, number, ctx),
            "stdout": ctx["stdout"], "stderr": ctx["stderr"], "stdin": ctx["stdin"],
            "tmpdir": ctx["tmpdir"],
            "join": bool(spec.get("join")), "limits": limits,
            # (Grid Engine's jobs get the queue's INFINITY; HTCondor's keep the system's)
            "lift_limits": not spec.get("condor_ad"),
            "notify": values.parse_time(str(q("notify") or "0")) if spec.get("notify") else 0,
            "notify_job": bool(spec.get("notify")), "nice": int(q("priority") or 0),
            "prolog": _procedure(q("prolog")) or _procedure(_conf_value(gconf, "prolog")),
            "epilog": _procedure(q("epilog")) or _procedure(_conf_value(gconf, "epilog")),
            "suspend_method": q("suspend_method"), "resume_method": q("resume_method"),
            "terminate_method": q("terminate_method"), "granted": granted,
            "stream_names": ctx["stream_names"],
            "proc_env": plan_mod.procedure_environment(plan_mod.grid_variables(spec, number, ctx)),
            "proc_vars": _procedure_variables(spec, ctx, job.id, number, q),
        }
        if spec.get("pe"):
            plan["pe_stdout"], plan["pe_stderr"] = ctx["pe_stdout"], ctx["pe_stderr"]
        if spec.get("interactive") or qrsh_client:
            plan["interactive"] = {"client": qrsh_client or spec.get("client"),
                                   "handshake_timeout": _handshake_timeout(conf, host)}
        if spec.get("condor_ad"):
            condorjob.adjust_plan(plan, job, number, jobside.thread_names(self.state.condor),
                                  condorjob.remap_mkdir(self.state.condor),
                                  poolplugins.for_host(self.state.condor, host, self.state.log).table,
                                  condorjob.update_intervals(self.state), *condorjob.configs(self.state, host))
        plan.update(_pe_procedures(spec, conf, ctx))
        _add_queue_methods(plan, spec, conf, q, plan_mod.job_shell(spec, ctx))
        return plan

    def queue_values(self, queue_name, host):
        """The attribute values of a queue instance, looked up once per configuration."""
        state = self.state
        cache = state.view_cache.get("queue_values")
        if cache is None or cache[0] != state.config_generation:
            cache = state.view_cache["queue_values"] = (state.config_generation, {})
        found = cache[1].get((queue_name, host))
        if found is None:
            conf = state.config
            found = cache[1][(queue_name, host)] = _QueueValues(conf.objects["queue"][queue_name], host,
                                                                 view.hostgroups(conf))
        return found

    def prepare(self, job, number, granted, now, pe=""):
        """First half of a start: the task's folder and plan, and its new state (in memory)."""
        granted = [list(g) for g in granted]
        started = time.time()
        tdir = jobstore.make_task_dir(job.id, number)
        jobstore.let_owner_list(tdir, job.spec["uid"])    # $SGE_JOB_SPOOL_DIR: the job lists it
        plan = self.build_plan(job, number, granted, pe)
        if parnodes.is_parallel(job):          # node 0 of an HTCondor parallel universe job
            parnodes.for_node(plan, 0, len(parnodes.node_slots(granted)))
        plan["launch"] = tasklock.launch_token(started)
        chosen = devices.assign(self.state, job, number, granted, view.config_parts(self.state)["complexes"])
        plan["env"].update(devices.environment(chosen, granted[0][1]))
        plan["proc_env"].update(devices.environment(chosen, granted[0][1]))
        if job.spec.get("pe"):
            _write_pe_hostfile(tdir, granted)
        if execd.registered(granted[0][1]):
            launch.write_plan(tdir, plan)        # a separate execution daemon reads it
        apply.dispatched(self.state, job, number, granted, pe, started)
        return plan, tdir

    def launch(self, job, number, plan, tdir):
        """Second half, after the state was flushed: have the shepherd started.

        A host served by its own execution daemon gets the task through its
        inbox; every other host's tasks go to the dispatcher's exec server.
        """
        self.state.launching[(job.id, number)] = time.time()
        self.execution.launch(job.id, number, plan, tdir, job.task(number).host)
        if parnodes.is_parallel(job):          # and its other nodes, one per granted slot
            parnodes.start_nodes(self.state, self, job, number, time.time())

    def start_all(self, starts, now, slots=None):
        """Dispatch decided tasks: persist all their states once, then fork the shepherds.

        A task whose new state could not be written (a full disk) is not started:
        the next pass finds it without a shepherd and puts it back to pending. A task
        that could not even be prepared stays pending, and a pass runs again after
        START_RETRY seconds to try once more.
        """
        ready = []
        for start in starts:
            job = self.state.jobs[start.job_id]
            try:
                ready.append((job, start.task) + self.prepare(job, start.task, start.granted, now,
                                                              start.pe))
            except Exception as exc:  # noqa: BLE001 - one failed start must not stop the rest
                self.state.log(f"E|cannot start job {job.id}.{start.task}: {exc!r}")
                self.state.start_retry_at = now + START_RETRY     # a full disk may free up
        if ready:
            jobside.finish_plans(self.state, ready, now, slots)
            self.state.flush(only={job.id for job, *_rest in ready})
        crash.point("start")
        for job, number, plan, tdir in ready:
            if job.id not in self.state.dirty:
                self.launch(job, number, plan, tdir)
                self._hold_next_start(job, number, now)
                crash.point("start")

    def _hold_next_start(self, job, number, now):
        """A task of an HTCondor job started with NextJobStartDelay (next_job_start_delay):
        no other HTCondor job of its owner starts for that many seconds (at most
        MAX_NEXT_JOB_START_DELAY), as HTCondor's schedd holds back its next start after
        spawning one. The hold is the owner's alone (other users' jobs and Grid Engine's
        do not wait for it); a scheduler universe job, which the schedd starts on its
        own, holds back none."""
        from gridtools.formats.condor.jobattrs import SCHEDULER
        from gridtools.sched.inputs import job_start_delay, start_delay
        spec = job.spec
        # (the job's largest delay, kept with its description: a cluster without one is
        # not read again at each of its procs' starts)
        if not spec.get("condor_ad") or spec.get("universe") == SCHEDULER:
            return
        # (evaluated against the slot the task was matched with, TARGET, as the schedd does)
        condor = self.state.condor
        delay = condor.start_delay(job, number) if condor is not None else \
            start_delay(spec, number) if job_start_delay(job) > 0 else 0.0
        if delay <= 0:
            return
        cap = self.state.condor.max_start_delay(self.state) if self.state.condor is not None else 0.0
        if cap > 0:
            delay = min(delay, cap)
        owner = spec["owner"]
        holds = self.state.next_job_start
        if now + delay > holds.get(owner, 0.0):
            holds[owner] = now + delay
            self.state.next_job_starter[owner] = (job.id, number)
            self.state.log(f"I|job {job.id}.{number} holds back the next start of {owner}'s HTCondor jobs "
                           f"for {delay:g} seconds (NextJobStartDelay)")

    # ------------------------------------------------------------ control
    def signal_task(self, job, task, what):
        """Send the shepherd of a running task the signal for ``what``; False when there
        is no shepherd (yet) to tell. The tasks inside a parallel job are suspended and
        resumed with it (``petask.follow_suspension``)."""
        sent = self.execution.signal(job.id, task.number, _SIGNALS[what])
        if what == "delete" and sent:         # (reap.pending_deletes sends it again only late)
            self.deletes_sent[(job.id, task.number)] = time.time()
        if what in ("suspend", "resume"):
            petask.follow_suspension(self.state, job, task.number)
        return sent

    def force_end(self, job, task, now):
        """qdel -f: end the task now, whether or not its shepherd answers. Its record is
        the one Grid Engine's qmaster writes itself then: failed 0, exit status 0, no
        wall clock time and no usage (``forced``), its start and end times kept."""
        self.execution.kill(job.id, task.number)
        result = {"exit_status": 0, "failed": 0, "end_time": now, "deleted": True, "forced": True,
                  "usage": {}}
        jobstore.write_result(job.id, task.number, result)

    def lose_task(self, job, task, now):
        """The run of a task on a host lost for good (reschedule_unknown): whatever is left
        of it is killed, and its result says it is to run again, as Grid Engine's
        rescheduling records it (failed 25)."""
        self.execution.kill(job.id, task.number)
        result = {"exit_status": 0, "failed": FAILED_RESCHEDULED, "failed_reason": "manual/auto rescheduling",
                  "end_time": now, "requeue": True, "usage": {}}
        jobstore.write_result(job.id, task.number, result)

    def watch_shepherd(self, job, task):
        """Be woken the moment the (live) shepherd of a running task ends."""
        key = (job.id, task.number)
        if key not in self.watch.fds:
            self.watch.add(key, self.execution.shepherd(job.id, task.number))

    def unwatch_shepherd(self, job, task):
        self.watch.forget((job.id, task.number))

    def task_ended(self, job, number):
        self.state.touch(job)
        self.state.need_schedule = True


def _add_queue_methods(plan, spec, conf, q, shell):
    """The queue's starter_method around the job's command line, and the periodic
    checkpoint of a checkpointing job (min_cpu_interval)."""
    starter = q("starter_method")
    if starter and str(starter).upper() != "NONE":
        login = str(plan["argv"][0]).startswith("-")
        plan["exec"], plan["argv"] = plan_mod.with_starter(str(starter), plan["exec"], plan["argv"])
        plan["shell_check"] = None          # (the starter runs the job as it likes)
        plan["env"].update(plan_mod.starter_env(shell, str(q("shell_start_mode") or "posix_compliant"),
                                                login))
    if (str(q("shell_start_mode")) == "script_from_stdin" and not spec.get("binary")
            and plan["stdin"] == os.devnull):
        plan["stdin"] = plan["env"]["JOB_SCRIPT"]         # the shell reads the script
    checkpoint = _checkpoint(spec, conf, q)
    if checkpoint:
        plan["checkpoint"] = checkpoint
    env = conf.objects["ckpt"].get(spec.get("ckpt") or "")
    if env is not None:
        plan["ckpt"] = ckpt.settings(env, spec.get("ckpt_when"))
        plan["env"]["SGE_CKPT_DIR"] = plan["ckpt"]["dir"]


def _checkpoint(spec, conf, q):
    """{"interval", "command", "signal"} of a job checkpointed periodically, else None.

    The interval is the queue's min_cpu_interval, or the job's ``-c`` interval
    when that is longer; the environment's ``when`` (or ``-c`` letters) must
    contain ``m`` unless ``-c`` gave an interval.
    """
    env = conf.objects["ckpt"].get(spec.get("ckpt") or "")
    if env is None:
        return None
    when = str(spec.get("ckpt_when") or env.get("when") or "")
    try:
        floor = values.parse_time(str(q("min_cpu_interval") or "0:5:0"))
    except Exception:  # noqa: BLE001 - validated when the queue was stored
        floor = 300.0
    if when and not set(when) <= set("smxrn"):
        try:
            interval = max(values.parse_time(when), floor)
        except Exception:  # noqa: BLE001 - qsub checked the -c argument
            return None
    elif "m" in when:
        interval = floor
    else:
        return None
    if not 0 < interval < values.INFINITY:
        return None
    own = ckpt.settings(env)        # (a command only for a kernel-level interface)
    return {"interval": interval, "command": own["ckpt"], "signal": own["signal"]}


def _handshake_timeout(conf, host):
    """Seconds the job process of an interactive job on ``host`` may wait for its qrsh
    client to take the job's streams: execd_params QRSH_HANDSHAKE_TIMEOUT of the host's
    configuration, else of the global one, else exec.client's default."""
    from gridtools.formats.sge.conf import parse_params
    for which in (host, "global"):
        params = parse_params((conf.objects["conf"].get(which) or {}).get("execd_params"))
        try:
            seconds = float(values.parse_time(params["QRSH_HANDSHAKE_TIMEOUT"]))
        except Exception:  # noqa: BLE001 - not set there, or not a time: look further
            continue
        if 0 < seconds < values.INFINITY:
            return seconds
    return client.HANDSHAKE_TIMEOUT


def _account(owner):
    """(home, login shell) of a user on this host."""
    try:
        entry = pwd.getpwnam(owner)
        return entry.pw_dir, entry.pw_shell or "/bin/sh"
    except KeyError:
        return "/", "/bin/sh"


def _task_context(job, number, granted, q, gconf, pe=""):
    """The facts the job's command line and environment are made from."""
    spec = job.spec
    queue_name, host = granted[0][0], granted[0][1]
    home, login_shell = _account(spec["owner"])
    # path aliasing only with -cwd/-wd: without, the job runs in the owner's home (sge_aliases(5))
    cwd = plan_mod.apply_aliases(spec["cwd"], spec.get("aliases"), host) if spec.get("cwd") else home
    is_array = bool(spec.get("tasks"))
    pseudo = {"HOME": home, "USER": spec["owner"], "JOB_ID": str(job.id), "JOB_NAME": spec["name"],
              "HOSTNAME": host, "TASK_ID": str(number) if is_array else "undefined"}
    script = jobstore.script_path(job.id)
    ctx = {
        "host": host, "queue": queue_name, "slots": sum(g[2] for g in granted),
        "nhosts": len({g[1] for g in granted}), "nqueues": len(granted), "home": home,
        "login_shell": login_shell, "arch": load.arch(), "root": cell.root(), "cwd": cwd,
        "spool_dir": jobstore.task_dir(job.id, number),
        "job_script": spec.get("job_script") or (script if not spec.get("binary") else spec.get("command", "")),
        "tmpdir": tmpdir.layout(str(q("tmpdir") or "/tmp"), cell.root(), job.id, number, queue_name),
        "pe_name": pe or (spec.get("pe") or [""])[0],
        "restarted": job.task(number).restarted, "queue_shell": str(q("shell") or "/bin/sh"),
        "shell_start_mode": str(q("shell_start_mode") or "posix_compliant"),
        "login_shells": _login_shells(gconf), "has_shebang": spec.get("has_shebang", False),
        "binary_path": binpath.binary_path(),
        "execd_pidfile": execd.host_dir(host, "execd.pid") if execd.registered(host)
        else cell.spool("daemon.pid"),
    }
    ctx["stream_names"] = names = {}
    for stream, key, postfix in (("o", "stdout", None), ("e", "stderr", None), ("i", "stdin", None),
                                 ("o", "pe_stdout", "po"), ("e", "pe_stderr", "pe")):
        ctx[key], name = plan_mod.output_path(spec, stream, pseudo, cwd, host, number, is_array, postfix)
        if name and not spec.get("interactive"):     # (qrsh's streams are its FIFOs, never folders)
            names[key] = name
    ctx["job_shell"] = plan_mod.pick_shell(spec, host, pseudo)
    if ctx["shell_start_mode"] == "unix_behavior":
        ctx["has_shebang"] = _has_shebang(script)
    return ctx


class _QueueValues:
    """``q(attr)``: an attribute's value for one queue instance, each looked up once."""

    def __init__(self, queue, host, groups):
        self.queue, self.host, self.groups = queue, host, groups
        self.found = {}
        self.parsed_limits = None

    def __call__(self, attr):
        try:
            return self.found[attr]
        except KeyError:
            value = self.found[attr] = view.qvalue(self.queue, attr, self.host, self.groups)
            return value

    def limits(self):
        """The queue's resource limits as numbers (a copy)."""
        if self.parsed_limits is None:
            self.parsed_limits = _queue_limits(self)
        return dict(self.parsed_limits)


def _queue_limits(q):
    limits = {}
    for name in plan_mod.LIMITS:
        parse = values.parse_time if name.endswith(("_rt", "_cpu")) else values.parse_memory
        limits[name] = parse(str(q(name) or "INFINITY"))
    return limits


def _pe_procedures(spec, conf, ctx):
    """The PE's start_proc_args and stop_proc_args as [user, command line] (their
    variables are replaced word by word when they run: see ``exec.procedure.run_procedure``)."""
    if not spec.get("pe"):
        return {"pe_start": None, "pe_stop": None}
    pe = conf.objects["pe"].get(ctx["pe_name"]) or {}
    return {"pe_start": _procedure(pe.get("start_proc_args")), "pe_stop": _procedure(pe.get("stop_proc_args"))}


def _procedure_variables(spec, ctx, job_id, number, q):
    """The values of the variables of procedure command lines (sge_conf(5) prolog,
    sge_pe(5) start_proc_args), but for the paths of the job's streams (the shepherd
    knows them: see ``exec.procedure.procedure_values``)."""
    is_array = bool(spec.get("tasks"))
    found = {"host": ctx["host"], "ja_task_id": str(number) if is_array else "0",
             "job_owner": spec["owner"], "job_id": str(job_id), "job_name": spec["name"],
             "processors": str(q("processors") or "UNDEFINED"), "queue": ctx["queue"],
             "sge_cell": "default", "sge_root": ctx["root"],
             "merge_stderr": "1" if spec.get("join") else "0"}
    for stream in ("stdin", "stdout", "stderr"):
        found.update({f"fs_{stream}_host": "", f"fs_{stream}_path": "", f"fs_{stream}_tmp_path": "",
                      f"fs_{stream}_file_staging": "0"})
    if spec.get("pe"):
        found.update(pe=ctx["pe_name"], pe_slots=str(ctx["slots"]),
                     pe_hostfile=os.path.join(ctx["spool_dir"], "pe_hostfile"))
    return found


def _login_shells(gconf):
    value = _conf_value(gconf, "login_shells", ["sh", "bash"])
    return tuple(value) if isinstance(value, (list, tuple)) else tuple(str(value).split(","))


def _has_shebang(path):
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"#!"
    except OSError:
        return False


def _write_pe_hostfile(tdir, granted):
    lines = [f"{host} {slots} {queue}@{host} UNDEFINED" for queue, host, slots in granted]
    atomic_write(os.path.join(tdir, "pe_hostfile"), "\n".join(lines) + "\n", fsync=False)


#: rounds in which ``_end_task`` kills what is left below a shepherd before it gives up
_KILL_ROUNDS = 20


def _end_task(job_id, number, shepherd):
    """Kill every process of a task whose live shepherd (verified, and held by its
    control lock) is ``shepherd``, then the shepherd. The shepherd is stopped first, so
    that it starts nothing more (an epilog); then the kernel kills the task's cgroup
    when it has one (``leftovers.kill_group``), then the job's process groups, then
    whatever is still below the shepherd: it is the subreaper of the job's processes,
    so those that left the job's group or session (``setsid``, GNU ``timeout``) are
    among its descendants until it ends."""
    from gridtools.exec import leftovers
    try:
        os.kill(shepherd, signal.SIGSTOP)
    except ProcessLookupError:
        return
    leftovers.kill_group(job_id, number, shepherd)
    _kill_job_groups(shepherd)
    for _ in range(_KILL_ROUNDS):
        left = leftovers.descendants(shepherd)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        os.kill(shepherd, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _kill_job_groups(shepherd):
    """SIGKILL the process group of every child of a shepherd (the job's)."""
    import psutil
    try:
        children = psutil.Process(shepherd).children()
    except psutil.Error:
        return
    for child in children:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class _Controlling:
    """The control lock of a task, held while its shepherd is signalled: a shepherd that
    serves one task after another (exec.launch) lets go of a task only under it, so a
    shepherd found holding the task's lock cannot have moved on to another task before
    the signal arrives (exec.shepherd). ``held`` is False when the lock could not be
    had within a tenth of a second (the signal waits for a later pass)."""

    TRIES = 100

    def __init__(self, job_id, number):
        self.lock = Lock(os.path.join(jobstore.task_dir(job_id, number), jobstore.CONTROL_LOCK),
                         mode=0o600, blocking=False)
        self.held = False

    def __enter__(self):
        for _ in range(self.TRIES):
            try:
                self.held = self.lock.acquire()
            except SpoolError:          # no task folder (yet): no shepherd to signal
                return self
            if self.held:
                return self
            time.sleep(0.001)
        return self

    def __exit__(self, *exc):
        if self.held:
            self.lock.release()


def shepherd_pid(job_id, number):
    """The live shepherd pid of a task, verified by its lock and start time; 0 if none."""
    tdir = jobstore.task_dir(job_id, number)
    if not is_locked(os.path.join(tdir, jobstore.SHEPHERD_LOCK)):
        return 0
    record = tasklock.read_lock(tdir)
    if record is None or not record.here():
        return 0
    from gridtools.exec.jobproc import start_ticks
    return record.pid if start_ticks(record.pid) == record.ticks else 0


class LocalExecution:
    """The execution layer of this machine: shepherds forked by the dispatcher's exec
    server (or by the execution daemon that serves a host), found and signalled by
    the pid in their lock file, checked against its start time.

    The daemon talks to the execution layer only through ``start``/``stop``,
    ``launch``, ``signal``, ``kill``, ``shepherd`` and ``order_trash``; tests give
    it another one that runs no process."""

    def __init__(self, exec_client=None):
        self.client = exec_client

    def start(self):
        if self.client is not None:
            self.client.start()

    def stop(self):
        if self.client is not None:
            self.client.stop()

    def order_trash(self):
        if self.client is not None:
            self.client.order_trash()

    def launch(self, job_id, number, plan, tdir, host):
        if execd.registered(host):
            execd.send(host, job_id, number)
        elif self.client is not None:
            self.client.order(plan, tdir)
        else:
            launch.spawn(plan, tdir)

    def run_plan(self, plan, tdir, host=None):
        """Have a shepherd started for a task inside a parallel job (its folder ``tdir``
        in the job's task folder): by the execution daemon of ``host`` when one serves
        it (through its inbox, the plan written into the folder, as a job's start),
        else by the dispatcher's exec server."""
        if host is not None and execd.registered(host):
            launch.write_plan(tdir, plan)
            execd.send_folder(host, tdir)
        elif self.client is not None:
            self.client.order(plan, tdir)
        else:
            launch.spawn(plan, tdir)

    def signal(self, job_id, number, signum):
        with _Controlling(job_id, number) as control:
            pid = shepherd_pid(job_id, number) if control.held else 0
            if not pid:
                return False
            try:
                os.kill(pid, signum)
                return True
            except ProcessLookupError:
                return False

    def kill(self, job_id, number):
        """End a task now, every process of it and its shepherd (``_end_task``)."""
        with _Controlling(job_id, number) as control:
            pid = shepherd_pid(job_id, number) if control.held else 0
            if pid:
                _end_task(job_id, number, pid)

    def shepherd(self, job_id, number):
        return shepherd_pid(job_id, number)

    def renice(self, job_id, number, nice):
        """Set the nice value of a running task's processes (its shepherd's process group)."""
        from gridtools.exec import jobproc
        record = tasklock.read_lock(jobstore.task_dir(job_id, number))
        if record is None or not record.group or not record.here():
            return False
        if jobproc.start_ticks(record.group) != record.group_ticks:
            return False
        try:
            os.setpriority(os.PRIO_PGRP, record.group, nice)
            return True
        except OSError:
            return False


class ShepherdWatch:
    """Process file descriptors of live shepherds: each becomes readable the moment its
    shepherd ends, however it ends (also SIGKILL, also one started by an earlier
    daemon), so the daemon's wait wakes at once."""

    def __init__(self):
        self.fds = {}              # (job id, task) -> pidfd

    #: most shepherds watched at once (the daemon waits with select(); others are
    #: noticed by their obituary or at the next pass)
    MOST = 512

    def add(self, key, pid):
        if not pid or not hasattr(os, "pidfd_open") or len(self.fds) >= self.MOST:
            return
        try:
            self.fds[key] = os.pidfd_open(pid)
        except OSError:
            return

    def forget(self, key):
        fd = self.fds.pop(key, None)
        if fd is not None:
            os.close(fd)

    def ended(self, ready):
        """Forget the watches among ``ready`` descriptors (their shepherds ended)."""
        for key, fd in list(self.fds.items()):
            if fd in ready:
                self.forget(key)
