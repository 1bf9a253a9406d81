"""qrsh -inherit HOST command: start a task of the running parallel job this command
runs in, on one of the hosts granted to it.

The job is the one named by ``JOB_ID`` (and ``SGE_TASK_ID``); the host must be in
its ``PE_HOSTFILE``. The dispatcher checks again that the caller owns the job and
that the job's parallel environment controls its slaves (``control_slaves``), then
starts the command under its own shepherd. Its output and input are relayed like
qrsh's, and qrsh ends with the command's exit status. The request names this
process (``exec.client``): a task whose qrsh -inherit went away is ended.
"""

import os
import sys

from gridtools.cli.sge.qrsh import Relay, _fifos
from gridtools.errors import GridError, UsageError

#: seconds to wait for the dispatcher to start the task
REPLY_TIMEOUT = 60.0


def _job():
    job_id = os.environ.get("JOB_ID", "")
    if not job_id.isdigit():
        raise GridError("error: qrsh -inherit must be called from inside a job (JOB_ID is not set)")
    task = os.environ.get("SGE_TASK_ID", "undefined")
    return int(job_id), int(task) if task.isdigit() else 1


def _granted_hosts():
    path = os.environ.get("PE_HOSTFILE", "")
    try:
        with open(path, encoding="utf-8") as fh:
            return [line.split()[0] for line in fh if line.split()]
    except OSError:
        raise GridError("error: qrsh -inherit needs the PE_HOSTFILE of a parallel job") from None


def _ask(job_id, task, host, command, paths):
    from gridtools.exec import client
    from gridtools.spool import requests, wake
    body = {"job_id": job_id, "task": task, "host": host, "command": command, "cwd": os.getcwd(),
            "streams": paths, "client": client.identity()}
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


def _relay(relay, folder):
    while True:
        relay.pump()
        result = _result(folder)
        if result is not None:
            relay.drain()
            return int(result.get("exit_status") or 0)


def main(argv, prog="qrsh"):
    if len(argv) < 2:
        sys.stderr.write(f"{prog}: usage: qrsh -inherit hostname command [args]\n")
        return 2
    import shutil
    host, command = argv[0], list(argv[1:])
    command[0] = shutil.which(command[0]) or command[0]
    try:
        job_id, task = _job()
        if host not in _granted_hosts():
            raise GridError(f'error: host "{host}" is not granted to job {job_id}')
    except (GridError, UsageError) as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    folder, paths = _fifos()
    try:
        relay = Relay(paths)
        if _stdin_is_null():
            paths = dict(paths, stdin=os.devnull)
            relay.stdin_open = False
            relay.to_job = -1
        result_dir = _ask(job_id, task, host, command, paths)
        return _relay(relay, result_dir)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    finally:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
