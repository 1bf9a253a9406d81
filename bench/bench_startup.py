#!/usr/bin/env python3
"""Start-up of the hot commands beside the interpreter's floor, interleaved, on a scratch cell.

    python bench/bench_startup.py [--bin DIR] [--reps N] [--pending N] [--only NAMES]

Each repetition runs every measure once, in turn (each repetition starting
one measure further on), so that a busy spell of a shared machine touches
all of them alike. Before each run the daemon finishes what the last run
asked of it (``settle``): taking a submission in while the next command
starts, it would weigh on whatever comes after a submission, which in a
fixed turn is not every measure alike. The table gives the median and the
fastest run of each in milliseconds, and the median's ratio to the floor
(``python3 -I -S -c pass`` with the interpreter the launchers use). The
measures, on a cell with a running daemon:

- floor: the bare interpreter
- qsub: ``qsub -h -b y true``
- condor_submit: one held job from a submit file
- qsub dask, condor_submit dask: one held job from the files dask-jobqueue writes
  (its SGECluster's job script, its HTCondorCluster's submit description, with the
  expressions and macros it uses), as real clients submit
- qdel: ``qdel <id>`` of a held job (the daemon's answer included)
- qstat, condor_q: with ``--pending`` held jobs in the queue (default 10,000)

After the table, each HTCondor command's ratio to its Grid Engine
counterpart (condor_submit to qsub, condor_q to qstat): medians, fastest
runs, CPU medians, and the medians above the floor (the commands' own work,
without the interpreter's start-up both pay).

Prints; asserts nothing. Give an installed copy's bin/ (``--bin``) to measure
what users run: a checkout's bin/ measures the same code from src/.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_table import Gridtools  # noqa: E402

SUBMIT = "executable = /bin/true\nhold = true\nqueue\n"

#: dask-jobqueue's job script for SGECluster(cores=1, memory="1GiB", walltime="00:10:00",
#: log_directory=LOGS), and its submit description for HTCondorCluster with the same
#: settings (held, so that nothing runs)
DASK_SGE = """#!/usr/bin/env bash

#$ -N dask-worker
#$ -l h_rt=00:10:00
#$ -e LOGS/
#$ -o LOGS/
#$ -cwd
#$ -j y

/usr/bin/python3 -m distributed.cli.dask_worker tcp://127.0.0.1:39311 --name SGECluster-1 --nthreads 1 \
--memory-limit 1.00GiB --nanny --death-timeout 60 --interface lo
"""
DASK_CONDOR = """#!/usr/bin/env condor_submit

MY.DaskWorkerName = "htcondor--$F(MY.JobId)--"
batch_name = HTCondorCluster-0
RequestCpus = MY.DaskWorkerCores
RequestMemory = floor(MY.DaskWorkerMemory / 1048576)
RequestDisk = floor(MY.DaskWorkerDisk / 1024)
MY.JobId = "$(ClusterId).$(ProcId)"
MY.DaskWorkerCores = 1
MY.DaskWorkerMemory = 1073741824
MY.DaskWorkerDisk = 1073741824
LogDirectory = LOGS
Output = $(LogDirectory)/worker-$F(MY.JobId).out
Error = $(LogDirectory)/worker-$F(MY.JobId).err
Log = $(LogDirectory)/worker-$(ClusterId).log
Stream_Output = True
Stream_Error = True
hold = true

Arguments = "-c '/usr/bin/python3 -m distributed.cli.dask_worker tcp://127.0.0.1:39311 --name HTCondorCluster-0 \
--nthreads 1 --memory-limit 1.00GiB --nanny --death-timeout 60'"
Executable = /bin/sh

Queue
"""


def timed(args, env):
    """(wall, user + system CPU) milliseconds of one run of ``args``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/tmp")
    _pid, _status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = 0
    return wall * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def measures(cell, python, files, victims):
    """name -> a function that runs the measure once and returns its milliseconds."""
    env = cell.env
    found = {
        "floor": lambda: timed([python, "-I", "-S", "-c", "pass"], env),
        "qsub": lambda: timed(["qsub", "-h", "-b", "y", "true"], env),
        "condor_submit": lambda: timed(["condor_submit", files["one.sub"]], env),
        "qsub dask": lambda: timed(["qsub", "-h", files["dask.sh"]], env),
        "condor_submit dask": lambda: timed(["condor_submit", files["dask.sub"]], env),
        "qdel": lambda: timed(["qdel", str(victims.pop())], env),
    }
    return found


def listed_ids(cell):
    """Ids of the jobs the cell's own qstat lists (any version's status format)."""
    out = subprocess.run(["qstat", "-u", "*"], env=cell.env, capture_output=True, text=True, cwd="/tmp").stdout
    return [int(line.split()[0]) for line in out.splitlines()[2:] if line.strip()]


def queue_held(cell, count):
    """Queue ``count`` held jobs through qsub's own code, and wait until qstat lists them."""
    from gridtools.cli.sge import options, submit
    from gridtools.spool import ids, requests, wake
    before = len(listed_ids(cell))
    req = options.fresh_request()
    req.update(binary=True, user_hold=True)
    for jid in ids.allocate("job", count):
        spec = submit.finish_spec(req, jid, "true", "/tmp", [], command="/bin/true")
        requests.write("submit", {"job": spec})
    wake.poke()
    while len(listed_ids(cell)) < before + count:
        time.sleep(0.2)


def run_rounds(table, reps, results, quiet=None):
    """``reps`` rounds of every measure, each round starting one measure further on, each
    run after ``quiet()`` (when given) returns."""
    names = list(table)
    for rep in range(reps):
        turn = rep % len(names)
        for name in names[turn:] + names[:turn]:
            if quiet is not None:
                quiet()
            results.setdefault(name, []).append(table[name]())


def daemon_runtime(cell):
    """A function that returns the nanoseconds of CPU the cell's daemon has used so far
    (its threads' scheduler statistics, which count to the nanosecond where the CPU
    times of /proc/PID/stat count in ticks of 10 ms)."""
    with open(os.path.join(cell.root, "spool", "daemon.pid")) as fh:
        pid = int(fh.read().split()[0])
    tasks = f"/proc/{pid}/task"

    def runtime():
        total = 0
        for task in os.listdir(tasks):
            try:
                with open(f"{tasks}/{task}/schedstat") as fh:
                    total += int(fh.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return total
    return runtime


def settle(cell, still=0.004, limit=2.0):
    """A function that waits until the daemon has taken every request in and has used no
    CPU for ``still`` seconds (at most ``limit`` seconds in all). It waits spinning, not
    sleeping: a CPU left idle for milliseconds is slow to start the next command."""
    folder = os.path.join(cell.root, "spool", "requests")
    runtime = daemon_runtime(cell)

    def wait():
        deadline = time.monotonic() + limit
        last = None
        while time.monotonic() < deadline:
            now = runtime()
            if now == last and not os.listdir(folder):
                return
            last = now
            until = time.monotonic() + still
            while time.monotonic() < until:
                pass
    return wait


def report(results):
    """Wall-clock median, fastest and ratio to the floor; the same for CPU time (the
    command's own user + system time, which a busy machine disturbs less)."""
    floor = statistics.median(w for w, _ in results["floor"])
    cfloor = statistics.median(c for _, c in results["floor"])
    heads = ("median", "fastest", "/ floor", "cpu med", "cpu min", "/ floor")
    print(f"{'measure':<20} " + " ".join(f"{h:>8}" for h in heads[:3]) + "   "
          + " ".join(f"{h:>8}" for h in heads[3:]))
    for name, values in results.items():
        wall = [w for w, _ in values]
        cpu = [c for _, c in values]
        med, cmed = statistics.median(wall), statistics.median(cpu)
        print(f"{name:<20} {med:8.1f} {min(wall):8.1f} {med / floor:8.2f}   "
              f"{cmed:8.1f} {min(cpu):8.1f} {cmed / cfloor:8.2f}")
    for name, beside in COUNTERPARTS.items():
        if name in results and beside in results:
            print(f"{name} / {beside}: median {_ratio(results, name, beside, 0, statistics.median):.2f}, "
                  f"fastest {_ratio(results, name, beside, 0, min):.2f}, "
                  f"cpu median {_ratio(results, name, beside, 1, statistics.median):.2f}, "
                  f"above the floor {_own_ratio(results, name, beside):.2f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


#: the HTCondor commands and the Grid Engine commands they are measured beside
COUNTERPARTS = {"condor_submit": "qsub", "condor_submit dask": "qsub dask", "condor_q": "qstat"}


def _ratio(results, name, beside, column, summary):
    """``summary`` (median, min) of one column (0 wall, 1 CPU) of ``name`` over ``beside``'s."""
    return summary(v[column] for v in results[name]) / summary(v[column] for v in results[beside])


def _own_ratio(results, name, beside):
    """Median wall time above the interpreter's floor of ``name`` over ``beside``'s: how
    much more (or less) work the command itself does."""
    floor = statistics.median(w for w, _ in results["floor (10k)" if name == "condor_q" else "floor"])
    own = [statistics.median(w for w, _ in results[n]) - floor for n in (name, beside)]
    return own[0] / own[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(HERE), "bin"))
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--only", default="", help="comma-separated measures (floor is always run)")
    args = parser.parse_args(argv)
    cell = Gridtools(os.path.abspath(args.bin))
    try:
        python = cell.interpreter()
        logs = os.path.join(cell.root, "logs")
        os.makedirs(logs, exist_ok=True)
        files = {}
        for name, text in (("one.sub", SUBMIT), ("dask.sh", DASK_SGE), ("dask.sub", DASK_CONDOR)):
            files[name] = os.path.join(cell.root, name)
            with open(files[name], "w") as fh:
                fh.write(text.replace("LOGS", logs))
        queue_held(cell, args.reps)
        victims = listed_ids(cell)
        table = measures(cell, python, files, victims)
        wanted = set(args.only.split(",")) if args.only else None
        small = {k: v for k, v in table.items() if k == "floor" or wanted is None or k in wanted}
        results = {}
        quiet = settle(cell)
        run_rounds(small, args.reps, results, quiet)
        big = {"floor": table["floor"], "qstat": lambda: timed(["qstat"], cell.env),
               "condor_q": lambda: timed(["condor_q"], cell.env)}
        big = {k: v for k, v in big.items() if k == "floor" or wanted is None or k in wanted}
        if len(big) > 1:
            queue_held(cell, args.pending)
            big_results = {}
            run_rounds(big, args.reps, big_results, quiet)
            results["floor (10k)"] = big_results.pop("floor")
            results.update(big_results)
        print(f"interpreter: {python}; {args.reps} runs each; {args.pending:,} pending jobs for qstat")
        report(results)
    finally:
        cell.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
