"""condor_ssh_to_job: a shell (or a command) beside a running job, in its environment.

    condor_ssh_to_job [-auto-retry] [-remove-on-interrupt] [-shells SH,...] [-name SCHEDD]
                      [-pool HOST] [-ssh CMD] [-keygen-options OPTS] [-X | -x] [-debug]
                      {cluster | cluster.proc} [command ...]

HTCondor's starts an sshd beside the job on its execution machine. A cell's jobs run
on this machine as their owners, so here the session is a process of the owner's
own: the job's process is found among the owner's processes (the one whose
environment names this cell and the job: GRIDTOOLS_ROOT, and CONDOR_ID or JOB_ID
with SGE_TASK_ID), and the shell starts with that process's environment, in the
job's working directory (its Iwd, else its scratch directory, as HTCondor's shell
setup chooses), after HTCondor's greeting lines (``Welcome to slot1@host!``, ``Your
condor job is running with pid(s) N.``). With a command, the command runs through
/bin/sh instead, and its exit status is this command's. Only the job's owner may
(root too: the session then runs as the owner).

While a session lasts, the directory ``.condor_ssh_to_job_1`` is in the job's
scratch directory, as in HTCondor: the job of ``condor_submit -interactive`` waits
for it. When the session of such a job (InteractiveJob) ends, the job ends too
(its processes are sent SIGTERM), as HTCondor's interactive jobs end with their
session.

A job that is not running yet is said in the schedd's words (``Job 5.0 is not
running.``), exit 1; with -auto-retry the command waits for it (``Waiting for job to
start...``). With -remove-on-interrupt an interrupt removes the job.
"""

import os
import signal
import sys
import time

from gridtools.errors import GridError, lines

USAGE = """\
Usage: {prog} [OPTIONS] {{ cluster | cluster.proc }} [command]

OPTIONS:
 -debug
 -name schedd-name
 -pool pool-name
 -auto-retry               (if job not running yet)
 -remove-on-interrupt      (rm job on ctrl-c)
 -shells shell1,shell2,... (shells to try)
 -ssh <alt ssh command>    (e.g. sftp or scp)
 -keygen-options <keygen options>
 -X                        (enable X11 forwarding)
 -x                        (disable X11 forwarding)
"""

#: seconds between two looks at a job that is not running yet (-auto-retry)
RETRY_EVERY = 0.5
#: the directory a session keeps in the job's scratch directory (HTCondor's name)
SESSION_DIR = ".condor_ssh_to_job_1"


class Options:
    def __init__(self):
        self.auto_retry = self.remove_on_interrupt = False
        self.shells = os.environ.get("SHELL", "")
        self.schedd = None
        self.job = None
        self.command = []


def _prefix(arg, word):
    """HTCondor's match_prefix: ``arg`` is ``word`` or a prefix of it (at least ``-x``)."""
    return len(arg) >= 2 and word.startswith(arg)


def parse_args(argv, prog):
    opts = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.partition(":")[0] != "-" and _prefix(arg.partition(":")[0], "-debug"):
            pass
        elif _prefix(arg, "-help"):
            sys.stderr.write(USAGE.format(prog=prog))
            raise SystemExit(0)
        elif arg in ("-X", "-x"):
            pass                        # (no X11 display is forwarded: the session is local)
        elif arg == "--":
            i += 1
            break
        elif any(_prefix(arg, word) for word in ("-name", "-pool", "-ssh", "-keygen-options", "-shells")):
            if i + 1 >= len(argv):
                raise GridError(f"{arg} requires an argument", 1)
            i += 1
            if _prefix(arg, "-shells"):
                opts.shells = argv[i]
            elif _prefix(arg, "-name"):
                opts.schedd = argv[i]
        elif _prefix(arg, "-auto-retry"):
            opts.auto_retry = True
        elif _prefix(arg, "-remove-on-interrupt"):
            opts.remove_on_interrupt = True
        elif arg.startswith("-"):
            raise GridError(f"Unrecognized argument: {arg}", 1)
        else:
            break
        i += 1
    if i >= len(argv):
        sys.stderr.write("ERROR: You must specify a job!\n\n")
        raise SystemExit(1)
    opts.job = _job_id(argv[i])
    opts.command = list(argv[i + 1:])
    return opts


def _job_id(text):
    """(cluster, proc) of ``cluster`` or ``cluster.proc`` (proc 0 when not given)."""
    head, dot, tail = text.partition(".")
    if head.isdigit() and (not dot or tail.isdigit()):
        return int(head), int(tail) if dot else 0
    raise GridError(f"Invalid job id: {text}", 1)


# ---------------------------------------------------------------- the job

def _find(cluster, proc):
    """(the job's Proc, or None when the queue has no such proc; the status it was read from)."""
    from gridtools.cli.condor import queue
    from gridtools.cli.status import load
    snap = load()
    for found in queue.procs(snap, {cluster}):
        if found.proc == proc:
            return found, snap
    return None, snap


def _wait_running(opts):
    """(the running Proc of the job, (its process's pid, environment), whether it is an
    interactive job); GridError in the schedd's words when it is not running (after
    waiting for it with -auto-retry)."""
    from gridtools.cli.condor import queue
    cluster, proc = opts.job
    said = False
    while True:
        found, snap = _find(cluster, proc)
        if found is None:
            raise GridError(f"No such job: {cluster}.{proc}", 1)
        user = queue.me()
        if user != found.owner and os.geteuid() != 0:
            raise GridError(f"{user} is not authorized for access to the starter for job {cluster}.{proc}", 1)
        if found.status == queue.HELD:
            reason = (found.hold or ["the job is held"])[0]
            raise GridError(f'Job is held: "{reason}".', 1)
        if found.status == queue.RUNNING:
            process = _job_process(found)
            if process is not None:
                return found, process, _interactive(found, snap)
        elif found.status not in (queue.IDLE, queue.SUSPENDED):
            raise GridError(f"Job {cluster}.{proc} is not running.", 1)
        if not opts.auto_retry:
            raise GridError(lines(f"Job {cluster}.{proc} is not running.",
                                  "(Use -auto-retry to keep trying periodically.)"), 1)
        if not said:
            sys.stderr.write("Waiting for job to start...\n")
            sys.stderr.flush()
            said = True
        time.sleep(RETRY_EVERY)


def _job_process(found):
    """(pid, environment) of the job's first process on this machine (None when none is
    seen yet: it is starting, or it runs elsewhere)."""
    import pwd
    from gridtools import cell
    try:
        uid = pwd.getpwnam(found.owner).pw_uid
    except KeyError:
        return None
    root = cell.root()
    wanted = {b"CONDOR_ID=" + found.id.encode()} if found.is_condor else {
        b"JOB_ID=" + str(found.cluster).encode()}
    best = None
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/environ", "rb") as fh:
                items = fh.read().split(b"\0")
            started = _start_time(name)
        except OSError:
            continue
        if b"GRIDTOOLS_ROOT=" + root.encode() not in items or not wanted <= set(items):
            continue
        env = dict(item.split(b"=", 1) for item in items if b"=" in item)
        if not found.is_condor and env.get(b"SGE_TASK_ID", b"undefined") not in (
                b"undefined", str(found.number).encode()):
            continue
        if best is None or started < best[0]:
            best = (started, int(name), env)
    if best is None:
        return None
    env = dict(best[2])
    env[_STARTED] = str(best[0]).encode()
    return best[1], env


#: where the job process's start time rides along with its environment (left out of the session's)
_STARTED = b"\0started"


def _start_time(pid):
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return int(fh.read().rpartition(b")")[2].split()[19])


# ---------------------------------------------------------------- the session

def main(argv, prog="condor_ssh_to_job"):
    try:
        opts = parse_args(list(argv), prog)
        if opts.schedd:
            from gridtools.cli.condor.submit_more import known_schedd
            if not known_schedd(opts.schedd):
                raise GridError(f"No such schedd named {opts.schedd} in local pool", 1)
        _arm(opts)
        found, (pid, env), interactive = _wait_running(opts)
        return _session(opts, found, pid, env, interactive)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except _Interrupted as exc:
        return exc.status


class _Interrupted(BaseException):
    def __init__(self, status):
        super().__init__(status)
        self.status = status


def _arm(opts):
    """-remove-on-interrupt: an interrupt (while waiting, or in the session) removes the job."""
    if not opts.remove_on_interrupt:
        return

    def removed(signum, _frame):
        signal.signal(signum, signal.SIG_IGN)
        _remove(opts.job)
        raise _Interrupted(128 + signum)
    signal.signal(signal.SIGINT, removed)


def _remove(job):
    from gridtools.cli.condor import act
    opts = act.Options()
    opts.selection.add_word(f"{job[0]}.{job[1]}")
    opts.words.append(f"{job[0]}.{job[1]}")
    try:
        act.run(opts, "condor_rm", act.REMOVE)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")


def _session(opts, found, pid, env, interactive):
    """Run the shell (or the command) beside the job; its exit status."""
    import pwd
    started = int(env.pop(_STARTED))
    decoded = {k.decode("utf-8", "surrogateescape"): v.decode("utf-8", "surrogateescape") for k, v in env.items()}
    scratch = decoded.get("_CONDOR_SCRATCH_DIR") or decoded.get("TMPDIR") or ""
    owner = pwd.getpwnam(found.owner)
    for name in ("TERM", "DISPLAY", "COLORTERM"):
        if name in os.environ:
            decoded[name] = os.environ[name]
    slot = found.host or decoded.get("_CONDOR_SLOT", "")
    decoded.update(_CONDOR_JOB_PIDS=str(pid), _CONDOR_SLOT_NAME=slot)
    marker = os.path.join(scratch, SESSION_DIR) if scratch else None
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:                      # (the session: as the owner, in the job's directory)
        try:
            for signum in (signal.SIGINT, signal.SIGQUIT):
                signal.signal(signum, signal.SIG_DFL)
            if os.geteuid() == 0 and owner.pw_uid != 0:
                os.initgroups(owner.pw_name, owner.pw_gid)
                os.setgid(owner.pw_gid)
                os.setuid(owner.pw_uid)
            _enter(marker, decoded)
            if opts.command:
                os.execve("/bin/sh", ["sh", "-c", " ".join(opts.command)], decoded)
            sys.stdout.write(f"Welcome to {slot}!\nYour condor job is running with pid(s) {pid}.\n")
            sys.stdout.flush()
            shells = [s for s in opts.shells.split(",") if s] + [decoded.get("SHELL", ""), owner.pw_shell, "/bin/sh"]
            for shell in (s for s in shells if s and os.access(s, os.X_OK)):
                os.execve(shell, ["-" + os.path.basename(shell)], decoded)
            sys.stderr.write("no shell could be started\n")
        except OSError as exc:
            sys.stderr.write(f"{exc.strerror}: {exc.filename or ''}\n")
        finally:
            os._exit(127)
    for signum in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(signum, signal.SIG_IGN)  # (the terminal's keys are the session's)
    status = _wait(child)
    with _as_owner(owner):              # (root acts on the owner's files and processes with their rights)
        _leave(marker)
        if interactive:                 # (an interactive job ends with its session)
            _end_job(pid, started)
    return status


class _as_owner:
    """Root's effective identity the owner's for a while (nothing changes for the owner)."""

    def __init__(self, owner):
        self.owner, self.switched = owner, os.geteuid() == 0 and owner.pw_uid != 0

    def __enter__(self):
        if self.switched:
            os.setegid(self.owner.pw_gid)
            os.seteuid(self.owner.pw_uid)

    def __exit__(self, *_exc):
        if self.switched:
            os.seteuid(0)
            os.setegid(0)


def _end_job(pid, started):
    """SIGTERM to the job's process, when it is still the one the session was opened
    beside (the same start time: a pid used again by another process is left alone)."""
    try:
        if _start_time(str(pid)) == started:
            os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, IndexError):
        pass


def _enter(marker, env):
    """In the session's process: mark the session in the job's scratch directory, and go
    to the job's directory (its Iwd, else the scratch directory)."""
    if marker:
        try:
            os.mkdir(marker, 0o700)
        except OSError:
            pass
    for folder in (env.get("_CONDOR_JOB_IWD"), env.get("_CONDOR_SCRATCH_DIR"), env.get("PWD")):
        if folder:
            try:
                os.chdir(folder)
                env["PWD"] = folder
                return
            except OSError:
                continue


def _leave(marker):
    if marker:
        try:
            os.rmdir(marker)
        except OSError:
            pass


def _wait(child):
    while True:
        try:
            _pid, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _interactive(found, snap):
    """True for a job submitted with condor_submit -interactive (InteractiveJob)."""
    from gridtools.cli.condor import queue
    source = queue.AdSource(snap, queue.me())
    try:
        return source.ad(found).eval("InteractiveJob") is True
    except Exception:  # noqa: BLE001 - an ad that cannot say: not interactive
        return False
