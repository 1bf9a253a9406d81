"""condor_ssh_to_job: a shell (or a command) beside a running job, in its environment.

    condor_ssh_to_job [-auto-retry] [-remove-on-interrupt] [-shells SH,...] [-name SCHEDD]
                      [-pool HOST] [-ssh CMD] [-keygen-options OPTS] [-X | -x] [-debug]
                      {cluster | cluster.proc} [command ...]

HTCondor's starts an sshd beside the job on its execution machine. A cell's jobs run
on this machine as their owners, so here the session is a process of the owner's
own, beside the job's process: the one the task's shepherd recorded in the spool
(``job_pid``, and the process group in its lock), taken only when it is still that
process (a child of that shepherd, leading its own process group, started since the
task did, its real, effective, saved and file system uids all the owner's): nothing
another user started, whatever its environment says, is ever taken for it. The
shell starts with that process's environment (for a job of root's, the environment
its shepherd wrote into the task's folder instead, without LD_*, BASH_ENV and ENV),
in the job's working directory (its Iwd, else its scratch directory, as HTCondor's
shell setup chooses), after HTCondor's greeting lines (``Welcome to slot1@host!``,
``Your condor job is running with pid(s) N.``). With a command, the command runs
through /bin/sh instead, and its exit status is this command's. Only the job's owner
may (root too: the session then runs as the owner, with the owner's groups).

Root's session as another user never gets root's descriptors, as sshd gives none:
it runs in a session of its own, with a pseudo-terminal of its own when standard
input is a terminal (root's terminal raw meanwhile, its window size passed on), else
with pipes, and root's process relays between them until the session's process ends;
no descriptor above 2 is left open to it. What root does afterwards as the owner
(removing the session's mark, ending an interactive job) is done by a child that
became the owner, groups included.

While a session lasts, a directory of its own, ``.condor_ssh_to_job_N`` (N the first
number free, as HTCondor's starter numbers its sshds' directories), is in the job's
scratch directory (as the task's environment file names it). It holds ``owner``, the
pid and start time (clock ticks since boot) of the client process the session lasts
with; a directory whose owner is gone is a stale one, taken again by the next session.
The session's process is sent SIGHUP when the client ends, even by SIGKILL (as sshd
ends when its connection closes). Each session removes its own directory only.

The job of ``condor_submit -interactive`` (InteractiveJob) waits for
``.condor_ssh_to_job_1``, the session condor_submit opens (other sessions into it are
numbered from 2): it ends, with exit status 0, once that directory has gone or its
owner has ended. No session ends any job itself.

A job that is not running yet is said in the schedd's words (``Job 5.0 is not
running.``), exit 1; with -auto-retry the command waits for it (``Waiting for job to
start...``). With -remove-on-interrupt, SIGINT, SIGHUP, SIGTERM and SIGQUIT (while
waiting, or during the session) remove the job, as HTCondor's: ``Interrupted by signal
2 (SIGINT), removing job 5.0...``, condor_rm's words, exit 1. Usage errors exit 2.
"""

import os
import signal
import stat
import sys
import time

from gridtools.cli.condor import sessionstreams
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

#: seconds a job the schedd says is running may take to record its process, and
#: between two looks at it meanwhile (with or without -auto-retry)
STARTING_WAIT, STARTING_STEP = 10.0, 0.1
#: seconds between two looks at a job that is not running yet (-auto-retry)
RETRY_EVERY = 0.5
#: the directories sessions keep in the job's scratch directory (HTCondor's names:
#: this and a number)
SESSION_PREFIX = ".condor_ssh_to_job_"
#: the file of a session's directory naming the process the session lasts with
OWNER_FILE = "owner"
#: the signals -remove-on-interrupt removes the job on (HTCondor's)
INTERRUPTS = (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT)


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
                raise GridError(f"{arg} requires an argument", 2)
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
            raise GridError(f"Unrecognized argument: {arg}", 2)
        else:
            break
        i += 1
    if i >= len(argv):
        sys.stderr.write("ERROR: You must specify a job!\n\n")
        raise SystemExit(2)
    opts.job = _job_id(argv[i])
    opts.command = list(argv[i + 1:])
    return opts


def _job_id(text):
    """(cluster, proc) of ``cluster`` or ``cluster.proc`` (proc 0 when not given)."""
    head, dot, tail = text.partition(".")
    if head.isdigit() and (not dot or tail.isdigit()):
        return int(head), int(tail) if dot else 0
    raise GridError(f"Invalid job id: {text}", 2)


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
    """(the running Proc of the job, (its process's pid, start ticks), whether it is an
    interactive job); GridError in the schedd's words when it is not running (after
    waiting for it with -auto-retry)."""
    from gridtools.cli.condor import queue
    cluster, proc = opts.job
    said, starting = False, None
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
            # (running as the schedd says, its process not recorded yet: it is starting,
            # as a starter that is not yet ready to take a session)
            starting = starting if starting is not None else time.monotonic() + STARTING_WAIT
            if time.monotonic() < starting:
                time.sleep(STARTING_STEP)
                continue
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
    """(pid, start ticks) of the job's process on this machine, as the task's shepherd
    recorded it in the spool, once checked (``_checked``); None when none is seen (it is
    starting, it runs elsewhere, or the process is not the job's)."""
    import pwd
    from gridtools.exec import tasklock
    from gridtools.spool import jobs as jobstore
    try:
        uid = pwd.getpwnam(found.owner).pw_uid
    except KeyError:
        return None
    folder = jobstore.task_dir(found.cluster, found.number)
    pid = _spool_number(folder, "job_pid")
    record = tasklock.read_lock(folder)
    if record is not None:
        if not record.here() or record.group != pid:
            return None
        shepherd, ticks = record.pid, record.group_ticks
        if _ticks(shepherd) != record.ticks:
            return None                 # (the shepherd is gone: its pid means nothing)
    elif os.geteuid() != 0:             # (the owner's own processes only: see _checked)
        shepherd, ticks = _spool_number(folder, "pid"), None
    else:
        return None
    return _checked(pid, shepherd, ticks, uid, found.start)


#: seconds a job's process may seem to have started before its task did (the boot time
#: the kernel tells is in whole seconds)
START_SLACK = 2.0


def _checked(pid, shepherd, ticks, uid, since):
    """(pid, start ticks) when process ``pid`` is the job's: a child of its shepherd,
    leading its own process group, started (at ``ticks``, when known) no earlier than
    its task (``since``), its real, effective, saved and file system uids all ``uid``;
    else None."""
    try:
        fields = _stat(pid)
        started = int(fields[19])
        if fields[0] == b"Z" or int(fields[1]) != shepherd or int(fields[2]) != pid or \
                ticks is not None and started != ticks or _boot_time() + started / _HZ < since - START_SLACK:
            return None
        with open(f"/proc/{pid}/status", "rb") as fh:
            uids = next(line for line in fh if line.startswith(b"Uid:")).split()[1:]
        if [int(u) for u in uids] != [uid] * 4 or _ticks(pid) != started:
            return None
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return pid, started


def _stat(pid):
    """The fields of /proc/PID/stat after the command's name (its state first, the
    parent's pid, the process group; the start time in clock ticks is [19])."""
    if not pid or pid < 0:
        raise OSError("no process")
    with open(f"/proc/{pid}/stat", "rb") as fh:
        data = fh.read()
    return data[data.rindex(b")") + 2:].split()


def _ticks(pid):
    """The start time of process ``pid`` in clock ticks since boot (0 when it is gone)."""
    try:
        return int(_stat(pid)[19])
    except (OSError, ValueError, IndexError):
        return 0


_HZ = os.sysconf("SC_CLK_TCK")


def _boot_time():
    with open("/proc/stat", "rb") as fh:
        return int(next(line for line in fh if line.startswith(b"btime ")).split()[1])


def _spool_number(folder, name):
    """The number file ``name`` of a task's folder holds (0 when it cannot be read)."""
    try:
        fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            return int(os.read(fd, 64).strip() or 0)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return 0


def _spool_environment(found, owner):
    """The job's environment as its shepherd wrote it into the task's folder (the
    ``environment`` file, owned by the folder's owner or by the job's), as a dict; None
    when there is none to read."""
    from gridtools.spool import jobs as jobstore
    folder = jobstore.task_dir(found.cluster, found.number)
    try:
        dirfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fd = os.open("environment", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dirfd)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_uid not in (os.fstat(dirfd).st_uid, owner.pw_uid):
                return None
            text = fh.read(ENVIRONMENT_MOST)
    except OSError:
        return None
    finally:
        os.close(dirfd)
    pairs = (line.split(b"=", 1) for line in text.split(b"\n") if b"=" in line)
    return {_text(k): _text(v) for k, v in pairs}


#: the most of a task's environment file read
ENVIRONMENT_MOST = 1 << 20
#: variables a root session leaves out of the job's environment: the dynamic linker's
#: (their names begin so), and those naming start-up files of sh and bash
UNSAFE_PREFIX = "LD_"
UNSAFE = ("BASH_ENV", "ENV")


def _text(data):
    return data.decode("utf-8", "surrogateescape")


def _process_environment(pid, started):
    """The environment of the job's process ``pid`` (None when it is not that process
    any more)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            items = fh.read().split(b"\0")
        if _ticks(pid) != started:
            return None
    except OSError:
        return None
    return {_text(k): _text(v) for k, v in (item.split(b"=", 1) for item in items if b"=" in item)}


# ---------------------------------------------------------------- the session

def main(argv, prog="condor_ssh_to_job", submitted=False):
    """``submitted``: the session condor_submit -interactive opens into its job (the
    one the job waits for, ``.condor_ssh_to_job_1``)."""
    session = _Session()
    session.submitted = submitted
    try:
        opts = parse_args(list(argv), prog)
        if opts.schedd:
            from gridtools.cli.condor.submit_more import known_schedd
            if not known_schedd(opts.schedd):
                raise GridError(f"No such schedd named {opts.schedd} in local pool", 1)
        _arm(opts)
        found, job, interactive = _wait_running(opts)
        return _session(opts, found, job, 1 if submitted or not interactive else 2, session)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except _Interrupted as exc:
        session.stop()
        if not exc.removing:
            return 128 + exc.signum
        cluster, proc = opts.job
        sys.stderr.write(f"Interrupted by signal {exc.signum} ({signal.Signals(exc.signum).name}), "
                         f"removing job {cluster}.{proc}...\n")
        sys.stderr.flush()
        _remove(opts.job)
        return 1


class _Interrupted(BaseException):
    """Signal ``signum`` came (``removing``: it removes the job)."""

    def __init__(self, signum, removing):
        super().__init__(signum)
        self.signum, self.removing = signum, removing


def _arm(opts):
    """-remove-on-interrupt: SIGINT, SIGHUP, SIGTERM and SIGQUIT (while waiting, or in the
    session) end the session and remove the job, in HTCondor's words; exit 1. Without
    it, SIGHUP and SIGTERM end the session (its directory removed), exit 128 + N."""

    removing = opts.remove_on_interrupt

    def interrupted(signum, _frame):
        for each in INTERRUPTS:
            signal.signal(each, signal.SIG_IGN)
        raise _Interrupted(signum, removing)
    for signum in INTERRUPTS if removing else (signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, interrupted)


def _remove(job):
    from gridtools.cli.condor import act
    opts = act.Options()
    opts.selection.add_word(f"{job[0]}.{job[1]}")
    opts.words.append(f"{job[0]}.{job[1]}")
    try:
        act.run(opts, "condor_rm", act.REMOVE)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
    sys.stdout.flush()


class _Session:
    """The session's process, once started: its pid, the pipe it says its directory's
    number on, and the job's owner (who removes the directory); ``submitted``: the
    session condor_submit -interactive opened, whose directory stays, without its owner
    file, for the job's waiting program to see and remove."""

    def __init__(self):
        self.child = self.report = self.owner = self.scratch = None
        self.said = None
        self.submitted = False

    def mark(self):
        """(the session's directory, the owner file's text) as the session's process
        said them; (None, None) when it made none."""
        if self.said is None:
            data = b""
            if self.report is not None:
                try:
                    while True:
                        chunk = os.read(self.report, 64)
                        if not chunk:
                            break
                        data += chunk
                except OSError:
                    pass
                os.close(self.report)
                self.report = None
            number, _, ticks = data.decode("ascii", "replace").partition(" ")
            self.said = (os.path.join(self.scratch, SESSION_PREFIX + number), f"{self.child} {ticks}") \
                if number.isdigit() and ticks.isdigit() and self.scratch else (None, None)
        return self.said

    def leave(self):
        """The session's directory goes (when it is still this session's)."""
        marker, text = self.mark()
        if marker is not None:
            _as_owner(self.owner, lambda: _leave(marker, text, keep=self.submitted))

    def stop(self):
        """An interrupt: the session's process is sent SIGHUP (as sshd's session when its
        connection closes), and its directory goes."""
        if self.child is None:
            return
        try:
            os.kill(self.child, signal.SIGHUP)
        except OSError:
            pass
        self.leave()


def _session(opts, found, job, first, session):
    """Run the shell (or the command) beside the job ``job`` ((pid, start ticks)), its
    directory the first ``.condor_ssh_to_job_N`` free from N = ``first``; its exit
    status."""
    import pwd
    pid, _started = job
    owner = pwd.getpwnam(found.owner)
    spooled = _spool_environment(found, owner)
    env = _session_environment(found, owner, job, spooled)
    scratch = (spooled or {}).get("_CONDOR_SCRATCH_DIR") or (spooled or {}).get("TMPDIR") or ""
    for name in ("TERM", "DISPLAY", "COLORTERM"):
        if name in os.environ:
            env[name] = os.environ[name]
    slot = found.host or env.get("_CONDOR_SLOT", "")
    env.update(_CONDOR_JOB_PIDS=str(pid), _CONDOR_SLOT_NAME=slot)
    greeting = f"Welcome to {slot}!\nYour condor job is running with pid(s) {pid}.\n"
    # another user's session never gets the caller's descriptors: a terminal of its own, or pipes
    streams = sessionstreams.Streams(owner) if os.geteuid() != owner.pw_uid else None
    sys.stdout.flush()
    sys.stderr.flush()
    report, told = os.pipe()
    parent = os.getpid()
    child = os.fork()
    if child == 0:                      # (the session: as the owner, in the job's directory)
        try:
            os.close(report)
            where = scratch if os.path.isabs(scratch) else None
            _start(opts, owner, env, (where, first, parent, told), greeting, streams)
        except OSError as exc:
            sys.stderr.write(f"{exc.strerror}: {exc.filename or ''}\n")
        finally:
            os._exit(127)
    os.close(told)
    session.child, session.report, session.owner, session.scratch = child, report, owner, scratch
    if streams is None:
        keys = (signal.SIGINT, signal.SIGQUIT)
        if not opts.remove_on_interrupt or opts.command:
            for signum in keys:
                signal.signal(signum, signal.SIG_IGN)  # (the terminal's keys are the session's)
        _ended(child)
        session.leave()                 # (before the process is reaped: its pid names it till then)
        status = sessionstreams.wait_child(child)
    else:
        status = streams.relay(child)
        session.leave()
    session.child = None
    return status


def _ended(child):
    """Wait until process ``child`` ended, without reaping it."""
    while True:
        try:
            os.waitid(os.P_PID, child, os.WEXITED | os.WNOWAIT)
            return
        except InterruptedError:
            continue
        except ChildProcessError:
            return


def _session_environment(found, owner, job, spooled):
    """The session's environment: the job's process's; for a job of root's, the one its
    shepherd wrote instead, without the variables that choose code to run (UNSAFE)."""
    if owner.pw_uid != 0:
        env = _process_environment(*job)
    else:
        env = None if spooled is None else {
            k: v for k, v in spooled.items() if not k.startswith(UNSAFE_PREFIX) and k not in UNSAFE}
    if env is None:
        raise GridError(f"Failed to read the environment of job {found.id}.", 1)
    return env


def _start(opts, owner, env, marking, greeting, streams):
    """In the forked child: take the session's streams, become the owner (sent SIGHUP
    when the client's process ends), mark the session (``marking``: the scratch
    directory, the first number to try, the client's pid, the pipe to say the number
    on), go to the job's directory and run the command or a shell."""
    scratch, first, parent, told = marking
    # (the modules the owner's part needs are loaded while this process is still the
    # caller's: the owner may not be able to read the interpreter's library)
    _preload()
    for signum in INTERRUPTS:
        signal.signal(signum, signal.SIG_DFL)
    if streams is not None:
        streams.attach()
    _become(owner)
    _hang_up_with(parent)
    os.closerange(3, told)
    os.closerange(told + 1, os.sysconf("SC_OPEN_MAX"))
    if scratch:
        made = _enter(scratch, first)
        if made is not None:
            os.write(told, f"{made[0]} {made[1]}".encode("ascii"))
    os.close(told)
    _go_to(env)
    if opts.command:
        os.execve("/bin/sh", ["sh", "-c", " ".join(opts.command)], env)
    sys.stdout.write(greeting)
    sys.stdout.flush()
    shells = [s for s in opts.shells.split(",") if s] + [env.get("SHELL", ""), owner.pw_shell, "/bin/sh"]
    for shell in (s for s in shells if s and os.access(s, os.X_OK)):
        os.execve(shell, ["-" + os.path.basename(shell)], env)
    sys.stderr.write("no shell could be started\n")


#: the modules the session's process needs once it is the owner's (``_enter``,
#: ``_hang_up_with``, ``_leave``)
OWNER_MODULES = ("ctypes", "errno", "tempfile", "encodings.ascii")


def _preload():
    """Load OWNER_MODULES while the process may still read the interpreter's library."""
    for name in OWNER_MODULES:
        __import__(name)


#: prctl's option that names the signal a process gets when its parent ends
PR_SET_PDEATHSIG = 1


def _hang_up_with(parent):
    """This process is sent SIGHUP when the client's process (``parent``) ends, whatever
    ends it; it ends now when that happened already."""
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGHUP), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(129)


def _become(owner):
    """Root's process becomes the owner's: uids, gids and the owner's groups."""
    if os.geteuid() == 0 and owner.pw_uid != 0:
        os.initgroups(owner.pw_name, owner.pw_gid)
        os.setgid(owner.pw_gid)
        os.setuid(owner.pw_uid)


def _as_owner(owner, action):
    """Do ``action`` with the owner's rights: root does it in a child that became the
    owner (``_become``); anyone else in this process."""
    if os.geteuid() != 0 or owner.pw_uid == 0:
        action()
        return
    child = os.fork()
    if child == 0:
        try:
            for signum in INTERRUPTS:
                signal.signal(signum, signal.SIG_DFL)
            _become(owner)
            action()
        finally:
            os._exit(0)
    sessionstreams.wait_child(child)


#: the most session directories a job's scratch directory is searched for a free number in
MOST_SESSIONS = 1000


def _enter(scratch, first):
    """In the session's process, as the owner: the session's directory, made with its
    owner file (this process's pid and start time) and then given the first name
    ``.condor_ssh_to_job_N`` free from N = ``first`` (a stale one, whose owner has
    ended, is taken again). (N, the start time), or None when none could be made."""
    import tempfile
    ticks = _ticks(os.getpid())
    try:
        made = tempfile.mkdtemp(prefix=".condor_ssh_to_job.new.", dir=scratch)
    except OSError:
        return None
    try:
        with open(os.path.join(made, OWNER_FILE), "w", encoding="ascii") as fh:
            fh.write(f"{os.getpid()} {ticks}\n")
        number, tries = first, 0
        while number < first + MOST_SESSIONS and tries < 2 * MOST_SESSIONS:
            tries += 1
            path = os.path.join(scratch, f"{SESSION_PREFIX}{number}")
            if _rename_new(made, path):
                return number, ticks
            owned = _owner_of(path)
            if owned is not None and _ticks(owned[0]) != owned[1]:
                _leave(path, f"{owned[0]} {owned[1]}")  # (stale: its session ended without removing it)
                if not os.path.lexists(path):
                    continue
            number += 1
    except OSError:
        pass
    _leave(made, f"{os.getpid()} {ticks}")
    return None


#: renameat2's flag: fail when the new name is taken
RENAME_NOREPLACE = 1
AT_FDCWD = -100


def _rename_new(source, target):
    """Rename ``source`` to ``target`` unless ``target`` is there (even an empty
    directory); False when it is, OSError for another failure."""
    import ctypes
    import errno
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done = libc.renameat2(AT_FDCWD, os.fsencode(source), AT_FDCWD, os.fsencode(target), RENAME_NOREPLACE)
        failure = ctypes.get_errno()
    except (OSError, AttributeError):
        done, failure = -1, errno.ENOSYS
    if done == 0:
        return True
    if failure in (errno.EEXIST, errno.ENOTEMPTY):
        return False
    if failure not in (errno.ENOSYS, errno.EINVAL):
        raise OSError(failure, os.strerror(failure), target)
    if os.path.lexists(target):         # (no renameat2 here: look first)
        return False
    os.rename(source, target)
    return True


def _owner_of(marker):
    """(pid, start ticks) the owner file of session directory ``marker`` names; None
    when it has none (a directory this command did not make)."""
    try:
        fd = os.open(os.path.join(marker, OWNER_FILE), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            pid, ticks = os.read(fd, 64).split()
        finally:
            os.close(fd)
        return int(pid), int(ticks)
    except (OSError, ValueError):
        return None


def _leave(marker, text, keep=False):
    """Remove session directory ``marker`` when its owner file says ``text`` (pid and
    start time): a session's own, or a stale one; another's is left alone. ``keep``:
    only its owner file goes (the directory, a sign the session was and has ended, is
    left to the job's waiting program, which may not have seen it yet)."""
    owned = _owner_of(marker)
    if owned is None or f"{owned[0]} {owned[1]}" != text:
        return
    try:
        os.unlink(os.path.join(marker, OWNER_FILE))
        if not keep:
            os.rmdir(marker)
    except OSError:
        pass


def _go_to(env):
    """Go to the job's directory (its Iwd, else the scratch directory)."""
    for folder in (env.get("_CONDOR_JOB_IWD"), env.get("_CONDOR_SCRATCH_DIR"), env.get("PWD")):
        if folder:
            try:
                os.chdir(folder)
                env["PWD"] = folder
                return
            except OSError:
                continue


def _interactive(found, snap):
    """True for a job submitted with condor_submit -interactive (InteractiveJob)."""
    from gridtools.cli.condor import queue
    source = queue.AdSource(snap, queue.me())
    try:
        return source.ad(found).eval("InteractiveJob") is True
    except Exception:  # noqa: BLE001 - an ad that cannot say: not interactive
        return False
