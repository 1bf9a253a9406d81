"""The job process: starting it as its owner, signalling it, and its limits.

``spawn_job(plan)`` forks; the child puts itself in its own process group,
sets resource limits, drops to the job owner's uid/gid/groups when running
as root, changes to the working directory, opens stdin/stdout/stderr and
executes the job. A failure before exec travels back through a close-on-exec
pipe as a Grid Engine failure code (26 opening an input or output file, 27
shell, 28 working directory) so the task can go to the error state (Eqw),
with the step that failed (``STEPS``), the path and the errno, from which
each dialect words it (``start_failure`` of the task's result).

An interactive job whose client asked for a pseudo terminal (``PTY_VARIABLE``,
``pty_request``) runs on one, as Grid Engine's shepherd runs qlogin: the job
process opens the FIFOs and a pty with the owner's rights, forks the job as the
leader of a new session whose controlling terminal (and stdin, stdout and
stderr) is the pty's slave, and itself copies the stdin FIFO to the pty's
master and the master to the stdout FIFO until the job ended and its output is
drained (``_run_on_pty``); it then exits as the job did.
"""

import _thread
import errno
import fcntl
import os
import pwd
import resource
import select
import signal
import stat
import struct
import sys
import termios

FAILED_OPEN = 26
FAILED_SHELL = 27
FAILED_CHDIR = 28
FAILED_BEFORE_JOB = 11

#: the steps of a job's start that can fail: its working directory, its three streams,
#: the exec of its command
STEP_CWD, STEP_STDIN, STEP_STDOUT, STEP_STDERR, STEP_EXEC = "cwd", "stdin", "stdout", "stderr", "exec"
STEPS = (STEP_CWD, STEP_STDIN, STEP_STDOUT, STEP_STDERR, STEP_EXEC)
#: the failure code of each step
_STEP_CODES = {STEP_CWD: FAILED_CHDIR, STEP_STDIN: FAILED_OPEN, STEP_STDOUT: FAILED_OPEN,
               STEP_STDERR: FAILED_OPEN, STEP_EXEC: FAILED_SHELL}
#: Grid Engine's words for a step that failed (the shepherd's error line): the path,
#: then the errno's text when the words end in ":"
_STEP_WORDS = {STEP_CWD: "can't chdir to {}:", STEP_STDIN: "can't open {} as dummy input file",
               STEP_STDOUT: "can't open output file \"{}\":", STEP_STDERR: "can't open output file \"{}\":",
               STEP_EXEC: "can't execute {}:"}
#: how a stream's path failed before it was opened (``resolve_streams``): its stat()
#: failed otherwise than for a missing file (the text carries the errno's and the
#: identity's, as Grid Engine's build_path writes them), or stdin is a directory
KIND_OPEN, KIND_STAT, KIND_DIR = "open", "stat", "dir"
#: the name of a stream's path in Grid Engine's stat() failure
_STREAM_CONF = {STEP_STDIN: "stdin_path", STEP_STDOUT: "stdout_path", STEP_STDERR: "stderr_path"}


class StartFailed(Exception):
    """A step of a job's start failed: ``step`` (STEPS), the ``path`` it concerned, the
    ``errno`` and its text; ``code`` is Grid Engine's failure code of the step.
    ``kind`` (KIND_*) tells how a stream failed: its open, its stat() or, for stdin,
    its being a directory."""

    def __init__(self, step, path, err, text, kind=KIND_OPEN):
        super().__init__(step, path, err, text)
        self.step, self.path, self.errno, self.text = step, str(path), int(err or 0), text
        self.kind = kind or KIND_OPEN
        self.code = _STEP_CODES.get(step, FAILED_BEFORE_JOB)

    @classmethod
    def of(cls, step, path, exc):
        return cls(step, path, exc.errno, exc.strerror or str(exc))

    def reason(self):
        """The failure in the words of Grid Engine's shepherd."""
        if self.kind == KIND_STAT:
            return f"can't stat() \"{self.path}\" as {_STREAM_CONF.get(self.step, 'path')}: {self.text}"
        if self.kind == KIND_DIR:
            return f"\"{self.path[:100]}\" is a directory not a file"
        words = _STEP_WORDS.get(self.step)
        if not words:
            return f"before job: {self.text}"
        words = words.format(self.path)
        return f"{words} {self.text}" if words.endswith(":") else words

    def failure(self, code=None):
        """The failure as a task's result records it."""
        return {"code": self.code if code is None else code, "reason": self.reason(), "step": self.step,
                "path": self.path, "errno": self.errno}

    def encode(self):
        return f"{self.step}\0{self.errno}\0{self.path}\0{self.kind}\0{self.text}"

    @classmethod
    def decode(cls, text):
        step, err, path, kind, words = (text.split("\0", 4) + ["", "", "", ""])[:5]
        return cls(step, path, int(err) if err.isdigit() else 0, words, kind)

_RLIMITS = {
    "h_cpu": resource.RLIMIT_CPU, "h_fsize": resource.RLIMIT_FSIZE,
    "h_data": resource.RLIMIT_DATA, "h_stack": resource.RLIMIT_STACK,
    "h_core": resource.RLIMIT_CORE, "h_rss": resource.RLIMIT_RSS, "h_vmem": resource.RLIMIT_AS,
}
_SOFT_OF = {"h_cpu": "s_cpu", "h_fsize": "s_fsize", "h_data": "s_data", "h_stack": "s_stack",
            "h_core": "s_core", "h_rss": "s_rss", "h_vmem": "s_vmem"}


def _as_limit(value):
    if value is None or value == float("inf"):
        return resource.RLIM_INFINITY
    return max(0, int(value))


def apply_limits(limits, lift=False):
    """setrlimit for every limit the plan carries (soft = s_*, hard = h_*). ``lift``: a
    limit that is INFINITY both ways is lifted (as far as the process may: its soft
    limit to its hard one), as Grid Engine's shepherd sets the queue's INFINITY, so that
    a job does not keep the soft limits the daemon was started with (no core files, an
    8 MB stack); else it is left as it is."""
    for name, which in _RLIMITS.items():
        hard = _as_limit(limits.get(name))
        soft = _as_limit(limits.get(_SOFT_OF[name]))
        if soft == resource.RLIM_INFINITY or (hard != resource.RLIM_INFINITY and soft > hard):
            soft = hard
        if hard == resource.RLIM_INFINITY and soft == resource.RLIM_INFINITY:
            if lift:
                _lift(which)
            continue
        try:
            cur_soft, cur_hard = resource.getrlimit(which)
            if cur_hard != resource.RLIM_INFINITY:
                hard = min(hard, cur_hard) if hard != resource.RLIM_INFINITY else cur_hard
                soft = min(soft, hard) if soft != resource.RLIM_INFINITY else hard
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def _lift(which):
    try:
        resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError):           # (not root: as far as the hard limit goes)
        try:
            resource.setrlimit(which, (resource.getrlimit(which)[1],) * 2)
        except (ValueError, OSError):
            pass


def become_owner(plan):
    """Drop to the job owner's identity when running as root for another user."""
    uid, gid = plan["uid"], plan["gid"]
    if os.geteuid() != 0 or uid == 0:
        return
    os.initgroups(plan["owner"], gid)
    os.setgid(gid)
    os.setuid(uid)


def open_streams(plan):
    """Descriptors of the job's stdin, stdout and stderr (stderr is stdout's when they
    are joined); StartFailed names the stream that could not be opened. Output files
    are appended to (Grid Engine's way), but those of ``plan["truncate"]`` (an
    HTCondor job's, see daemon.condorjob) are emptied first, as HTCondor's starter
    does at each start: when that open fails, the file is opened again without
    truncating it. The folders of ``plan["stream_dirs"]`` (an HTCondor job's
    output_directory) are made first (private to the owner), their parents too, by
    ``ownfiles.makedirs_own`` (no link another user planted is followed). A failure
    ``resolve_streams`` found (``plan["stream_failure"]``) is raised first."""
    from gridtools.ownfiles import makedirs_own
    found = plan.get("stream_failure")
    if found:
        raise StartFailed(found["step"], found["path"], found["errno"], found["text"], found["kind"])
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    truncate = plan.get("truncate") or ()
    for folder in plan.get("stream_dirs") or ():
        try:
            makedirs_own(folder, 0o700)
        except OSError as exc:
            raise StartFailed.of(STEP_STDOUT, folder, exc) from None
    opened = []
    try:
        for step, how in ((STEP_STDIN, os.O_RDONLY), (STEP_STDOUT, flags), (STEP_STDERR, flags)):
            if step == STEP_STDERR and plan.get("join"):
                opened.append(opened[1])
                continue
            try:
                if step in truncate:
                    try:
                        opened.append(open_stream(plan[step], how | os.O_TRUNC))
                        continue
                    except OSError:
                        pass
                opened.append(open_stream(plan[step], how))
            except OSError as exc:
                raise StartFailed.of(step, plan[step], exc) from None
    except StartFailed:
        for fd in set(opened):
            os.close(fd)
        raise
    return opened


def open_stream(path, how):
    """Open one of the job's files as its owner (``ownfiles.open_own``: a link another
    user planted in a sticky folder anyone may write to is not followed, in any part of
    the path). A path that ends in "/" names a directory, which is no file to write:
    EISDIR (ENOTDIR when it names a file), as open(2) would say."""
    from gridtools.ownfiles import open_own
    if path.endswith("/") and how & (os.O_WRONLY | os.O_RDWR):
        try:
            os.stat(path)
        except FileNotFoundError:
            pass
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    return open_own(path, how)


def chdir_to(cwd):
    """Change to a working directory (``ownfiles.chdir_own``: a link another user planted
    in a sticky folder anyone may write to is not followed, in any part of the path);
    StartFailed (STEP_CWD) when that fails."""
    from gridtools.ownfiles import chdir_own
    try:
        chdir_own(cwd)
    except OSError as exc:
        raise StartFailed.of(STEP_CWD, cwd, exc) from None


def _child(plan, wfd):
    """In the forked child: prepare and exec the job; never returns."""
    exec_or_report(lambda: _start_job(plan, wfd), wfd)


#: the variable of an interactive job's environment by which its client (qrsh) asks for a
#: pseudo terminal: "<rows> <columns> <echo>" (its size, 0 0 when not known; echo 0 when
#: the client's own input is no terminal, so that the pty does not send its input back).
#: Taken out of the environment before the job runs.
PTY_VARIABLE = "GRIDTOOLS_QRSH_PTY"
#: seconds the output of a job on a pty is still waited for once the job ended (a process
#: it left running may keep the pty open)
PTY_DRAIN = 0.2


def pty_request(plan):
    """(rows, columns, echo) of the pty an interactive job is to run on, else None."""
    if not plan.get("interactive"):
        return None
    text = (plan.get("env") or {}).get(PTY_VARIABLE)
    if text is None:
        return None
    try:
        rows, cols, echo = (int(word) for word in (text.split() + ["0", "0", "1"])[:3])
    except ValueError:
        rows, cols, echo = 0, 0, 1
    return min(max(rows, 0), 0xffff), min(max(cols, 0), 0xffff), bool(echo)


def _start_job(plan, wfd=None):
    """The job's side of its start: its identity, limits, directory and streams, then
    its program (``_child``), on a pty when its client asked for one (``_run_on_pty``)."""
    pty = pty_request(plan)
    if pty is not None:
        plan["env"] = {key: value for key, value in plan["env"].items() if key != PTY_VARIABLE}
    os.setpgid(0, 0)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
                signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    if plan.get("nice"):
        os.nice(int(plan["nice"]))
    apply_limits(plan.get("limits") or {}, lift=bool(plan.get("lift_limits")))
    if plan.get("cgroup_procs"):
        from gridtools.exec import cgroups
        cgroups.join(plan["cgroup_procs"])     # (the shepherd sees whether it did)
    become_owner(plan)
    chdir_to(plan["cwd"])
    opened = open_streams(plan)
    if pty is not None:
        _run_on_pty(plan, opened, pty, wfd)
    for target, fd in enumerate(opened):
        if fd != target:
            os.dup2(fd, target)
    for fd in set(opened):
        if fd > 2:
            os.close(fd)
    _exec_job(plan)


def _exec_job(plan):
    """Execute the job's program (its streams in place)."""
    try:
        exec_program(plan["exec"], plan["argv"], plan["env"], search=bool(plan.get("exec_search")))
    except StartFailed as exc:
        if plan.get("exec_failure") != "qrsh_starter":
            raise
        # a qrsh -inherit -noshell task: said on the task's stderr and exit 1 (EXIT_FAILURE),
        # as Grid Engine's qrsh_starter reports a child it could not execute
        os.write(2, f"qrsh_starter: executing child process {plan['argv'][0]} failed: "
                    f"{os.strerror(exc.errno or errno.ENOENT)}\n".encode())
        os._exit(1)


def _run_on_pty(plan, opened, pty, wfd):
    """Run the job on a new pty (opened with the owner's rights: its slave is the
    owner's, mode 0620) whose size is ``pty[:2]`` and whose output keeps its line ends
    (no NL to CR NL, as Grid Engine's shepherd sets it; the client's terminal adds the
    CRs); without echo when ``pty[2]`` is false. The job is forked as the leader of a
    new session with the pty as its controlling terminal; this process relays between
    the FIFOs ``opened`` and the pty's master, passes the signals the shepherd sends
    it on to the job (FORWARDED), and exits as the job did. Never returns
    (in the job's process, it returns into the exec of the job: ``_exec_job``)."""
    rows, cols, echo = pty
    master, slave = os.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR
    if not echo:
        attrs[3] &= ~(termios.ECHO | termios.ECHOE | termios.ECHOK | termios.ECHONL)
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    if rows and cols:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    pid = os.fork()
    if pid == 0:
        os.close(master)
        for fd in set(opened):
            os.close(fd)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for target in (0, 1, 2):
            os.dup2(slave, target)
        if slave > 2:
            os.close(slave)
        _exec_job(plan)
        os._exit(1)                         # (_exec_job returns only by raising)
    for sig in FORWARDED:
        signal.signal(sig, lambda number, _frame: _signal_job(pid, number))
    status = 1 << 8
    try:
        if wfd is not None:
            os.close(wfd)                   # (the job's exec closes the failure pipe)
        os.close(slave)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        status = _relay_pty(master, pid, opened[0], opened[1])
    finally:
        _exit_as(status)


#: signals the relay of a job on a pty passes on to the job (the shepherd signals the
#: process it started, which is the relay: -notify's SIGUSR1 and SIGUSR2, a kill's
#: SIGTERM, ...); SIGSTOP and SIGKILL reach the job with its process tree
FORWARDED = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT, signal.SIGHUP,
             signal.SIGQUIT, signal.SIGALRM, signal.SIGXCPU, signal.SIGCONT)


def _signal_job(job, number):
    """Send signal ``number`` to the job's session (its process group)."""
    try:
        os.killpg(job, number)
    except OSError:
        pass


def _relay_pty(master, child, source, sink):
    """Copy ``source`` (the stdin FIFO) to the pty's ``master`` and the master to
    ``sink`` (the stdout FIFO) until the job ``child`` ended and the pty's output is
    drained (EIO once no process holds the slave, or nothing more comes within
    PTY_DRAIN); returns the job's wait status. The end of the input is the terminal's
    end of file (its VEOF character); a client that went away (EPIPE) hangs the job's
    terminal up (SIGHUP to its session)."""
    os.set_blocking(master, False)
    pidfd = os.pidfd_open(child)
    eof = termios.tcgetattr(master)[6][termios.VEOF] or b"\x04"
    pending, reading, status, talking, output = b"", True, None, True, True
    while True:
        wanted = ([master] if output else []) + ([pidfd] if status is None else [])
        if reading and not pending and status is None:
            wanted.append(source)
        writable = [master] if pending and output and status is None else []
        if not wanted and not writable:
            break
        ready, can_write, _ = select.select(wanted, writable, [], None if status is None else PTY_DRAIN)
        if not ready and not can_write:
            break                           # (the job ended; what holds its pty says nothing)
        if pidfd in ready:
            status = os.waitpid(child, 0)[1]
            os.close(pidfd)
            pending, reading = b"", False
        if source in ready:
            data = os.read(source, 65536)
            pending += data if data else eof
            reading = bool(data)
        if master in can_write and pending:
            try:
                pending = pending[os.write(master, pending):]
            except BlockingIOError:
                pass
            except OSError:
                pending, reading = b"", False
        if master in ready:
            try:
                data = os.read(master, 65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""                  # EIO: no process holds the slave any more
            if not data:
                output = False
            elif talking:
                talking = _write_all(sink, data)
                if not talking:
                    try:
                        os.killpg(child, signal.SIGHUP)
                    except OSError:
                        pass
    return status if status is not None else os.waitpid(child, 0)[1]


def _write_all(fd, data):
    """Write all of ``data`` to ``fd``; False when its reader went away."""
    while data:
        try:
            data = data[os.write(fd, data):]
        except OSError:
            return False
    return True


def _exit_as(status):
    """Exit as a process whose wait status was ``status`` did: by its signal, else with
    its exit code."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def exec_program(path, argv, env, search=False):
    """Execute a program (found on env's PATH with ``search``); StartFailed (STEP_EXEC)
    when that fails."""
    try:
        if search:
            os.execvpe(path, argv, env)
        else:
            os.execve(path, argv, env)
    except OSError as exc:
        raise StartFailed.of(STEP_EXEC, path, exc) from None


def exec_or_report(start, wfd):
    """In a forked child: ``start()`` ends by executing a program; when it fails
    instead, tell the parent why through ``wfd`` and exit (``exit_failed``). Never
    returns."""
    try:
        start()
        failed = StartFailed("", "", 0, "the program returned")
    except StartFailed as exc:
        failed = exc
    except OSError as exc:
        failed = StartFailed("", "", exc.errno, exc.strerror or str(exc))
    except BaseException as exc:  # noqa: BLE001
        failed = StartFailed("", "", 0, str(exc))
    exit_failed(failed, wfd)


def exit_failed(failed, wfd):
    """In a forked child that failed before its exec: tell the parent, and exit."""
    code = failed.code
    if failed.step == STEP_EXEC and failed.errno in (errno.ENOENT, errno.EACCES, errno.ENOEXEC):
        # the command is missing or not executable: exit as a shell would
        code = 127 if failed.errno == errno.ENOENT else 126
    try:
        os.write(wfd, f"{code} {failed.encode()}".encode())
    finally:
        os._exit(code if code < 256 else 1)


DEFAULT_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGINT,
                    signal.SIGPIPE, signal.SIGXFSZ, signal.SIGCHLD)


def _has_limits(plan):
    return any(v is not None and v != float("inf") for v in (plan.get("limits") or {}).values())


def can_spawn_directly(plan):
    """True when the job needs no identity change and no resource limits, and none of
    its streams is a FIFO: then it is started with posix_spawn, which costs far less
    than forking the shepherd. (Opening a FIFO waits for its other end, a qrsh client's:
    only a forked job process waits there, while the shepherd stays free to obey its
    signals.)"""
    same_user = os.geteuid() != 0 or plan["uid"] == 0
    return same_user and not _has_limits(plan) and pty_request(plan) is None and not _fifo_streams(plan)


def _fifo_streams(plan):
    """True when one of the job's streams is a FIFO, looked at with the owner's rights."""
    with owner_rights(plan):
        for key in ("stdin", "stdout", "stderr"):
            try:
                if stat.S_ISFIFO(os.stat(plan[key]).st_mode):
                    return True
            except (OSError, KeyError, TypeError, ValueError):
                continue
    return False


def resolve_streams(plan):
    """Check the job's stream paths of the user's choosing (``plan["stream_names"]``,
    see ``exec.plan.output_path``) as Grid Engine's shepherd does (build_path) before
    it starts the job: an output path that is an existing directory gets the default
    file name inside it (``path/name``); any other path stays as written. A path whose
    stat() fails otherwise than for a missing file, or a stdin path that is a
    directory, fails the job's start: ``plan["stream_failure"]``, which
    ``open_streams`` raises. stderr is not looked at when it is joined to stdout.
    Looked at with the job owner's rights, so that nobody learns through it what lies
    in a folder closed to them, and walked as the files are opened
    (``ownfiles.is_own_dir``): a link another user planted is no folder (the open of
    the path then fails). SGE_STDOUT_PATH and SGE_STDERR_PATH follow (with -j y,
    SGE_STDERR_PATH is the stdout path)."""
    names = plan.get("stream_names") or {}
    if not names:
        return
    from gridtools.ownfiles import is_own_dir
    failure = None
    with owner_rights(plan):
        for key, name in names.items():
            path = plan.get(key)
            if not path or (key == STEP_STDERR and plan.get("join")):
                continue
            if key in _STREAM_CONF and failure is None:
                failure = _stat_failure(plan, key, path)
                if failure is not None:
                    continue
            if is_own_dir(path):
                if key == STEP_STDIN:
                    failure = failure or {"step": key, "path": path, "errno": errno.EISDIR,
                                          "text": os.strerror(errno.EISDIR), "kind": KIND_DIR}
                else:
                    plan[key] = path + "/" + name
    if failure is not None:
        plan["stream_failure"] = failure
    for key, var in (("stdout", "SGE_STDOUT_PATH"), ("stderr", "SGE_STDERR_PATH")):
        key = "stdout" if plan.get("join") else key
        if key in names:
            for env in (plan.get("env"), plan.get("proc_env")):
                if env is not None:
                    env[var] = plan[key]
    plan["stream_names"] = {}


def _stat_failure(plan, key, path):
    """The start failure of a stream path whose stat() fails otherwise than for a missing
    file (None when it does not), with Grid Engine's account of the identity that
    looked: the job's KRB5CCNAME (its environment is in place there before the check),
    the uid, the gid and the groups (none when there are more than ten, which its
    getgroups call does not take)."""
    try:
        os.stat(path)
        return None
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        err = exc.errno or 0
    try:
        groups = os.getgrouplist(plan["owner"], plan["gid"])
    except (KeyError, OSError):
        groups = [plan["gid"]]
    groups = groups if len(groups) <= 10 else []
    text = (f"{os.strerror(err)} KRB5CCNAME={(plan.get('env') or {}).get('KRB5CCNAME') or 'none'} "
            f"uid={plan['uid']} gid={plan['gid']} " + "".join(f"{g} " for g in groups))
    return {"step": key, "path": path, "errno": err, "text": text, "kind": KIND_STAT}


def spawn_directly(plan):
    """posix_spawn the job from the shepherd; returns (pid, None) or (None, failure) (see
    ``StartFailed.failure``), or (None, None) when posix_spawn could not (fork then)."""
    try:
        chdir_to(plan["cwd"])
        opened = open_streams(plan)
    except StartFailed as exc:
        return None, exc.failure()
    try:
        if plan.get("nice"):
            os.nice(int(plan["nice"]))
        actions = [(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(opened)]
        pid = os.posix_spawn(plan["exec"], plan["argv"], plan["env"], file_actions=actions,
                             setpgroup=0, setsigdef=DEFAULT_SIGNALS, setsigmask=())
    except OSError:
        pid = None
    finally:
        for fd in set(opened):
            os.close(fd)
    return pid, None


def spawn_job(plan):
    """Fork the job process; returns (pid, read end of the failure pipe)."""
    rfd, wfd = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        _child(plan, wfd)
    os.close(wfd)
    try:
        os.setpgid(pid, pid)            # as the child does: its group exists from now on
    except OSError:
        pass                            # (it did, and may have executed the job already)
    return pid, rfd


def read_to_end(fd):
    """All that can be read from ``fd`` until its writers close it; ``fd`` is closed."""
    chunks = []
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def read_spawn_failure(rfd, strict=False):
    """The failure (see ``StartFailed.failure``) if the child failed before its job ran,
    else None (the pipe closed on exec). A command that is missing or not executable
    is a job that ran and exited 127 or 126, as under a shell, unless ``strict``: then
    it is a failure of the exec."""
    data = read_to_end(rfd)
    if not data:
        return None
    text = data.decode(errors="replace")
    code, _, detail = text.partition(" ")
    code = int(code)
    if code in (126, 127) and not strict:
        return None
    failed = StartFailed.decode(detail)
    return failed.failure(failed.code if code in (126, 127) else code)


def signal_job(pid, sig):
    """Send ``sig`` to the job's process group, and, when the job is this process's
    child, to the processes of the job that left the group (``exec.leftovers``: they
    are this process's descendants), so that suspending, warning or ending a job
    reaches all of it."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass
    try:
        if stat_fields(pid)[1] != str(os.getpid()).encode():
            return
    except (OSError, IndexError):
        return
    from gridtools.exec.leftovers import descendants
    for other in descendants(os.getpid()):
        try:
            if os.getpgid(other) != pid:
                os.kill(other, sig)
        except OSError:
            pass


def signal_named(name, default):
    """The signal called ``name`` (``SIGUSR1``, ``usr1``, ``10``), else ``default``."""
    if name and str(name).isdigit():
        return signal.Signals(int(name)) if int(name) in signal.valid_signals() else default
    return _signal_named(name, default)


def _signal_named(name, default):
    if not name:
        return default
    name = name.upper()
    if not name.startswith("SIG"):
        name = "SIG" + name
    return getattr(signal, name, default)


def kill_group(pgid, ticks):
    """SIGKILL a process group left behind by a shepherd that was killed; True if sent.

    The group is known by its leader's pid and start time. A leader that still
    exists must have that start time (else its pid was reused: not ours); one
    that is gone leaves its id unusable for new processes while any member of
    its group lives, so the group can still be signalled safely.
    """
    if pgid <= 1:
        return False
    now = start_ticks(pgid)
    if now and now != ticks:
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_members(pgid):
    """Pids of the processes of group ``pgid`` that still live (zombies do not count:
    they hold nothing but their entry, and may wait long for a parent to reap them)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
            fields = data[data.rindex(b")") + 2:].split()
            if fields[0] != b"Z" and int(fields[2]) == pgid:
                found.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return found


#: held while the process has taken a job owner's identity (``owner_rights``): a thread
#: of the daemon's that starts processes (``daemon.serverjsv``) waits for it to end
IDENTITY = _thread.RLock()


def _fork_begins():
    """Before a fork: wait until no other thread holds ``IDENTITY``, and hold it across the
    fork, so that the child neither starts with an owner's identity taken by another thread
    nor inherits the lock held by a thread it does not have (which would stop it for ever
    at its first ``owner_rights``)."""
    IDENTITY.acquire()


def _fork_ended_in_parent():
    IDENTITY.release()


def _fork_ended_in_child():
    """The child's only thread is the one that forked: it starts with a lock of its own,
    free, shared again with the JSV module's starts and kills when the parent shared it."""
    global IDENTITY
    old, IDENTITY = IDENTITY, _thread.RLock()
    jsv = sys.modules.get("gridtools.cli.sge.jsv")
    if jsv is not None and getattr(jsv, "CREDENTIALS", None) is old:
        jsv.CREDENTIALS = IDENTITY


os.register_at_fork(before=_fork_begins, after_in_parent=_fork_ended_in_parent,
                    after_in_child=_fork_ended_in_child)


class owner_rights:
    """``with owner_rights(plan):`` the file system sees the job owner (effective uid,
    gid and the owner's groups) instead of root; nothing changes for a shepherd that
    is not root or a job of root's. The identity is the whole process's: ``IDENTITY``
    is held meanwhile."""

    def __init__(self, plan):
        self.plan = plan
        self.saved = None

    def __enter__(self):
        plan = self.plan
        if os.geteuid() != 0 or plan["uid"] == 0:
            return self
        IDENTITY.acquire()
        try:
            self.saved = (os.getgroups(), os.getegid())
            try:
                owner_groups = os.getgrouplist(plan["owner"], plan["gid"])
            except (KeyError, OSError):
                owner_groups = [plan["gid"]]
            os.setgroups(owner_groups)
            os.setegid(plan["gid"])
            os.seteuid(plan["uid"])
        except BaseException:
            if self.saved is not None:
                self.__exit__()         # (root's identity back, the lock let go)
            else:
                IDENTITY.release()
            raise
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            try:
                os.seteuid(0)
                os.setegid(self.saved[1])
                os.setgroups(self.saved[0])
            finally:
                self.saved = None
                IDENTITY.release()


def open_as_owner(plan, path):
    """Open the job's output file for appending with the job owner's rights (uid, gid and
    the owner's groups, never root's), so that a procedure run before the job creates it
    as the job itself would; opened as the job's own files are (``open_stream``), so that
    a link another user planted on its path is not followed, for a job of root's too
    (whose procedures' output is opened as root). /dev/null when it cannot be opened.
    The open never waits: a FIFO without a reader is no output (the shepherd that opens
    it would wait for good, its task's signals and methods with it); once open, writes
    to it wait as the job's own would."""
    with owner_rights(plan):
        try:
            fd = open_stream(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK)
        except OSError:
            return open(os.devnull, "ab")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "ab")


def stat_fields(pid):
    """The fields of /proc/PID/stat after the command's name, its state first (the start
    time in clock ticks since boot is [19]); OSError when it cannot be read."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        data = fh.read()
    return data[data.rindex(b")") + 2:].split()


def start_ticks(pid):
    """A process's start time in clock ticks since boot (/proc/PID/stat field 22); 0 if gone."""
    try:
        return int(stat_fields(pid)[19])
    except OSError:
        return 0


def home_of(user):
    try:
        return pwd.getpwnam(user).pw_dir
    except KeyError:
        return "/"
