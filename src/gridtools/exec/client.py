"""The client of an interactive job: the qrsh whose FIFOs are the job's streams.

qrsh writes who it is into the job (``identity``: its pid, that process's
start time and the machine it runs on). The shepherd looks at it (``gone``)
while the job process waits for the client to take its end of the FIFOs (the
handshake) and while the job runs: a client that ended (its pid gone, or
taken by a process started later) never takes its streams again, so the job
is given up instead of holding its slot. A client on another machine cannot
be looked at: only the handshake's time limit applies to it.

A client that ended without a word (SIGKILL) cannot remove the folder of its
FIFOs; the shepherd does when the job ends (``remove_folder``), with the job
owner's rights, and only a folder that is what qrsh makes: named
``gtqrsh-...``, the owner's, holding nothing but the three FIFOs.
"""

import os
import stat

from gridtools.exec.jobproc import become_owner, start_ticks, stat_fields

#: seconds the job process of an interactive job may wait for its client to take the job's
#: streams, unless execd_params sets QRSH_HANDSHAKE_TIMEOUT (sge_conf(5))
HANDSHAKE_TIMEOUT = 60.0
#: seconds between two looks at whether the client is still there
CHECK_EVERY = 0.5


def identity():
    """Who the calling process is, as a job records its client."""
    pid = os.getpid()
    return {"pid": pid, "start": start_ticks(pid), "machine": os.uname().nodename}


def gone(client):
    """True when ``client`` (an ``identity``) has ended; False while it lives, and for a
    client on another machine or not known."""
    if not isinstance(client, dict) or client.get("machine") != os.uname().nodename:
        return False
    pid = client.get("pid")
    if type(pid) is not int or pid <= 0:
        return False
    try:
        fields = stat_fields(pid)
    except (FileNotFoundError, ProcessLookupError):
        return True
    except OSError:
        return False                    # (not ours to look at)
    # one that ended but was not waited for yet is gone too
    return fields[0] in (b"Z", b"X") or int(fields[19]) != client.get("start")


#: how the name of the folder of a qrsh client's FIFOs begins
FOLDER_PREFIX = "gtqrsh-"
#: the FIFOs in it
STREAMS = ("stdin", "stdout", "stderr")


def stream_folder(plan):
    """The folder of the FIFOs an interactive task's streams are (the client's, made
    by qrsh), or None when its streams are not such FIFOs."""
    out = plan.get("stdout")
    if not isinstance(out, str) or not os.path.isabs(out):
        return None
    folder = os.path.dirname(out)
    if not os.path.basename(folder).startswith(FOLDER_PREFIX):
        return None
    for name in STREAMS:
        path = plan.get(name)
        if path != os.path.join(folder, name) and not (name == "stdin" and path == os.devnull):
            return None
    return folder


def remove_folder(plan):
    """Remove the folder of the FIFOs of an interactive task whose client is gone (it
    cannot remove them itself any more). A child with the job owner's identity does it,
    through the opened folder (a link put in its place is not followed), and only when
    the folder is the owner's and holds the FIFOs and nothing else. True when removed."""
    folder = stream_folder(plan)
    if folder is None or not gone((plan.get("interactive") or {}).get("client")):
        return False
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            become_owner(plan)
            code = 0 if _remove_fifos(folder) else 1
        except BaseException:  # noqa: BLE001 - the parent learns it failed
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _remove_fifos(folder):
    parent, name = os.path.split(folder)
    parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
        try:
            if os.fstat(fd).st_uid != os.geteuid():
                return False
            entries = os.listdir(fd)
            if not set(entries) <= set(STREAMS):
                return False
            for entry in entries:
                if not stat.S_ISFIFO(os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode):
                    return False
            for entry in entries:
                os.unlink(entry, dir_fd=fd)
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=parent_fd)        # (fails when something came meanwhile)
        return True
    finally:
        os.close(parent_fd)
