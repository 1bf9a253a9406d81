"""Procedures and methods of a running task: prolog, epilog, PE start and stop,
the queue's suspend/resume/terminate methods and checkpoint commands.

A procedure's command line is run as Grid Engine's shepherd runs it
(sge_conf(5) prolog, sge_pe(5) start_proc_args): split into words at blanks,
its variables (``$job_id``, ``$job_name``, ...; ``procedure_values``) replaced
inside each word, executed without a shell. A method or checkpoint command is
a shell command line (``/bin/sh -c``), as in Grid Engine, run as the job
owner.

Who a procedure runs as decides its environment and working directory
(``runs_as_owner``): one of the job owner's has the job's environment and
starts in the job's working directory, entered only after dropping to the
owner; any other one (``root@``) has the clean environment the plan carries
(``proc_env``: a fixed PATH and the Grid Engine variables the daemon set) and
starts in ``/``. Output files are always opened with the owner's rights.
"""

import os
import pwd
import re
import signal

from gridtools.exec.jobproc import (
    DEFAULT_SIGNALS, FAILED_BEFORE_JOB, become_owner, chdir_to, exec_or_report, exec_program,
    open_as_owner, read_spawn_failure, signal_job, signal_named)

#: PATH of a procedure that does not run with the job's environment (exec.plan's DEFAULT_PATH)
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _method(plan, which):
    method = plan.get(which)
    return method if method and method.upper() != "NONE" else None


_VARIABLE = re.compile(r"\$([A-Za-z0-9_]+)")


def expand_words(command, values):
    """The argv of a configured command line: split into words at blanks first, then
    each ``$name`` in a word that ``values`` knows replaced by its value (a name runs
    as far as letters, digits and '_' go; an unknown one stays as it is). A value
    never becomes more than part of its word, whatever it holds."""
    return [_VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), word)
            for word in str(command).split()]


def expand_text(command, values):
    """A method's command line (run by a shell, as Grid Engine runs them) with the
    ``$name``s that ``values`` knows replaced."""
    return _VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), str(command))


def procedure_values(plan, pid=None):
    """The values of the variables of a procedure's or method's command line
    (sge_conf(5) prolog, sge_pe(5) start_proc_args, queue_conf(5) methods)."""
    values = dict(plan.get("proc_vars") or {})
    if not values:                  # (a plan written before they were part of it)
        env = plan.get("env") or {}
        task = env.get("SGE_TASK_ID", "")
        values = {"job_id": str(plan["job_id"]), "job_owner": plan["owner"],
                  "job_name": env.get("JOB_NAME", ""), "queue": env.get("QUEUE", ""),
                  "host": env.get("HOSTNAME", ""), "ja_task_id": task if task.isdigit() else "0"}
    values.update(stdin_path=str(plan.get("stdin", "")), stdout_path=str(plan.get("stdout", "")),
                  stderr_path=str(plan.get("stdout" if plan.get("join") else "stderr", "")))
    if plan.get("ckpt"):            # checkpoint(5): the environment's directory and signal
        values.update(ckpt_dir=str(plan["ckpt"].get("dir") or ""),
                      ckpt_signal=str(plan["ckpt"].get("signal") or "none"))
    if pid is not None:
        values["job_pid"] = str(pid)
    return values


def run_method(plan, command, pid):
    """Run a queue's or checkpointing environment's command (suspend_method,
    ckpt_command, ...) as Grid Engine does: by ``/bin/sh -c`` as the job owner, in the
    job's working directory (changed to after dropping to the owner), with ``$job_pid``
    and the other variables replaced."""
    return run_procedure(plan, ["", command], pid=pid, shell=True)


def suspend(plan, pid):
    """Stop the job: its suspend_method (a command or a signal), else SIGSTOP. Stopped by
    SIGSTOP, its cgroup is frozen as well (``leftovers.freeze``): its owner's SIGCONT
    cannot run it on, nor can a process of it that left its process group go on."""
    if _command_or_signal(plan, "suspend_method", signal.SIGSTOP, pid) == signal.SIGSTOP:
        from gridtools.exec import leftovers
        leftovers.freeze(True)


def resume(plan, pid):
    """Continue the job: its cgroup thawed, its resume_method (a command or a signal),
    else SIGCONT."""
    _thaw()
    _command_or_signal(plan, "resume_method", signal.SIGCONT, pid)


def _thaw():
    from gridtools.exec import leftovers
    leftovers.freeze(False)


def _command_or_signal(plan, key, default, pid):
    """Run the method ``key`` of the plan, or send its signal (``default`` when none);
    the signal sent, or None."""
    method = _method(plan, key)
    if method and method.startswith("/"):
        run_method(plan, method, pid)
        return None
    sent = signal_named(method, default)
    signal_job(pid, sent)
    return sent


def cont(pid):
    """Let a job that is being ended go on (its resume_method is not run): its cgroup
    thawed and SIGCONT, so that a suspended job gets the signals that end it."""
    _thaw()
    signal_job(pid, signal.SIGCONT)


def terminate(plan, pid):
    """End the job: its terminate_method (the queue's command or signal; an HTCondor
    job's KillSig, which is only ever a signal), or SIGKILL to the whole process group.
    The shepherd ends a deleted job once, however often it is told."""
    method = _method(plan, "terminate_method")
    cont(pid)
    if method and method.startswith("/"):
        run_method(plan, method, pid)
    else:
        signal_job(pid, signal_named(method, signal.SIGKILL))


class Ran:
    """How a procedure went: its exit ``status`` (128 + the signal that ended it);
    ``owner``, True when it ran as the job owner with the job's environment; ``failure``
    (as ``StartFailed.failure`` gives one) when it could not be started, e.g. not
    changing to the job's working directory."""

    def __init__(self, status, owner, failure=None):
        self.status, self.owner, self.failure = status, owner, failure


def runs_as_owner(plan, user):
    """True when a procedure configured for ``user`` ("" for none) runs as the job
    owner: then it has the job's environment and working directory. One for root (a
    ``root@`` procedure) or any other user, or that the daemon's user runs because it
    cannot change its identity, has a clean environment instead (``proc_env``)."""
    if user and (user == "root" or user != plan["owner"]):
        return False
    euid = os.geteuid()
    return euid == 0 or euid == plan["uid"]


def run_procedure(plan, spec, on_start=None, pid=None, outputs=("stdout", "stderr"), shell=False):
    """Run a prolog/epilog/PE procedure or method ``[user, command line]`` in a session
    of its own, as Grid Engine's shepherd does: the command line split into words,
    its variables replaced in each word, and executed without a shell.

    One that runs as the job owner gets the job's environment and starts in its
    working directory (changed to after dropping to the owner); any other one runs
    as the user named (root for ``root@``, when the shepherd may change its identity)
    with the clean environment of ``proc_env`` in ``/``. Its output goes to the plan's
    ``outputs`` files (standard output, error output: the job's, or the PE's
    ``.po``/``.pe`` files), opened with the owner's rights. ``on_start(pid)`` learns
    its process group. Returns a ``Ran``. (``shell``: a method's command line, given
    to ``/bin/sh -c`` with its variables replaced.)"""
    user, command = spec
    values = procedure_values(plan, pid)
    argv = ["/bin/sh", "-c", expand_text(command, values)] if shell else expand_words(command, values)
    owner = runs_as_owner(plan, user)
    if not argv:
        return Ran(0, owner)
    if owner:
        env, cwd, account = dict(plan["env"]), plan["cwd"], None
    else:
        env, cwd, account = dict(plan.get("proc_env") or {"PATH": CLEAN_PATH}), "/", None
        if os.geteuid() == 0 and user and user != "root":
            try:
                account = pwd.getpwnam(user)
            except KeyError:
                return Ran(1, owner, {"code": FAILED_BEFORE_JOB, "reason": f"unknown user {user}",
                                      "step": "", "path": "", "errno": 0})
        env["HOME"] = account.pw_dir if account else home_of_uid(os.geteuid())
    out_key, err_key = outputs
    out = open_as_owner(plan, plan.get(out_key) or plan["stdout"])
    err = out if plan.get("join") else open_as_owner(plan, plan.get(err_key) or plan["stderr"])
    # a procedure not run as the owner writes into pipes the shepherd relays to the owner's
    # files: how those files take its output (a FIFO closed at once, /dev/full) is none of
    # its business, so the owner cannot make it fail (which sets its queue in error)
    pipes = [] if owner else [os.pipe2(os.O_CLOEXEC) for _ in ((out,) if err is out else (out, err))]
    fds = (out.fileno(), err.fileno()) if owner else (pipes[0][1], pipes[-1][1])
    rfd, wfd = os.pipe2(os.O_CLOEXEC)
    try:
        child = os.fork()
        if child == 0:
            os.close(rfd)
            _procedure_child(plan, argv, env, cwd, owner, account, fds, wfd)
    finally:
        os.close(wfd)
        for _read, write in pipes:
            os.close(write)
        if owner:
            out.close()
            if err is not out:
                err.close()
    failure = read_spawn_failure(rfd)         # (back once it executed, in its own session)
    if on_start is not None and failure is None:
        on_start(child)
    if pipes:
        status = _relay(child, [(read, target) for (read, _w), target in zip(pipes, (out, err))])
        out.close()
        if err is not out:
            err.close()
    else:
        _, status = os.waitpid(child, 0)
    if failure is not None:
        return Ran(1, owner, failure)
    if os.WIFSIGNALED(status):
        return Ran(128 + os.WTERMSIG(status), owner)
    return Ran(os.WEXITSTATUS(status), owner)


#: seconds the relay of a procedure's output waits between looks at the procedure, and
#: goes on copying once it ended (what processes it left behind still write is lost)
_RELAY_LOOK = 0.2
_RELAY_DRAIN = 1.0


def _relay(child, pipes):
    """Copy what a procedure writes into ``pipes`` ([(read end, file)]) to the files until
    it ended, and what it left in them then; its wait status. A file that does not take
    it (a FIFO without a reader, one that does not read, a full disk) loses it: the
    procedure never waits for the files nor learns of their errors. Processes it left
    behind that still hold a pipe do not keep the shepherd here."""
    import select
    import time
    targets = {}
    drained_by = None
    for read, target in pipes:
        os.set_blocking(read, False)
        try:
            os.set_blocking(target.fileno(), False)
        except OSError:
            pass
        targets[read] = target.fileno()
    status = None
    while targets:
        try:
            ready = select.select(list(targets), [], [], _RELAY_LOOK)[0]
        except InterruptedError:
            ready = []
        for read in ready:
            try:
                chunk = os.read(read, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                os.close(read)
                del targets[read]
                continue
            try:
                os.write(targets[read], chunk)
            except OSError:
                pass                    # (dropped: the file does not take it)
        if status is None:
            done, found = os.waitpid(child, os.WNOHANG)
            if done:
                status, drained_by = found, time.monotonic() + _RELAY_DRAIN
        if status is not None and (not ready or time.monotonic() > drained_by):
            break
    for read in targets:
        os.close(read)
    if status is None:
        _, status = os.waitpid(child, 0)
    return status


def _procedure_child(plan, argv, env, cwd, owner, account, fds, wfd):
    """In the forked child of a procedure: take its identity, then change to its
    working directory, then execute it; never returns."""
    exec_or_report(lambda: _start_procedure(plan, argv, env, cwd, owner, account, fds), wfd)


def _start_procedure(plan, argv, env, cwd, owner, account, fds):
    """The procedure's side of its start (``_procedure_child``)."""
    from gridtools.exec import leftovers
    leftovers.join()
    os.setsid()
    for sig in DEFAULT_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    if owner:
        become_owner(plan)
    elif account is not None:
        os.initgroups(account.pw_name, account.pw_gid)
        os.setgid(account.pw_gid)
        os.setuid(account.pw_uid)
    chdir_to(cwd)
    null = os.open(os.devnull, os.O_RDONLY)
    for target, fd in enumerate((null,) + tuple(fds)):
        os.dup2(fd, target)
    exec_program(argv[0], argv, env, search=True)


def home_of_uid(uid):
    try:
        return pwd.getpwuid(uid).pw_dir
    except KeyError:
        return "/"
