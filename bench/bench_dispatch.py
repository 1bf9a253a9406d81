#!/usr/bin/env python3
"""The dispatcher's own cost per job, without processes: whole daemon ticks in this
process with the tests' FakeExecution (tests/fakeexec.py), which launches nothing and
ends a task when told.

    python bench/bench_dispatch.py [--jobs N] [--slots S] [--profile FILE]

N ``/bin/true`` jobs (default 1,000; with ``--array`` one array job of N tasks, with ``--condor`` one
HTCondor cluster of N procs from condor_submit) are queued and taken in, then the daemon
ticks; after every tick each task launched so far ends (its result written
outside the measured time). Prints the ticks, the ticks' CPU time per job and
per tick, and the peak resident memory of the process.
With ``--profile`` the ticks run under cProfile and the statistics go to FILE.
Asserts nothing.
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(REPO, "src"), os.path.join(REPO, "tests")]


def make_cell(slots):
    root = tempfile.mkdtemp(prefix="gtdispatch-")
    env = dict(os.environ, GRIDTOOLS_ROOT=root, GRIDTOOLS_NO_AUTOSTART="1")
    subprocess.run([os.path.join(REPO, "bin", "gridtools"), "init", "--slots", str(slots)],
                   env=env, check=True, capture_output=True)
    queue = os.path.join(root, "etc", "queues", "all.q")
    with open(queue) as fh:
        text = fh.read().replace("np_load_avg=1.75", "NONE")
    with open(queue, "w") as fh:
        fh.write(text)
    os.environ.update(GRIDTOOLS_ROOT=root, GRIDTOOLS_NO_AUTOSTART="1")
    return root


def queue_condor(count):
    """One HTCondor cluster of ``count`` procs, submitted with condor_submit."""
    submit = os.path.join(os.environ["GRIDTOOLS_ROOT"], "true.sub")
    with open(submit, "w") as fh:
        fh.write(f"executable = /bin/true\nuniverse = vanilla\nqueue {count}\n")
    subprocess.run([os.path.join(REPO, "bin", "condor_submit"), submit], check=True,
                   capture_output=True, cwd=os.environ["GRIDTOOLS_ROOT"])


def queue_jobs(count, array=False):
    from gridtools.cli.sge import options, submit
    from gridtools.spool import ids, requests
    req = options.fresh_request()
    req.update(binary=True)
    if array:
        req["tasks"] = options.parse_task_range(f"1-{count}")
    for jid in ids.allocate("job", 1 if array else count):
        spec = submit.finish_spec(req, jid, "true", "/tmp", [], command="/bin/true")
        requests.write("submit", {"job": spec})


def run(count, slots, profile=None, array=False, condor=False):
    from fakeexec import FakeExecution
    from gridtools.daemon.loop import Daemon
    from gridtools.spool import inbox
    fake = FakeExecution()
    daemon = Daemon(execution=fake)
    daemon.open()
    try:
        if condor:
            queue_condor(count)
        else:
            queue_jobs(count, array)
        while inbox.pending(limit=1):
            daemon.tick()
        profiler = None
        if profile:
            import cProfile
            profiler = cProfile.Profile()
            profiler.enable()
        ticks, ended, cpu, wall = 0, 0, 0.0, 0.0
        while ended < count and ticks < count * 10:
            t0, w0 = time.process_time(), time.perf_counter()
            daemon.tick()
            cpu, wall = cpu + time.process_time() - t0, wall + time.perf_counter() - w0
            ticks += 1
            for job_id, task in fake.running():       # (the shepherds' part: not counted)
                fake.finish(job_id, task)
                ended += 1
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
    finally:
        daemon.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{ended:,} jobs on {slots} slots in {ticks:,} ticks: {cpu:.2f} s CPU ({wall:.2f} s wall)")
    print(f"  {1000 * cpu / max(1, ended):.2f} ms per job, {1000 * cpu / max(1, ticks):.2f} ms per tick")
    print(f"  peak resident memory of this process: {peak:.0f} MiB")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--array", action="store_true", help="one array job of N tasks")
    parser.add_argument("--condor", action="store_true", help="one HTCondor cluster of N procs")
    parser.add_argument("--profile")
    args = parser.parse_args()
    root = make_cell(args.slots)
    try:
        run(args.jobs, args.slots, args.profile, args.array, args.condor)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
