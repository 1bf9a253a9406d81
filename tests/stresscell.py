"""A stress run against a real daemon: random jobs with consumables, a quota, parallel
jobs, resource reservations and an advance reservation on four hosts served by
execution daemons; then a check, from the accounting records alone, that nothing was
ever oversubscribed. Used by tests/test_stress_live.py and bench/bench_stress_live.py.

The cell: hosts n1..n4 with SLOTS slots each; a global consumable ``lic`` (LICENSES),
a per-slot host consumable ``mem`` (MEM per host); the quota ``users * hosts {*} to
slots=QUOTA``; the PE ``smp`` ($pe_slots, so a parallel job's slots are all on its
master host, which is the host accounting names); one advance reservation of two
``smp`` slots for a window, with jobs submitted into it.

Accounting times are whole seconds, cut down: intervals are taken half open,
[start, end), which keeps the real order of an end and a later start, so an overlap
seen is a real one.
"""

import os
import random
import re
import subprocess
import time

from conftest import destroy_cell, make_cell, wait_for

HOSTS = ("n1", "n2", "n3", "n4")
SLOTS = 4
QUOTA = 3
LICENSES = 6
MEM = 6
AR_SLOTS = 2

RQS = "{\n name per_host\n enabled true\n limit users * hosts {*} to slots=%d\n}\n" % QUOTA
SMP = ("pe_name smp\nslots 999\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
       "stop_proc_args NONE\nallocation_rule $pe_slots\ncontrol_slaves FALSE\n"
       "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")
ROWS = ("lic                 lic        INT       <=    YES         YES        0        0",
        "mem                 mem        INT       <=    YES         YES        0        0")


def _write(cell, name, text):
    path = os.path.join(cell.root, name)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def configure(cell):
    complexes = cell.run("qconf", "-sc", check=True).stdout + "\n".join(ROWS) + "\n"
    cell.run("qconf", "-Mc", _write(cell, "complex.new", complexes), check=True)
    cell.run("qconf", "-mattr", "exechost", "complex_values", f"lic={LICENSES}", "global", check=True)
    for host in HOSTS:
        cell.run("qconf", "-mattr", "exechost", "complex_values", f"mem={MEM}", host, check=True)
    cell.run("qconf", "-Arqs", _write(cell, "rqs.new", RQS), check=True)
    cell.run("qconf", "-Mp", _write(cell, "smp.new", SMP), check=True)
    sched = cell.run("qconf", "-ssconf", check=True).stdout
    sched = re.sub(r"^max_reservation\s.*$", "max_reservation 20", sched, flags=re.M)
    cell.run("qconf", "-Msconf", _write(cell, "sched.new", sched), check=True)


def start_execds(cell):
    procs = [subprocess.Popen(["gridtools", "execd", "--host", h], env=cell.env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for h in HOSTS]
    for host in HOSTS:
        wait_for(lambda h=host: os.path.exists(os.path.join(cell.root, "spool", "execd", h, "execd.lock")))
    return procs


def _at(seconds):
    return time.strftime("%Y%m%d%H%M.%S", time.localtime(time.time() + seconds))


def reserve(cell, begin, length):
    """An advance reservation of AR_SLOTS smp slots from ``begin`` s for ``length`` s."""
    proc = cell.run("qrsub", "-a", _at(begin), "-d", str(length), "-pe", "smp", str(AR_SLOTS), check=True)
    return int(re.search(r"reservation (\d+)", proc.stdout).group(1))


def random_request(rng):
    """qsub options of one random array job (its tasks share them); every job fits an
    empty host."""
    slots = rng.randint(2, 3) if rng.random() < 0.25 else 1
    resources = [f"h_rt={rng.choice((2, 3, 5))}"]
    if rng.random() < 0.4:
        resources.append(f"lic={rng.randint(1, min(3, LICENSES // slots))}")
    if rng.random() < 0.5:
        resources.append(f"mem={rng.randint(1, min(3, MEM // slots))}")
    words = ["-l", ",".join(resources)]
    if slots > 1:
        words += ["-pe", "smp", str(slots)]
    if rng.random() < 0.3:
        words += ["-R", "y"]
    return words


def submit_all(cell, workdir, rng, arrays, tasks, ar_id, ar_jobs):
    """Submit ``arrays`` random array jobs of ``tasks`` tasks and ``ar_jobs`` into the AR;
    returns how many tasks there are."""
    common = ["-o", "/dev/null", "-j", "y", "-b", "y"]
    # the reservation's jobs first: they must be in before its window closes
    cell.run("qsub", "-t", f"1-{ar_jobs}", "-ar", str(ar_id), "-l", "h_rt=2", *common, "sleep", "1",
             cwd=workdir, check=True)
    for _ in range(arrays):
        cell.run("qsub", "-t", f"1-{tasks}", *random_request(rng), *common, "sleep", "1",
                 cwd=workdir, check=True)
    return arrays * tasks + ar_jobs


# ---------------------------------------------------------------- the check

def _category_values(category):
    """(lic, mem per slot, ar id) from an accounting record's category field."""
    found = {"lic": 0, "mem": 0}
    match = re.search(r"-l (\S+)", category)
    if match:
        for item in match.group(1).split(","):
            name, _, value = item.partition("=")
            if name in found:
                found[name] = int(value)
    ar = re.search(r"-ar (\d+)", category)
    return found["lic"], found["mem"], int(ar.group(1)) if ar else 0


def usage_intervals(records):
    """(start, end, host, slots, lic, mem, ar) of every record that ran."""
    found = []
    for r in records:
        start, end = int(r[9]), int(r[10])
        if start == 0:
            continue
        lic, mem, ar = _category_values(r[39] if len(r) > 39 else "")
        found.append((start, end, r[1], int(r[34]), lic, mem, ar))
    return found


def violations(intervals, ar):
    """Every moment something was oversubscribed (empty when nothing ever was)."""
    problems = []
    events = sorted({i[0] for i in intervals})
    for t in events:
        active = [i for i in intervals if i[0] <= t < i[1]]
        lic = sum(i[4] * i[3] for i in active)
        if lic > LICENSES:
            problems.append(f"t={t}: lic {lic} > {LICENSES}")
        for host in HOSTS:
            here = [i for i in active if i[2] == host]
            slots = sum(i[3] for i in here)
            outside = sum(i[3] for i in here if not i[6])
            mem = sum(i[5] * i[3] for i in here)
            held = ar["slots"].get(host, 0) if ar["start"] <= t < ar["end"] else 0
            if slots > SLOTS:
                problems.append(f"t={t} {host}: {slots} slots > {SLOTS}")
            if outside > QUOTA:
                problems.append(f"t={t} {host}: {outside} slots outside the reservation > quota {QUOTA}")
            if outside + held > SLOTS:
                problems.append(f"t={t} {host}: {outside} slots beside {held} reserved > {SLOTS}")
            if mem > MEM:
                problems.append(f"t={t} {host}: mem {mem} > {MEM}")
    for i in intervals:
        if i[6] and (i[2] not in ar["slots"] or i[0] < ar["start"] or i[1] > ar["end"] + 1):
            problems.append(f"AR job outside the reservation: {i}")
    return problems


def ar_window(cell, ar_id):
    from gridtools.formats import spoolyaml
    with open(os.path.join(cell.root, "spool", "ars", str(ar_id))) as fh:
        data = spoolyaml.load(fh.read())
    slots = {}
    for _q, host, n in data["granted"]:
        slots[host] = slots.get(host, 0) + int(n)
    return {"start": int(data["start"]), "end": int(data["end"]), "slots": slots}


def run(workdir, arrays=48, tasks=5, ar_jobs=10, seed=7, timeout=120):
    """Run the whole stress; returns (tasks, intervals, problems, seconds)."""
    rng = random.Random(seed)
    cell = make_cell(slots=SLOTS, hosts=list(HOSTS))
    execds = start_execds(cell)
    began = time.time()
    try:
        configure(cell)
        ar_id = reserve(cell, 4, 20)
        ar = ar_window(cell, ar_id)
        total = submit_all(cell, workdir, rng, arrays, tasks, ar_id, ar_jobs)
        wait_for(lambda: len(cell.accounting()) >= total, timeout=timeout, interval=0.5)
        intervals = usage_intervals(cell.accounting())
        return total, intervals, violations(intervals, ar), time.time() - began
    finally:
        for proc in execds:
            proc.terminate()
        for proc in execds:
            proc.wait(timeout=10)
        destroy_cell(cell)
