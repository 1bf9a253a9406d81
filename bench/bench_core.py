#!/usr/bin/env python3
"""Figures of the Grid Engine core, measured on a scratch cell. Prints, does not assert.

    python bench/bench_core.py [--quick]

- qsub latency: median wall time of 50 ``qsub -b y true`` (held, so nothing runs)
- submit->start: median over 20 jobs on an idle cell of (job start - qsub call)
- makespan: 1,000 ``/bin/true`` jobs queued while the daemon is stopped, then the
  daemon started: time until the last one ended (2 slots)
- qstat latency: median of 20 plain ``qstat`` with 10,000 pending jobs
- a busy cell: 100 hosts, 10,000 pending jobs in 100 request profiles that no host
  can run; median over 5 of (start of a new runnable job - its qsub call)
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))


def make_env(root):
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update({"GRIDTOOLS_ROOT": root, "GRIDTOOLS_NO_AUTOSTART": "1",
                "PATH": os.pathsep.join([os.path.join(REPO, "bin"), os.path.dirname(sys.executable),
                                         env.get("PATH", "")])})
    return env


def run(env, *args, **kw):
    return subprocess.run(list(args), env=env, capture_output=True, text=True, **kw)


def timed(env, args, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        run(env, *args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def new_cell(slots=2):
    root = tempfile.mkdtemp(prefix="gtbench-")
    env = make_env(root)
    run(env, "gridtools", "init", "--slots", str(slots), check=True)
    queue = os.path.join(root, "etc", "queues", "all.q")
    text = open(queue).read().replace("np_load_avg=1.75", "NONE")
    open(queue, "w").write(text)
    os.environ["GRIDTOOLS_ROOT"] = root
    return root, env


def task_state(jid):
    from gridtools.spool import jobs
    state = jobs.read_state(jid) or {}
    return (state.get("tasks") or {}).get("1") or {}


def bench_qsub(env, n):
    return timed(env, ["qsub", "-h", "-b", "y", "true"], n)


def bench_start_latency(env, n):
    lat = []
    for _ in range(n):
        t0 = time.time()
        out = run(env, "qsub", "-terse", "-b", "y", "true").stdout
        jid = int(out)
        while not task_state(jid).get("start_time"):
            time.sleep(0.002)
        lat.append(task_state(jid)["start_time"] - t0)
        while task_state(jid).get("state") != "finished":
            time.sleep(0.005)
    return statistics.median(lat)


def submit_many(count, **fields):
    """Queue ``count`` jobs through the spool API as qsub does (fast set-up for benches)."""
    from gridtools.cli.sge import options, submit
    from gridtools.spool import ids, requests
    req = options.fresh_request()
    req.update(binary=True, **fields)
    first = ids.allocate("job", count)
    for jid in first:
        spec = submit.finish_spec(req, jid, "true", "/tmp", [], command="/bin/true")
        requests.write("submit", {"job": spec})
    return first


def wait_all_finished(ids, timeout):
    end = time.time() + timeout
    pending = list(ids)
    while pending and time.time() < end:
        pending = [j for j in pending if task_state(j).get("state") != "finished"]
        if pending:
            time.sleep(0.05)
    return not pending


def bench_makespan(env, count):
    run(env, "gridtools", "daemon", "stop")
    ids = submit_many(count)
    t0 = time.time()
    run(env, "gridtools", "daemon", "start", check=True)
    ok = wait_all_finished(ids, 600)
    return time.time() - t0, ok


def bench_qstat(env, count, n):
    run(env, "gridtools", "daemon", "stop")
    ids = submit_many(count, user_hold=True)
    run(env, "gridtools", "daemon", "start", check=True)
    from gridtools.spool import status
    while True:
        snap = status.read() or {}
        if len({r["id"] for r in snap.get("rows", [])}) >= len(ids):
            break
        time.sleep(0.2)
    lines = run(env, "qstat").stdout.count("\n")
    return timed(env, ["qstat"], n), lines


def bench_busy_start(count=10_000, hosts=100, n=5):
    """Start latency of a runnable job among ``count`` unrunnable ones on ``hosts`` hosts."""
    root = tempfile.mkdtemp(prefix="gtbench-")
    env = make_env(root)
    names = [f"node{i:03d}" for i in range(hosts)]
    run(env, "gridtools", "init", "--slots", "2", *[a for h in names for a in ("--host", h)], check=True)
    queue = os.path.join(root, "etc", "queues", "all.q")
    text = open(queue).read().replace("np_load_avg=1.75", "NONE")
    text = "\n".join("h_vmem                1G" if line.startswith("h_vmem") else line
                      for line in text.splitlines()) + "\n"
    open(queue, "w").write(text)
    os.environ["GRIDTOOLS_ROOT"] = root
    try:
        for profile in range(100):
            submit_many(count // 100, resources={"hard": {"h_vmem": f"{profile + 2}G"}, "soft": {}})
        run(env, "gridtools", "daemon", "start", check=True)
        from gridtools.spool import status
        while len({r["id"] for r in (status.read() or {}).get("rows", [])}) < count:
            time.sleep(0.2)
        return bench_start_latency(env, n)
    finally:
        run(env, "gridtools", "daemon", "stop")
        shutil.rmtree(root, ignore_errors=True)


def main():
    quick = "--quick" in sys.argv
    root, env = new_cell()
    try:
        run(env, "gridtools", "daemon", "start", check=True)
        print(f"qsub latency (median of 50):             {bench_qsub(env, 50) * 1000:7.1f} ms")
        run(env, "qdel", "-u", "*")
        time.sleep(1)
        print(f"submit->start, idle cell (median of 20): {bench_start_latency(env, 20) * 1000:7.1f} ms")
        count = 200 if quick else 1000
        span, ok = bench_makespan(env, count)
        print(f"makespan of {count} /bin/true on 2 slots:   {span:7.1f} s{'' if ok else ' (incomplete)'}")
        pend = 1000 if quick else 10000
        lat, lines = bench_qstat(env, pend, 20)
        print(f"qstat with {pend} pending jobs (median of 20): {lat * 1000:7.1f} ms ({lines} lines)")
    finally:
        run(env, "gridtools", "daemon", "stop")
        shutil.rmtree(root, ignore_errors=True)
    busy = 1000 if quick else 10_000
    print(f"submit->start among {busy} unrunnable jobs on 100 hosts (median of 5): "
          f"{bench_busy_start(busy) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
