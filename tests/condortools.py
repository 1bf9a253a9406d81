"""Helpers for the tests of the HTCondor commands: submit files, cluster ids, states."""

import os
import re

from conftest import wait_for


def write(path, text, mode=0o644):
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)
    return path


class ConfigFolder:
    """A cell folder (``root``) whose etc/condor_config, or another file of etc/, a test
    writes (``write`` returns its path), for condor_config_val run on it without a daemon."""

    def __init__(self, root):
        self.root = root
        self.etc = os.path.join(str(root), "etc")
        self.config = os.path.join(self.etc, "condor_config")
        os.makedirs(self.etc, exist_ok=True)

    def write(self, text, name="condor_config"):
        return write(os.path.join(self.etc, name), text)


def read(path):
    """The text of a file a job writes, "" while it is not there."""
    try:
        with open(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


#: a transfer plugin by HTCondor's multi-file protocol: a URL's path names a file of the store
#: folder, which it fetches or (-upload) fills; it notes who ran it in the store's ``ran_as``
_STORE_PLUGIN = """#!/usr/bin/python3
import os, re, shutil, sys
args = sys.argv[1:]
if args == ["-classad"]:
    sys.stdout.write({classad!r})
    sys.exit(0)
infile, outfile = args[args.index("-infile") + 1], args[args.index("-outfile") + 1]
store = {store!r}
with open(os.path.join(store, {ran_as!r}), "a") as fh:
    fh.write(f"{{os.getuid()}} {{'-upload' in args}}\\n")
failed = False
with open(infile) as fh, open(outfile, "w") as out:
    for line in fh:
        url, local = re.findall(r'"([^"]*)"', line)
        kept = os.path.join(store, url.split("://", 1)[1].split("/", 1)[1])
        try:
            if "-upload" in args:
                shutil.copy(local, kept)
            else:
                shutil.copy(kept, local)
            out.write(f'[ TransferSuccess = true; TransferUrl = "{{url}}"; TransferFileName = "{{local}}" ]\\n')
        except OSError:
            failed = True
            out.write(f'[ TransferSuccess = false; TransferError = "no such object"; TransferUrl = "{{url}}"; '
                      f'TransferFileName = "{{local}}" ]\\n')
sys.exit(3 if failed else 0)
"""


def store_plugin(store, ran_as="ran_as", classad=""):
    """The text of a transfer plugin of ``store`` (``_STORE_PLUGIN``) that answers
    ``-classad`` with ``classad``."""
    return _STORE_PLUGIN.format(store=store, ran_as=ran_as, classad=classad)


def submit(cell, text, *args, cwd=None, user=None, name="job.sub"):
    """condor_submit a description written into ``cwd``; returns the cluster id."""
    cwd = cwd or cell.root
    path = write(os.path.join(cwd, name), text)
    proc = cell.run("condor_submit", *args, path, cwd=cwd, user=user)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))


def statuses(cell, *ids, user=None):
    """proc id -> JobStatus, as parsl reads them (condor_q IDS -af:jr JobStatus)."""
    proc = cell.run("condor_q", *ids, "-allusers", "-af:jr", "JobStatus", user=user)
    assert proc.returncode == 0, proc.stderr
    found = {}
    for line in proc.stdout.splitlines():
        jid, status = line.split()
        found[jid] = int(status)
    return found


def wait_status(cell, jid, wanted, timeout=20, user=None):
    wanted = (wanted,) if isinstance(wanted, int) else tuple(wanted)
    return wait_for(lambda: statuses(cell, jid, user=user).get(jid) in wanted, timeout)


def wait_gone(cell, jid, timeout=20):
    return wait_for(lambda: jid not in statuses(cell, jid), timeout)


def events(path):
    """The event numbers of a user log, per proc: {"C.P": [0, 1, 5]}."""
    from gridtools.formats.condor.userlog import parse_events
    try:
        with open(path) as fh:
            text = fh.read()
    except FileNotFoundError:
        return {}
    found = {}
    for event in parse_events(text):
        found.setdefault(f"{event.cluster}.{event.proc}", []).append(int(event.type))
    return found


#: the image size event, which reports a running job's memory when a report is due
#: (STARTER_INITIAL_UPDATE_INTERVAL after its start, then every STARTER_UPDATE_INTERVAL)
IMAGE_SIZE = 6


def wait_events(path, jid, wanted, timeout=20):
    """Wait until the log of ``jid`` holds the event numbers ``wanted`` in this order; its
    image size events are left out unless ``wanted`` has one (a run that lasts long
    enough has them, when the daemon's look at the running jobs comes)."""
    got = []

    def seen():
        got[:] = [n for n in events(path).get(jid, []) if n != IMAGE_SIZE or IMAGE_SIZE in wanted]
        return list(got) if got[:len(wanted)] == list(wanted) else None
    try:
        return wait_for(seen, timeout)
    except AssertionError:
        raise AssertionError(f"the log of {jid} holds the events {got}, not {list(wanted)} first") from None


def history(cell, *args):
    proc = cell.run("condor_history", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


#: the desktop policy of the seed (a machine that runs jobs only while its owner is away)
DESKTOP = """
NonCondorLoadAvg = (LoadAvg - CondorLoadAvg)
BgndLoad = 0.3
CPU_Busy = ($(NonCondorLoadAvg) >= $(BgndLoad))
CPU_Idle = ($(NonCondorLoadAvg) < $(BgndLoad))
KeyboardBusy = (KeyboardIdle < 10)
MachineBusy = ($(CPU_Busy) || $(KeyboardBusy))
ActivityTimer = (CurrentTime - EnteredCurrentActivity)
START = $(CPU_Idle) && KeyboardIdle > 300
SUSPEND = $(MachineBusy)
CONTINUE = $(CPU_Idle) && KeyboardIdle > 120
PREEMPT = (Activity == "Suspended") && $(ActivityTimer) > 300
KILL     = $(ActivityTimer) > 300
"""


_JOB_EVENTS = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import htcondor2
print(json.dumps([dict({k: e.get(k) for k in e.keys()}, type=int(e.type))
                  for e in htcondor2.JobEventLog(sys.argv[1]).events(stop_after=0)], default=str))
"""


def htcondor_events(path):
    """The events of a user log as HTCondor's own JobEventLog reads them (a list of dicts,
    each with its ``type`` number), or None when the htcondor2 package is missing."""
    import json
    import subprocess
    import sys
    python = os.environ.get("GRIDTOOLS_HTCONDOR2_PYTHON", sys.executable)
    if subprocess.run([python, "-c", "import htcondor2"], capture_output=True).returncode != 0:
        return None
    proc = subprocess.run([python, "-c", _JOB_EVENTS, path], capture_output=True, text=True,
                          env=dict(os.environ, CONDOR_CONFIG="/dev/null"))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def negotiated(cell, config="", on=True):
    """Let the negotiator order the cell (sched_conf params NEGOTIATOR=1; not with ``on``
    false) and add ``config`` to its condor_config (before its daemon starts, or before a
    reconfiguration)."""
    path = os.path.join(cell.root, "etc", "sched_conf")
    if on:
        with open(path) as fh:
            text = re.sub(r"(?m)^params .*$", "params                            NEGOTIATOR=1", fh.read())
        with open(path, "w") as fh:
            fh.write(text)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(config)


def configure_now(cell, text):
    """Add ``text`` to the running cell's condor_config and have its daemon read it at
    once (it looks at the file by itself at most once a second)."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(text)
    cell.run("condor_reconfig", check=True)


def af(cell, jid, *attrs):
    """condor_q's ``-af:,`` line of ``attrs`` of job ``jid``."""
    return cell.run("condor_q", jid, "-af:,", *attrs).stdout
