"""qrsh -inherit [options] HOST command [args]: start a task of the running parallel
job this command runs in, on one of the hosts granted to it.

As in Grid Engine, the options before the host name that mean something to a task
are ``-V`` (the caller's whole environment goes to the task), ``-v NAME[=value],...``
(those variables), ``-display DISPLAY`` (the task's DISPLAY), ``-cwd`` and ``-wd DIR``
(the task's working directory: the caller's, or DIR; without them the job's, that is
its ``qsub -cwd``/``-wd`` folder or else the owner's home, as Grid Engine's execd
chooses it), ``-nostdin`` (the task reads /dev/null), ``-noshell`` (the command is
executed directly) and ``-verbose`` (Grid Engine's two lines on standard error);
``-pty`` is taken and does nothing here. Any other submit option is refused as
Grid Engine's qrsh refuses it there (``error: Unknown option -l``, exit 1), once
JOB_ID and the host and command were checked. The tight integrations of Open MPI
(``-inherit -nostdin -V host ...``) and MPICH/hydra (``-inherit -V host ...``) call
it so. Without ``-noshell`` the command line (its words joined by blanks) runs as
``<the owner's login shell> -c "<command line>"``, as Grid Engine's qrsh_starter
runs it.

The job is the one named by ``JOB_ID`` (and ``SGE_TASK_ID``); the host must be in
its ``PE_HOSTFILE``. A missing or bad JOB_ID, and a call without a host or a
command, are told in Grid Engine's words (exit 1). The task's QRSH_COMMAND holds
the command's words joined by the byte 0xff. The dispatcher checks again that the caller owns the job and
that the job's parallel environment controls its slaves (``control_slaves``), then
starts the command under its own shepherd. Its output and input are relayed like
qrsh's, and qrsh ends with the command's exit status. The request names this
process (``exec.client``): a task whose qrsh -inherit went away is ended.
"""

import os
import re
import sys

from gridtools.cli.sge.qrsh import NOT_STARTED, Ended, Relay, _catch_signals, _disarm, _fifos
from gridtools.errors import GridError, UsageError

#: seconds to wait for the dispatcher to start the task
REPLY_TIMEOUT = 60.0


def _job():
    """(job id, task number) of the job qrsh -inherit runs in, from JOB_ID (read as
    Grid Engine's qrsh reads it: its leading number) and SGE_TASK_ID; GridError in Grid
    Engine's words when JOB_ID is missing or holds no number."""
    job_id = os.environ.get("JOB_ID")
    if job_id is None:
        raise GridError('error: "qrsh" called with option "-inherit", but "JOB_ID" not set in environment')
    number = re.match(r"\s*[+-]?\d+", job_id)
    if number is None:
        raise GridError(f'error: invalid "JOB_ID" {job_id}')
    task = os.environ.get("SGE_TASK_ID", "undefined")
    return int(number.group()), int(task) if task.isdigit() else 1


def _granted_hosts():
    path = os.environ.get("PE_HOSTFILE", "")
    try:
        with open(path, encoding="utf-8") as fh:
            return [line.split()[0] for line in fh if line.split()]
    except OSError:
        raise GridError("error: qrsh -inherit needs the PE_HOSTFILE of a parallel job") from None


def granted_name(host, granted):
    """The name among ``granted`` of ``host``, compared without regard to case (as Grid
    Engine compares host names); None when it is none of them."""
    return next((name for name in granted if name.lower() == host.lower()), None)


#: qrsh options that take no argument and mean something to -inherit
FLAGS = ("-nostdin", "-noshell", "-verbose", "-V")
#: qrsh options without an argument that -inherit accepts and ignores
IGNORED_FLAGS = ("-inherit",)
#: qrsh's own options with one argument, accepted and ignored
QRSH_ONLY = ("-pty",)
#: the submit options Grid Engine's qrsh takes with -inherit (qsh.c remove_unknown_opts:
#: "qrsh -inherit only allows -cwd and setting of environment"); qrsh's own -verbose,
#: -noshell, -nostdin and -pty are taken before that check
INHERIT_TAKEN = frozenset(("-cwd", "-wd", "-display", "-v", "-V"))


class Call:
    """What a qrsh -inherit command line asks for."""

    def __init__(self):
        self.flags = set()
        self.env = {}
        self.host = ""
        self.command = []
        self.cwd = None             # -cwd / -wd: the task's working directory
        self.unknown = None         # the first submit option -inherit does not take


def parse(argv):
    """The Call of ``argv`` (the words after qrsh, -inherit among the options);
    UsageError for an option no command knows or a missing argument. A submit option
    -inherit does not take is noted in ``unknown`` (refused by ``main`` after the
    checks Grid Engine's qrsh makes first)."""
    from gridtools.cli.sge import options
    from gridtools.cli.sge.optvalues import parse_env_list
    call, at = Call(), 0
    while at < len(argv) and argv[at].startswith("-"):
        word = argv[at]
        if word in FLAGS or word in IGNORED_FLAGS:
            call.flags.add(word)
            at += 1
            continue
        if word in QRSH_ONLY and at + 1 < len(argv):
            at += 2
            continue
        if word in options.OPTIONS:
            count = options.arity(word, argv[at + 1:])
        elif word in options.PARSER_ONLY:
            count = options.PARSER_ONLY[word]
        else:
            raise UsageError(f"error: ERROR! invalid option argument \"{word}\"")
        if len(argv) - at - 1 < count:
            raise UsageError(f"error: ERROR! {word} option must have argument")
        if word not in INHERIT_TAKEN:
            call.unknown = call.unknown or word
        elif word == "-v":
            call.env.update(parse_env_list(argv[at + 1], os.environ))
        elif word == "-display":
            call.env["DISPLAY"] = argv[at + 1]
        elif word == "-cwd":
            call.cwd = os.getcwd()
        elif word == "-wd":
            call.cwd = os.path.normpath(os.path.join(os.getcwd(), argv[at + 1]))
        at += 1 + count
    if len(argv) - at >= 2:             # (else the caller says how to use it: see USAGE)
        call.host, call.command = argv[at], list(argv[at + 1:])
    return call


#: Grid Engine's words for a qrsh -inherit without a host or a command (exit 1), said
#: after JOB_ID was checked, as its qrsh does
USAGE = 'error: usage with "-inherit" option: "qrsh -inherit ... <host> <command> [args]"'


def inherit_position(argv):
    """The index of ``-inherit`` among the options of a qrsh command line, or -1 when it
    is not one of them (a word of the command, say)."""
    from gridtools.cli.sge import options
    at = 0
    while at < len(argv) and argv[at].startswith("-"):
        word = argv[at]
        if word == "-inherit":
            return at
        count = options.arity(word, argv[at + 1:]) if word in options.OPTIONS else 0
        at += 1 + count
    return -1


def task_environment(call):
    """The variables the task is to get besides the job's: with -V the whole environment
    of the caller, with -v the ones named (the later wins), and QRSH_COMMAND, the
    command's words joined by the byte 0xff."""
    env = dict(os.environ) if "-V" in call.flags else {}
    env.update(call.env)
    from gridtools.cli.sge.qrsh import command_variable
    env["QRSH_COMMAND"] = command_variable(call.command)     # (as Grid Engine's qrsh sets it)
    return env


def _ask(job_id, task, host, command, paths, call=None):
    from gridtools.exec import client
    from gridtools.spool import requests, wake
    body = {"job_id": job_id, "task": task, "host": host, "command": command,
            "streams": paths, "client": client.identity()}
    if call is not None:
        body.update(env=task_environment(call), noshell="-noshell" in call.flags)
        if call.cwd is not None:
            body["cwd"] = call.cwd
    name = requests.write("pe_task", body, reply=True)
    wake.poke()
    answer = requests.wait_reply(name, REPLY_TIMEOUT)
    code, out, err = answer
    if int(code) != 0:
        raise GridError(err.strip() or "error: the task could not be started")
    return out.strip()


def _stdin_is_null():
    """True when our standard input is /dev/null: the task then reads /dev/null itself (a
    FIFO whose writer closes at once could be opened by the shepherd's access check alone)."""
    try:
        mine, null = os.fstat(0), os.stat(os.devnull)
    except OSError:
        return True
    return (mine.st_dev, mine.st_ino) == (null.st_dev, null.st_ino)


def _result(folder):
    from gridtools.formats import spoolyaml
    from gridtools.spool.files import read_text
    text = read_text(os.path.join(folder, "result.yaml"))
    return spoolyaml.load(text) if text else None


def _relay(relay, folder, job_id):
    """Relay until the task ended; its exit status. A task that could not be started
    says why, in Grid Engine's words."""
    while True:
        relay.pump()
        result = _result(folder)
        if result is not None:
            relay.drain()
            if result.get("failed") in NOT_STARTED:
                why = str(result.get("failed_reason") or "failed")
                sys.stderr.write(f"executing task of job {job_id} failed: {why}\n")
            return int(result.get("exit_status") or 0)


def main(argv, prog="qrsh"):
    """``argv``: the words after qrsh without its ``-inherit``."""
    try:
        call = parse(argv)
    except UsageError as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return 2
    host, command = call.host, call.command
    verbose = "-verbose" in call.flags
    try:
        job_id, task = _job()
        if not call.command:
            raise GridError(USAGE)
        if call.unknown:
            raise GridError(f"error: Unknown option {call.unknown}")
        host = granted_name(host, _granted_hosts())
        if host is None:
            # (the host's execution daemon holds no queue of the job: it refuses the task)
            raise GridError(f"error: executing task of job {job_id} failed: execution daemon on host "
                            f'"{call.host}" didn\'t accept task')
    except (GridError, UsageError) as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    _catch_signals()                    # (ended by a signal: the folder goes all the same)
    folder = None
    try:
        folder, paths = _fifos()
        relay = Relay(paths)
        if "-nostdin" in call.flags or _stdin_is_null():
            paths = dict(paths, stdin=os.devnull)
            relay.stdin_open = False
            relay.to_job = -1
        if verbose:                                     # Grid Engine's qrsh -verbose lines
            sys.stderr.write(f'Starting server daemon at host "{host}"\n')
            sys.stderr.flush()
        result_dir = _ask(job_id, task, host, command, paths, call)
        if verbose:
            task_id = f"{os.path.basename(result_dir)[3:]}.{host}"
            sys.stderr.write(f'Server daemon successfully started with task id "{task_id}"\n')
            sys.stderr.flush()
        return _relay(relay, result_dir, job_id)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except Ended as exc:
        return exc.status               # (the task sees its client gone and ends)
    finally:
        _disarm()
        if folder is not None:
            import shutil
            shutil.rmtree(folder, ignore_errors=True)
