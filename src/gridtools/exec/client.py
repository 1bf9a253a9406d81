"""The client of an interactive job: the qrsh whose FIFOs are the job's streams.

qrsh writes who it is into the job (``identity``: its pid, that process's
start time and the machine it runs on). The shepherd looks at it (``gone``)
while the job process waits for the client to take its end of the FIFOs (the
handshake) and while the job runs: a client that ended (its pid gone, or
taken by a process started later) never takes its streams again, so the job
is given up instead of holding its slot. A client on another machine cannot
be looked at: only the handshake's time limit applies to it.
"""

import os

from gridtools.exec.jobproc import start_ticks, stat_fields

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
