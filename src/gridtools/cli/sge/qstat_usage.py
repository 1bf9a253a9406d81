"""The usage line ``qstat -j`` shows for a running task, and the cpu, mem and io
columns of ``qstat -ext``.

The values are what the task's shepherd last reported (its ``usage`` file,
rewritten every few seconds while the job runs), and where the job runs
on this machine, the CPU time and virtual memory of the processes in the
job's process group read from ``/proc`` now (its leader's pid is in the
task's ``job_pid`` file), when they are more. Memory sizes nobody has
reported show as N/A.
"""

import os

GB = 1024.0 ** 3


def _job_pid(job_id, number):
    from gridtools.spool import jobs as jobstore
    try:
        with open(os.path.join(jobstore.task_dir(job_id, number), "job_pid")) as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def group_usage(pgid):
    """(cpu seconds, virtual memory bytes) of the live processes in process group ``pgid``."""
    ticks = os.sysconf("SC_CLK_TCK") or 100
    cpu, vmem, seen = 0.0, 0, False
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return None
    for name in names:
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) < 21 or int(fields[2]) != pgid:
            continue
        seen = True
        cpu += (int(fields[11]) + int(fields[12])) / ticks
        vmem += int(fields[20])
    return (cpu, vmem) if seen else None


def hms(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _size(nbytes):
    if nbytes is None:
        return "N/A"
    from gridtools.cli.sge import loadvalues
    return loadvalues.memory(float(nbytes))


def usage_text(job_id, number, task):
    """``cpu=00:00:01, mem=0.00000 GB s, io=0.00000 GB, vmem=N/A, maxvmem=N/A``."""
    from gridtools.spool import jobs as jobstore
    recorded = dict(task.get("usage") or {})
    reported = jobstore.read_usage(job_id, number) or {}
    for key in ("cpu", "mem", "io", "vmem", "maxvmem"):
        if reported.get(key):
            recorded[key] = max(float(recorded.get(key) or 0.0), reported[key])
    cpu = float(recorded.get("cpu", 0.0) or 0.0)
    vmem = recorded.get("vmem")
    maxvmem = recorded.get("maxvmem")
    pgid = _job_pid(job_id, number)
    live = group_usage(pgid) if pgid else None
    if live is not None:
        cpu, vmem = max(cpu, live[0]), live[1]
        maxvmem = max(maxvmem or 0, vmem)
    mem = float(recorded.get("mem", 0.0) or 0.0)
    io = float(recorded.get("io", 0.0) or 0.0) / GB
    return (f"cpu={hms(cpu)}, mem={mem:.5f} GB s, io={io:.5f} GB, "
            f"vmem={_size(vmem)}, maxvmem={_size(maxvmem)}")


def ext_usage(job_id, number):
    """(cpu seconds, whole; mem, GB seconds; io, GB) of a running task, as its shepherd
    last reported them; None before its first report."""
    from gridtools.spool import jobs as jobstore
    reported = jobstore.read_usage(job_id, number)
    if reported is None:
        return None
    return int(reported.get("cpu", 0.0)), float(reported.get("mem", 0.0)), float(reported.get("io", 0.0)) / GB


def ext_columns(job_id, number):
    """The cpu, mem and io columns ``qstat -ext`` shows for a running task (``0:00:00:07
    0.01234 0.00004``: days:hh:mm:ss, GB seconds, GB, as Grid Engine prints them), from
    what its shepherd last reported; None before its first report."""
    usage = ext_usage(job_id, number)
    if usage is None:
        return None
    seconds, mem, io = usage
    days, rest = divmod(seconds, 86400)
    cpu = f"{days}:{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"
    return f"{cpu} {mem:<5.5f} {io:<5.5f} "
