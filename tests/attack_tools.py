"""Helpers of the attack tests: code run as another user, planted spool entries, the daemon's health.

Every attack is carried out by a real unprivileged user (``users`` fixture)
against the cell's root daemon; the helpers here only make the tests short.
"""

import json
import os
import pwd
import re
import signal
import textwrap

from conftest import unanswered, user_bin, wait_for


def user_src():
    """The source tree other users import gridtools from."""
    return os.path.join(os.path.dirname(user_bin()), "src")


def user_py(cell, user, code, timeout=60, check=False):
    """Run Python ``code`` as ``user`` in the cell; returns the CompletedProcess."""
    prog = f"import sys\nsys.path.insert(0, {user_src()!r})\n" + textwrap.dedent(code)
    return cell.run("python3", "-c", prog, user=user, timeout=timeout, check=check)


def daemon_pid(cell):
    with open(os.path.join(cell.root, "spool", "daemon.pid")) as fh:
        return int(fh.read())


def alive(pid):
    from qtools import process_state
    return process_state(pid) not in (None, "Z")


def poke(cell):
    """Wake the daemon as a client would."""
    fd = os.open(os.path.join(cell.root, "spool", "wakeup"), os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, b"!")
    finally:
        os.close(fd)


def requests_dir(cell):
    return os.path.join(cell.root, "spool", "requests")


def wait_taken(cell, name, timeout=15):
    """Wait until the daemon took request ``name`` in and was done with it (answered or
    dropped it: it is neither queued nor taken)."""
    wait_for(lambda: name not in unanswered(cell.root), timeout)


SUBMIT_AS_USER = """
import json, os, sys
from gridtools.cli.sge import options, submit
from gridtools.spool import ids, requests, wake
overrides = json.loads(sys.argv[1] if len(sys.argv) > 1 else {overrides!r})
req = options.fresh_request()
req.update(binary=True)
jid = ids.allocate("job")[0]
spec = submit.finish_spec(req, jid, "true", os.getcwd(), [], command="/bin/true")
spec.update(overrides)
for key in {drop!r}:
    spec.pop(key, None)
name = requests.write("submit", {{"job": spec}}, script={script!r}, reply={reply!r})
wake.poke()
print(json.dumps({{"id": jid, "name": name}}))
if {reply!r}:
    print(json.dumps(requests.wait_reply(name, 30)))
"""


def forge_submit(cell, user, overrides, drop=(), script=None, reply=False, cwd=None):
    """Queue a submit request written by hand as ``user``: a job spec as qsub makes it,
    with ``overrides`` applied. Returns (claimed id, request name, reply or None)."""
    code = SUBMIT_AS_USER.format(overrides=json.dumps(overrides), drop=list(drop),
                                 script=script, reply=reply)
    proc = user_py(cell, user, code, check=True)
    lines = proc.stdout.splitlines()
    head = json.loads(lines[0])
    answer = json.loads(lines[1]) if reply else None
    return head["id"], head["name"], answer


ASK_AS_USER = """
import json, sys
from gridtools.spool import requests, wake
body = json.loads({body!r})
name = requests.write({kind!r}, body, reply={reply!r})
wake.poke()
print(json.dumps({{"name": name}}))
if {reply!r}:
    print(json.dumps(requests.wait_reply(name, 30)))
"""


def forge_request(cell, user, kind, body, reply=True):
    """Queue a request of ``kind`` with ``body`` (any JSON value) as ``user``;
    returns (request name, reply or None)."""
    code = ASK_AS_USER.format(kind=kind, body=json.dumps(body), reply=reply)
    proc = user_py(cell, user, code, check=True)
    lines = proc.stdout.splitlines()
    return json.loads(lines[0])["name"], (json.loads(lines[1]) if reply else None)


def stop_process(pid):
    os.kill(pid, signal.SIGSTOP)


def continue_process(pid):
    os.kill(pid, signal.SIGCONT)


def children(pid):
    """The pids of a process's children (none when it is gone)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def all_readable_bytes(cell, user, top):
    """Everything ``user`` can read under ``top``: {path: bytes} (run as that user)."""
    code = f"""
    import json, os, stat
    found = {{}}
    for base, dirs, files in os.walk({top!r}):
        for name in files + dirs:
            path = os.path.join(base, name)
            try:
                st = os.lstat(path)
                if not stat.S_ISREG(st.st_mode):
                    continue
                with open(path, "rb") as fh:
                    found[path] = fh.read(1 << 20).decode("latin-1")
            except OSError:
                continue
    print(json.dumps(found))
    """
    proc = user_py(cell, user, code, check=True)
    return json.loads(proc.stdout)


def user_popen(cell, user, code):
    """Start Python ``code`` as ``user`` in the background; returns the Popen (text pipes)."""
    import pwd
    import subprocess
    from conftest import user_bin
    entry = pwd.getpwnam(user)
    env = dict(cell.env, HOME=entry.pw_dir, USER=user, LOGNAME=user,
               PATH=os.pathsep.join([user_bin(), "/usr/local/bin", "/usr/bin", "/bin"]))
    prog = f"import sys\nsys.path.insert(0, {user_src()!r})\n" + textwrap.dedent(code)

    def demote():
        os.initgroups(user, entry.pw_gid)
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
    return subprocess.Popen(["python3", "-c", prog], env=env, cwd=entry.pw_dir, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=demote)


def command_popen(cell, user, *argv, cwd=None):
    """Start a gridtools command as ``user`` in the background (text pipes)."""
    import pwd
    import subprocess
    from conftest import user_bin
    entry = pwd.getpwnam(user)
    env = dict(cell.env, HOME=entry.pw_dir, USER=user, LOGNAME=user,
               PATH=os.pathsep.join([user_bin(), "/usr/local/bin", "/usr/bin", "/bin"]))

    def demote():
        os.initgroups(user, entry.pw_gid)
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)
    return subprocess.Popen(list(argv), env=env, cwd=cwd or entry.pw_dir, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=demote)


def sticky_folder(workdir, name="shared"):
    """A sticky folder anyone may write in ``workdir``, as /tmp."""
    shared = os.path.join(workdir, name)
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    return shared


def private_folder(workdir, name, user=None):
    """A folder in ``workdir`` only ``user`` (root when None) may enter."""
    path = os.path.join(workdir, name)
    os.mkdir(path, 0o700)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)
    return path


def give_to(path, user):
    """Make ``path`` ``user``'s (left root's when ``user`` is None)."""
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def two_node_dag(folder, user):
    """A two-node DAG d.dag in ``folder`` (its files ``user``'s; root's when None) whose
    nodes A then B append their names to ``order`` there."""
    script = os.path.join(folder, "node.sh")
    with open(script, "w") as fh:
        fh.write(f"#!/bin/sh\necho $1 >> {folder}/order\n")
    os.chmod(script, 0o755)
    with open(os.path.join(folder, "n.sub"), "w") as fh:
        fh.write(f"executable = {script}\narguments = $(name)\nqueue\n")
    with open(os.path.join(folder, "d.dag"), "w") as fh:
        fh.write("JOB A n.sub\nVARS A name=\"A\"\nJOB B n.sub\nVARS B name=\"B\"\nPARENT A CHILD B\n")
    for name in ("node.sh", "n.sub", "d.dag"):
        give_to(os.path.join(folder, name), user)


def run_dag(cell, folder, user, *options):
    """Submit d.dag in ``folder`` as ``user`` (root when None) with condor_submit_dag's
    ``options`` and wait for its DAGMan job in condor_history; its ExitCode."""
    proc = cell.run("condor_submit_dag", *options, "d.dag", cwd=folder, user=user)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    manager = int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))
    shown = []

    def ended():
        shown[:] = cell.run("condor_history", str(manager), "-af", "ClusterId", "ExitCode").stdout.split()
        return shown
    wait_for(ended, timeout=90, interval=0.2)
    assert shown[0] == str(manager), shown
    return int(shown[1])


def victim_file(workdir, user, words):
    """A file holding ``words`` that only ``user`` (root when None) may reach, for a
    planted link to name."""
    path = os.path.join(private_folder(workdir, "victim", user), "secret")
    with open(path, "w") as fh:
        fh.write(words)
    give_to(path, user)
    return path
