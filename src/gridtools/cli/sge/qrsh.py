"""qrsh: run a command through the queue with its input and output attached.

The command becomes an interactive job (it needs a queue of type
INTERACTIVE). Its stdin, stdout and stderr are three FIFOs in a private
folder that qrsh creates; qrsh copies its own standard input into the first
and the job's output out of the other two, and ends with the command's exit
status. By default the job must start at once (``-now y``): if no slot is
free, qrsh says the request could not be scheduled and exits 1; with
``-now n`` it waits in the queue like a batch job.

The command runs as Grid Engine's qrsh_starter runs it: ``<the owner's login
shell> -c "<its words joined by blanks>"`` (``exec.plan``), or through the
program the caller's QRSH_WRAPPER names; QRSH_COMMAND holds its words joined by
the byte 0xff. Only the options Grid Engine's qrsh takes are taken (``TAKEN``):
any other on the command line is refused with its ``error: Unknown option -t``,
exit 1; in the sge_request files and the script's directives it is dropped
unread, as Grid Engine's qrsh drops it (-t, -a, -dl, -sync, -terse ...).

A qrsh ended by a signal (interrupt, termination, hangup, quit) or whose
terminal or output went away deletes its job, as qdel does, whether the job
still waits or runs, and ends with the status a shell gives for that signal
(128 + its number); but an interrupt or termination while the job still waits
to be scheduled cancels the request as Grid Engine's qrsh does (its words, exit
1), and a job deleted while it waits is said to be unschedulable (exit 1). The
job also names its client (``exec.client``), so that its shepherd gives it up
when qrsh ended without a word (SIGKILL), and removes the FIFOs' folder.

qrsh's own options: ``-noshell`` runs the command directly, not through the
job's shell (as ``-shell n``); ``-nostdin`` gives the job /dev/null for its
input and reads nothing; ``-verbose`` says, in Grid Engine's words, that the
job was submitted, that qrsh waits for it and where it started; ``-pty y``
runs the job on a pseudo terminal, ``-pty n`` never.

Without -pty, a login session (qlogin, qrsh without a command) whose input is a
terminal runs on a pseudo terminal, as Grid Engine's qlogin does; a command
does not (Grid Engine's default for a "QRSH" job), nor a session fed from a
file or a pipe. On a pty the job's stdout and stderr are one stream, its stdin
a terminal (``tty`` names it; the job's shell has job control); the job
process opens it with the owner's rights and relays it to the FIFOs
(``exec.jobproc``). The pty has the size of qrsh's terminal, and echoes only
when qrsh's input is a terminal; qrsh then puts its terminal in raw mode
(output processing kept) until it ends, however it ends. A change of the
terminal's size after the start is not passed on. TERM is the caller's.

qlogin is qrsh without a command, as in Grid Engine: an interactive shell in
a job named QLOGIN, told verbosely (as qrsh -verbose); a word that is not an
option is refused.
"""

import contextlib
import errno
import os
import select
import shutil
import signal
import sys
import tempfile
import termios
import tty

from gridtools.cli.ask import tell
from gridtools.cli.sge import options, submit
from gridtools.errors import GridError, UsageError

POLL = 0.05
#: the failures (accounting's ``failed``) of a job whose command never ran: its prolog,
#: its PE's start procedure, its shell, its working directory, its streams
NOT_STARTED = (8, 10, 11, 26, 27, 28)
#: the signals that end qrsh and delete its job
ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class Ended(BaseException):
    """qrsh is to end and delete its job, with exit status ``status``. Raised by the
    signal handler wherever qrsh is, it is no Exception: code that rides out its own
    failures (``except Exception``) lets it through, as it does KeyboardInterrupt."""

    def __init__(self, status):
        super().__init__(status)
        self.status = status


def _on_signal(signum, _frame):
    _disarm()                           # one is enough: the job is deleted once
    raise Ended(128 + signum)


def _disarm():
    for sig in ENDING:
        signal.signal(sig, signal.SIG_IGN)


def _catch_signals():
    """End qrsh through Ended on the ENDING signals but those ignored from the start (a
    qrsh run by nohup keeps running when its terminal goes away)."""
    for sig in ENDING:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, _on_signal)


@contextlib.contextmanager
def _signals_held():
    """Hold the ENDING signals back while the job is submitted: one that comes meanwhile
    is taken afterwards, when qrsh knows which job to delete."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ENDING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _output_lost(exc):
    """The status qrsh ends with when ``exc`` says its terminal or output went away (a
    terminal hung up: EIO, as for SIGHUP; a closed pipe: EPIPE, as for SIGPIPE), else None."""
    if isinstance(exc, BrokenPipeError):
        return 128 + signal.SIGPIPE
    if exc.errno == errno.EIO:
        return 128 + signal.SIGHUP
    return None


def _fifos():
    from gridtools.exec.client import FOLDER_PREFIX
    folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX)
    paths = {name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}
    for path in paths.values():
        os.mkfifo(path, 0o600)
    return folder, paths


def _immediate(req):
    req["now"] = True


#: the options of Grid Engine's submit parser that qrsh and qlogin take on their command
#: line (qsh.c remove_unknown_opts); -C only with -b n, where it names the script's
#: directive prefix; -display sets DISPLAY in the job's environment. Any other (-t, -a,
#: -c, -ckpt, -i, -r, -S, -shell, -tc, -dl, -he, ...) is refused before anything is
#: submitted.
TAKEN = frozenset((
    "-ac", "-ar", "-A", "-b", "-binding", "-clear", "-cwd", "-dc", "-display", "-e", "-h", "-hard",
    "-hold_jid", "-hold_jid_ad", "-j", "-js", "-jsv", "-l", "-m", "-M", "-masterq", "-N",
    "-noshell", "-nostdin", "-notify", "-now", "-o", "-P", "-p", "-pe", "-pty", "-q",
    "-R", "-sc", "-soft", "-v", "-V", "-verbose", "-w", "-wd"))
#: the ones a login session (qlogin, qrsh without a command) does not take either
NOT_FOR_LOGIN = frozenset(("-cwd", "-wd", "-display", "-v", "-V"))


class UnknownOption(GridError):
    """An option qrsh does not take: Grid Engine's ``error: Unknown option -t``, exit 1."""

    exit_code = 1


def refuse_unknown(argv, prog):
    """Raise UnknownOption for the first option of the command line (with its -@ files)
    that ``prog`` (qrsh or qlogin) does not take. Words the option parser would refuse
    anyway (a missing argument, a file that cannot be read) are left to it. Returns
    True for a login session (qlogin, or qrsh without a command)."""
    from gridtools.cli.sge.tokens import read_option_file
    words, i, seen, binary = list(argv), 0, [], True
    while i < len(words):
        word = words[i]
        if word == "-@" and i + 1 < len(words):
            try:
                words[i:i + 2] = read_option_file(words[i + 1], missing_ok=False)
            except (OSError, GridError):
                return prog == "qlogin"
            continue
        if not word.startswith("-") or word == "-" or word not in options.OPTIONS:
            break
        nargs = options.arity(word, words, i + 1)
        if word == "-b" and i + 1 < len(words):
            binary = words[i + 1].lower() not in ("n", "no")
        seen.append(word)
        i += 1 + nargs
    login = prog == "qlogin" or i >= len(words)
    for word in seen:
        if word == "-C" and not binary:
            continue
        if word == "-verify":
            continue                    # (taken by Grid Engine's qrsh; here the parser says no)
        if word not in TAKEN or (login and word in NOT_FOR_LOGIN):
            raise UnknownOption(f"error: Unknown option {word}")
    return login


#: the options the sge_request files and a script's directives may give qrsh: those it
#: takes but -b (the command line's alone) and -C (ignored there, as by qsub)
TAKEN_FROM_FILES = TAKEN - {"-b", "-C"}


def taken_words(words, login):
    """``words`` of request files or directives without the options qrsh does not take
    (with their argument words): Grid Engine's qrsh drops them silently (qsh.c's
    remove_unknown_opts). A word no option parser knows stays, to be refused."""
    from gridtools.cli.sge.tokens import LINE_END
    out, i = [], 0
    while i < len(words):
        word = words[i]
        if word is LINE_END or word not in options.OPTIONS and word not in options.PARSER_ONLY:
            out.append(word)
            i += 1
            continue
        nargs = options.arity(word, words, i + 1) if word in options.OPTIONS else options.PARSER_ONLY[word]
        end = i + 1
        while end < len(words) and end <= i + nargs and words[end] is not LINE_END:
            end += 1
        if word in TAKEN_FROM_FILES and not (login and word in NOT_FOR_LOGIN):
            out.extend(words[i:end])
        i = end
    return out


def build_request(argv, cwd, prog="qrsh"):
    """(request, script bytes or None, the words after the options, qrsh's own options:
    ``noshell``, ``nostdin``, ``verbose``, ``pty``). qrsh applies -b y unless told
    otherwise; with ``-b n`` its command is a script, read here (it must be readable on
    the submit host), sent with the job, and searched for ``#$`` directives, as qsub
    does (``qsub.build``)."""
    from gridtools.cli.sge import qsub
    login = refuse_unknown(argv, prog)
    req, script, client, name, command, args = qsub.build(
        argv, None, "qrsh", cwd, allowed=("all", "submit", "qrsh"), binary=True, preset=_immediate,
        keep=lambda words: taken_words(words, login))
    if prog == "qlogin":
        if command is not None or script is not None:
            raise UsageError(f'invalid option argument "{command if command is not None else name}"')
        req["name"] = req.get("name") or QLOGIN_NAME
        client.setdefault("verbose", True)
    if client.get("jsv"):
        from gridtools.cli.sge import jsv
        req, name, command, args = jsv.verify(client["jsv"], req, name, command, args,
                                              submit.submitter(cwd), prog, cwd,
                                              default_name=_default_name(script, name, command))
    qsub.check(req)                     # (as Grid Engine's qmaster: after the JSVs)
    if script is None:
        rest = [command] + list(args) if command is not None else []
        if client.get("noshell") and rest:
            req["shell_wrap"] = False
    else:
        rest = [name] + list(args)
    return req, script, rest, client


def _default_name(script, name, command):
    """The name of a qrsh job without -N (see ``_submit``)."""
    if script is not None:
        return os.path.basename(name) or "QRSH"
    return job_name(command) if command is not None else LOGIN_NAME


def job_name(command):
    """The name of a qrsh job without -N, as Grid Engine names it: the first word of the
    command before any ``;``, without its directory (``env | sort`` is ``env``);
    ``QRSH`` when there is no such word. It never holds a blank."""
    parts = [part for part in command.split(";") if part]
    words = parts[0].split() if parts else []
    return (words[0].rpartition("/")[2] if words else "") or "QRSH"


#: the name of a qrsh job without a command (a login shell), and of a qlogin job, as
#: in Grid Engine
LOGIN_NAME = "QRLOGIN"
QLOGIN_NAME = "QLOGIN"


#: what Grid Engine's qrsh puts between the words of a command in QRSH_COMMAND: the
#: byte 0xff (here as the environment carries it: os.fsdecode(b"\xff"))
COMMAND_SEPARATOR = os.fsdecode(b"\xff")


def command_variable(words):
    """QRSH_COMMAND for a command of ``words``: the words joined by the byte 0xff, as
    Grid Engine's qrsh sets it (no quoting can break them apart again)."""
    return COMMAND_SEPARATOR.join(words)


def wants_pty(own, rest):
    """Whether the job runs on a pseudo terminal: as -pty says; without it, a login
    session (no command) whose input is a terminal does."""
    if own.get("pty") is not None:
        return bool(own["pty"])
    return not rest and _is_terminal(0)


def _is_terminal(fd):
    try:
        return os.isatty(fd)
    except OSError:
        return False


def pty_value():
    """What the job's pty is asked to be (``jobproc.PTY_VARIABLE``): the rows and columns
    of qrsh's terminal (0 0 when it has none), and whether the pty echoes (only when
    qrsh's input is a terminal)."""
    rows = cols = 0
    for fd in (0, 1, 2):
        try:
            cols, rows = os.get_terminal_size(fd)
            break
        except OSError:
            continue
    return f"{rows} {cols} {1 if _is_terminal(0) else 0}"


class RawTerminal:
    """qrsh's terminal (its stdin, when it and stdout are terminals) in raw mode from
    ``enter()`` on (once the job was scheduled: until then an interrupt still cancels
    the request), as Grid Engine's qrsh sets it for a job on a pty: no echo, no line
    editing, no signals from keys (they are the job's pty's), but output still processed
    (NL shown as CR NL). ``with RawTerminal(on):`` its mode is restored when the block is
    left, however (``restore`` may be called earlier, from anywhere)."""

    def __init__(self, on):
        self.saved, self.raw = None, False
        if on and _is_terminal(0) and _is_terminal(1):
            try:
                self.saved = termios.tcgetattr(0)
            except termios.error:
                self.saved = None

    def __enter__(self):
        return self

    def waiting(self):
        """True while raw mode is still to be entered."""
        return self.saved is not None and not self.raw

    def enter(self):
        if self.waiting():
            self.raw = True
            try:
                tty.setraw(0, termios.TCSADRAIN)
                attrs = termios.tcgetattr(0)
                attrs[1] |= termios.OPOST | termios.ONLCR
                termios.tcsetattr(0, termios.TCSADRAIN, attrs)
            except termios.error:
                self.restore()

    def restore(self):
        if self.saved is not None:
            saved, self.saved = self.saved, None
            try:
                termios.tcsetattr(0, termios.TCSADRAIN, saved)
            except termios.error:
                pass

    def __exit__(self, *exc):
        self.restore()


def _submit(req, rest, paths, cwd, script=None, pty=False):
    """Submit qrsh's job: its command (``rest``), or with ``script`` (qrsh -b n) the
    script ``rest[0]`` with arguments ``rest[1:]``; its input is ``paths["stdin"]``;
    ``pty``: on a pseudo terminal."""
    from gridtools.exec import client
    from gridtools.exec.jobproc import PTY_VARIABLE
    from gridtools.spool import ids
    command = rest[0] if rest else os.environ.get("SHELL", "/bin/sh")
    args = rest[1:] if rest else ["-i"]
    if not req.get("name"):
        if script is not None:
            req["name"] = os.path.basename(command) or "QRSH"
        else:
            req["name"] = job_name(command) if rest else LOGIN_NAME
    req.update(binary=script is None, interactive=True,
               stdin=[[None, paths["stdin"]]], stdout=[[None, paths["stdout"]]],
               stderr=[[None, paths["stderr"]]], join=False)
    req["env"] = dict(req["env"], QRSH_COMMAND=command_variable(rest or [command] + args))
    if os.environ.get("QRSH_WRAPPER"):
        req["env"]["QRSH_WRAPPER"] = os.environ["QRSH_WRAPPER"]     # (the job runs its command so)
    if "TERM" not in req["env"] and os.environ.get("TERM"):
        req["env"]["TERM"] = os.environ["TERM"]         # the caller's terminal, as Grid Engine's qrsh
    req["env"].pop(PTY_VARIABLE, None)
    if pty:
        req["env"][PTY_VARIABLE] = pty_value()
    from gridtools.cli.sge import cellfacts
    why = cellfacts.refusal(req, submit.submitter(cwd)["owner"])    # (deadline users, projects ... as qsub)
    if why is not None:
        raise submit.Rejected(why)
    spec = submit.finish_spec(req, 1, command, cwd, args, command=command if script is None else None)
    if script is None:
        spec["job_script"] = "QRSH"
    spec["client"] = client.identity()
    submit.check_spec(spec, script)
    submit.check_like_daemon(req)
    spec["id"] = ids.allocate("job")[0]
    submit.send(spec, script, wait=True)            # (a job the daemon refuses is never waited for)
    return spec


class Relay:
    """Copies data between qrsh's standard streams and the job's FIFOs."""

    def __init__(self, paths):
        self.out = os.open(paths["stdout"], os.O_RDONLY | os.O_NONBLOCK)
        self.err = os.open(paths["stderr"], os.O_RDONLY | os.O_NONBLOCK)
        # our own writers keep the FIFOs from reporting end of file before the job opens them
        self.keep = [os.open(paths["stdout"], os.O_WRONLY), os.open(paths["stderr"], os.O_WRONLY)]
        self.stdin_path = paths["stdin"]
        self.to_job = None
        self.stdin_open = True
        self.pending_input = b""
        self.scheduled = False          # (the job was seen on a host)

    def _connect_stdin(self):
        if self.to_job is None:
            try:
                self.to_job = os.open(self.stdin_path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
        return self.to_job is not None

    def pump(self, timeout=POLL):
        """One round of copying; returns after ``timeout`` at most."""
        watch = [self.out, self.err]
        if self.stdin_open and not self.pending_input:
            watch.append(0)
        ready, _, _ = select.select(watch, [], [], timeout)
        for fd, dest in ((self.out, sys.stdout.buffer), (self.err, sys.stderr.buffer)):
            if fd in ready:
                self._copy_out(fd, dest)
        if 0 in ready:
            data = os.read(0, 65536)
            if data:
                self.pending_input += data
            else:
                self.stdin_open = False
        self._feed()

    def _feed(self):
        if self.to_job == -1 or not self._connect_stdin():
            return
        if self.pending_input:
            try:
                written = os.write(self.to_job, self.pending_input)
                self.pending_input = self.pending_input[written:]
            except (BlockingIOError, BrokenPipeError):
                return
        if not self.stdin_open and not self.pending_input and self.to_job is not None:
            os.close(self.to_job)
            self.to_job = -1

    @staticmethod
    def _copy_out(fd, dest):
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        if data:
            dest.write(data)
            dest.flush()

    def drain(self):
        for fd, dest in ((self.out, sys.stdout.buffer), (self.err, sys.stderr.buffer)):
            while True:
                try:
                    data = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if not data:
                    break
                dest.write(data)
            dest.flush()


def _task(job_id):
    from gridtools.spool import jobs as jobstore
    try:
        state = jobstore.read_state(job_id) or {}
    except Exception:  # noqa: BLE001 - a state file being replaced is read again next round
        return {}
    return (state.get("tasks") or {}).get("1") or {}


CANNOT_SCHEDULE = 'Your "qrsh" request could not be scheduled, try again later.\n'
#: what qrsh says when an interrupt or termination ends it while its job waits to be
#: scheduled (Grid Engine's qrsh then deletes the job and exits 1)
CANCELED = "\nRequest for interactive job has been canceled.\n"
#: the signals that cancel a waiting request so
CANCELING = (signal.SIGINT, signal.SIGTERM)


def run_job(spec, relay, verbose=False, terminal=None):
    """Relay until the job ended; returns qrsh's exit status. ``verbose``: say, on
    standard error, that qrsh waits for the job and where it started (qrsh -verbose).
    ``terminal`` (a RawTerminal) enters raw mode once the job was scheduled."""
    job_id = spec["id"]
    if verbose:
        sys.stderr.write("waiting for interactive job to be scheduled ...")
        sys.stderr.flush()
    while True:
        if terminal is not None and terminal.waiting() and _task(job_id).get("host"):
            terminal.enter()            # (before the job's first output is shown)
        relay.pump()
        task = _task(job_id)
        if task.get("host"):
            relay.scheduled = True
        if verbose and task.get("host"):
            sys.stderr.write(f"\nYour interactive job {job_id} has been successfully scheduled.\n"
                             f"Establishing builtin session to host {task['host']} ...\n")
            sys.stderr.flush()
            verbose = False
        if task.get("state") == "finished":
            relay.drain()
            if task.get("exit_status") is None:
                if "immediate" in task.get("failed_reason", ""):
                    sys.stderr.write(CANNOT_SCHEDULE)
                elif not relay.scheduled:           # deleted while it waited (qdel)
                    sys.stderr.write("\n\n" + CANNOT_SCHEDULE)
                return 1
            if task.get("failed") in NOT_STARTED:
                why = str(task.get("failed_reason") or "failed")
                sys.stderr.write(f"Could not start interactive job: {why}\n")
            return int(task["exit_status"])


def main(argv, prog="qrsh"):
    if "-help" in argv:
        sys.stdout.write(options.usage(prog, ("all", "submit", "qrsh")))
        return 0
    cwd = os.getcwd()
    if "-inherit" in argv:
        from gridtools.cli.sge import qrsh_inherit
        at = qrsh_inherit.inherit_position(argv)
        if at >= 0:
            return qrsh_inherit.main(argv[:at] + argv[at + 1:], prog)
    try:
        req, script, rest, own = build_request(argv, cwd, prog)
        from gridtools.cli import cellinit
        cellinit.ensure_cell()
        if req.get("verify") in ("e", "w", "v", "p"):
            from gridtools.cli.sge import verify
            code = verify.report(dict(req, interactive=True), own, prog)
            if code is not None:
                return code             # -w v, -w p: only told; -w e: refused
    except submit.Rejected as exc:
        sys.stderr.write(f"Unable to run job: {exc}\nExiting.\n")
        return exc.exit_code
    except UnknownOption as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except (UsageError, GridError) as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return exc.exit_code
    _catch_signals()
    folder = spec = None
    pty = wants_pty(own, rest)
    terminal = RawTerminal(pty)
    try:
        folder, paths = _fifos()
        relay = Relay(paths)
        if own.get("nostdin"):
            paths = dict(paths, stdin=os.devnull)
            relay.stdin_open, relay.to_job = False, -1
        with _signals_held():
            spec = _submit(req, rest, paths, cwd, script, pty=pty)
        if own.get("verbose"):
            sys.stdout.write(f'Your job {spec["id"]} ("{spec["name"]}") has been submitted\n')
            sys.stdout.flush()
        with terminal:
            return run_job(spec, relay, verbose=bool(own.get("verbose")), terminal=terminal)
    except submit.Refused:
        return 1                        # (the daemon's server JSV: its words are out)
    except submit.Rejected as exc:
        sys.stderr.write(f"Unable to run job: {exc}\nExiting.\n")
        return exc.exit_code
    except Ended as exc:
        if spec is not None and not relay.scheduled and exc.status - 128 in CANCELING:
            _say(CANCELED)
            return _end(spec, 1)
        return _end(spec, exc.status)
    except OSError as exc:
        status = _output_lost(exc)
        if status is None:
            raise
        _silence()
        return _end(spec, status)
    finally:
        _disarm()                       # qrsh leaves: a signal coming now changes nothing
        terminal.restore()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def _end(spec, status):
    """Delete qrsh's job (when it was submitted), as qdel does; returns ``status``."""
    _disarm()
    if spec is not None:
        try:
            tell("delete", {"targets": [{"id": spec["id"], "tasks": None}], "force": False})
        except (OSError, GridError):
            pass                        # (no daemon to tell: nothing runs the job either)
    return status


def _say(text):
    """``text`` on standard error, if it still leads anywhere."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except OSError:
        pass


def _silence():
    """Standard output and error lead nowhere now: what is left in their buffers is dropped."""
    null = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)

