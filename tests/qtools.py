"""Helpers for the tests of queue and host states: jobs, qstat rows, queue edits, processes."""

import fcntl
import json
import os
import re
import tempfile
import time

from conftest import wait_for


def jid_of(proc):
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return int(re.search(r"(\d+)", proc.stdout).group(1))


def job_states(cell):
    """job id (or "id.task") -> qstat state letters, for every job of every user."""
    found = {}
    for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
        fields = line.split()
        if not fields:
            continue
        key = fields[0]
        if len(fields) >= 10 and fields[-1].isdigit() and "@" in line:
            key = f"{fields[0]}.{fields[-1]}"
        found[key] = fields[4]
    return found


def state_of(cell, jid):
    return job_states(cell).get(str(jid))


def wait_state(cell, jid, wanted, timeout=15):
    """Wait until qstat shows job ``jid`` in one of the states ``wanted`` (a string or tuple)."""
    wanted = (wanted,) if isinstance(wanted, str) else tuple(wanted)
    return wait_for(lambda: state_of(cell, jid) in wanted, timeout)


def queue_line(cell, instance):
    for line in cell.run("qstat", "-f").stdout.splitlines():
        if line.startswith(instance + " "):
            return line
    return None


def queue_letters(cell, instance):
    """The state letters qstat -f shows for a queue instance ('' when none)."""
    line = queue_line(cell, instance)
    assert line is not None, f"{instance} not in qstat -f"
    fields = line.split()
    return fields[5] if len(fields) > 5 else ""


def set_attr(cell, queue, attr, value):
    """Replace a queue attribute with ``qconf -rattr``."""
    cell.run("qconf", "-rattr", "queue", attr, value, queue, check=True)


def add_queue(cell, name, **attrs):
    """Add a cluster queue like all.q with some attributes changed (``qconf -Aq``)."""
    text = cell.run("qconf", "-sq", "all.q", check=True).stdout
    attrs = {"qname": name, "load_thresholds": "NONE", **attrs}
    lines = []
    for line in text.splitlines():
        key = line.split(" ", 1)[0]
        lines.append(f"{key} {attrs.pop(key)}" if key in attrs else line)
    lines += [f"{k} {v}" for k, v in attrs.items()]
    add_object(cell, "-Aq", "\n".join(lines) + "\n")


def add_object(cell, option, text):
    """Add a configuration object from text with ``qconf -A…`` (or -M…)."""
    fd, path = tempfile.mkstemp(prefix="gtobj-", dir="/tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o644)
    try:
        cell.run("qconf", option, path, check=True)
    finally:
        os.unlink(path)


def add_complex(cell, row):
    """Append one row (name shortcut type relop requestable consumable default urgency)."""
    text = cell.run("qconf", "-sc", check=True).stdout
    add_object(cell, "-Mc", text.rstrip("\n") + "\n" + row + "\n")


def job_pid(cell, jid, task=1):
    """The pid of a running task's job process (as its shepherd recorded it)."""
    path = os.path.join(cell.root, "spool", "jobs", str(jid), str(task), "job_pid")

    def read():
        try:
            with open(path) as fh:
                return int(fh.read().strip() or 0)
        except (OSError, ValueError):
            return 0
    return wait_for(read, 15)


def end_state(cell, jid, timeout=30):
    """The state task 1 of job ``jid`` ends in: "finished" or "error" (waited for)."""
    wait_for(lambda: cell.task_states(jid).get(1) in ("finished", "error"), timeout=timeout)
    return cell.task_states(jid).get(1)


def process_state(pid):
    """The kernel's state letter of a process: R, S, T (stopped), Z, ... or None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            data = fh.read()
    except OSError:
        return None
    return data[data.rindex(")") + 2]


def stopped(pid):
    return process_state(pid) == "T"


def running(pid):
    return process_state(pid) in ("R", "S", "D")


def reasons(cell, jid):
    """The scheduling info lines qstat -j shows for a job."""
    out = cell.run("qstat", "-j", str(jid)).stdout
    lines, inside = [], False
    for line in out.splitlines():
        if line.startswith("scheduling info:"):
            inside = True
            lines.append(line.split(":", 1)[1].strip())
        elif inside and line.startswith(" "):
            lines.append(line.strip())
        elif inside:
            break
    return lines


def set_qmaster_params(cell, params):
    """Write ``params`` as the global configuration's qmaster_params, straight into its
    file (read by the daemon when it changes, as an administrator's edit is)."""
    path = os.path.join(cell.root, "etc", "conf", "global")
    with open(path) as fh:
        text, count = re.subn(r"^qmaster_params\s.*$", f"qmaster_params {params}", fh.read(), flags=re.M)
    assert count == 1
    with open(path, "w") as fh:
        fh.write(text)


def set_global(cell, **values):
    """Change global configuration values with qconf -Mconf (applied by the daemon at once)."""
    _change_shown(cell, ("-sconf", "global"), "-Mconf", "global", values)


def _change_shown(cell, show, modify, name, values):
    """Change the ``values`` (key -> text) of what ``qconf *show`` prints, giving it back
    with ``qconf modify FILE`` (the file ``name`` in the cell's folder)."""
    text = cell.run("qconf", *show, check=True).stdout
    for key, value in values.items():
        text, n = re.subn(rf"^{key}\s.*$", f"{key} {value}", text, flags=re.M)
        assert n, key
    path = os.path.join(cell.root, name)
    with open(path, "w") as fh:
        fh.write(text)
    cell.run("qconf", modify, path, check=True)


def program_processes(path):
    """The live processes (psutil) whose command line names ``path``."""
    import psutil
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and path in " ".join(proc.info["cmdline"] or ()):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def passes_every_second(cell):
    """Set the cell's own scheduler passes (schedule_interval) to every second, not every
    15 s, before its daemon starts: a test that waits for a later pass need not wait long."""
    path = os.path.join(cell.root, "etc", "sched_conf")
    with open(path) as fh:
        text, count = re.subn(r"(?m)^schedule_interval\s+.*$", "schedule_interval                 0:0:1",
                              fh.read())
    assert count == 1
    with open(path, "w") as fh:
        fh.write(text)


def set_sched(cell, **values):
    """Change the scheduler configuration's ``values`` with qconf -Msconf (a running daemon)."""
    _change_shown(cell, ("-ssconf",), "-Msconf", "sched_conf", values)


def hold_execd_lock(cell, host):
    """Stand in for an execution daemon of ``host``: hold its lock (it reports with
    ``report_load``, or stays silent; closing the descriptor is the daemon going away)."""
    folder = os.path.join(cell.root, "spool", "execd", host)
    os.makedirs(os.path.join(folder, "inbox"), exist_ok=True)
    fd = os.open(os.path.join(folder, "execd.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


#: the load values of an execution daemon's report unless ``report_load`` is given others
LOAD_SAMPLE = {"arch": "lx-amd64", "num_proc": 2, "load_avg": 0.25, "np_load_avg": 0.125,
               "mem_total": "1.0G", "mem_used": "512.0M", "swap_total": "0.0", "swap_used": "0.0"}


def report_load(cell, host, age=0.0, **loads):
    """A load report of ``host``'s execution daemon, made ``age`` seconds ago: LOAD_SAMPLE
    with ``loads`` over it."""
    path = os.path.join(cell.root, "spool", "execd", host, "load")
    with open(path + ".tmp", "w") as fh:
        json.dump({"time": time.time() - age, "values": dict(LOAD_SAMPLE, **loads)}, fh)
    os.rename(path + ".tmp", path)
