#!/usr/bin/env python3
"""condor_status on a cell of 100 execution hosts (800 slots).

    python bench/bench_condor_status.py [--hosts N] [--slots S] [--repeat R]

Makes a temporary cell of N hosts with S slots each, starts its daemon and
waits for its first status, then prints:

- the daemon's cost of building every slot ad for the status (median and
  best of R builds, in this process);
- the wall time of ``condor_status`` (the default table), ``condor_status
  -af Name State`` and ``condor_status -total`` as a user runs them (median
  and best of R runs), next to ``qhost`` for comparison.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))


def run(env, *argv):
    began = time.perf_counter()
    proc = subprocess.run(list(argv), env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{argv}: {proc.stderr}")
    return time.perf_counter() - began, proc.stdout


def timed(env, repeat, *argv):
    times = [run(env, *argv)[0] for _ in range(repeat)]
    return statistics.median(times), min(times)


def build_cost(root, repeat):
    """Seconds to build every slot ad of the cell, as the daemon does for its status."""
    os.environ["GRIDTOOLS_ROOT"] = root
    from gridtools.daemon.condor import Condor
    from gridtools.daemon.state import State
    from gridtools.exec import load
    state = State()
    state.reload_config(force=True)
    state.condor = Condor()
    state.condor.recover(state)
    from gridtools.daemon import view
    sample = load.sample()
    loads = {h: sample for h in view.exec_hosts(state.config)}
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        state.condor._published = None
        rows = state.condor.published(state, None, loads, time.time())["slots"]
        times.append(time.perf_counter() - began)
    return len(rows), statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="gtbench-")
    env = dict(os.environ, GRIDTOOLS_ROOT=root, GRIDTOOLS_NO_AUTOSTART="1",
               PATH=os.pathsep.join([os.path.join(REPO, "bin"), os.path.dirname(sys.executable),
                                     os.environ.get("PATH", "")]))
    hosts = [f"node{i:03d}" for i in range(args.hosts)]
    try:
        init = ["gridtools", "init", "--slots", str(args.slots)]
        for host in hosts:
            init += ["--host", host]
        run(env, *init)
        count, median, best = build_cost(root, args.repeat)
        print(f"slot ads built by the daemon: {count} in {median * 1000:.1f} ms (best {best * 1000:.1f} ms)")
        run(env, "gridtools", "daemon", "start")
        end = time.time() + 60
        while time.time() < end:
            out = subprocess.run(["condor_status", "-total"], env=env, capture_output=True, text=True)
            if out.returncode == 0 and f"Total {args.hosts * args.slots:5d}".split() [1] in out.stdout:
                break
            time.sleep(0.2)
        for label, argv in (("condor_status", ["condor_status"]),
                            ("condor_status -af Name State", ["condor_status", "-af", "Name", "State"]),
                            ("condor_status -total", ["condor_status", "-total"]),
                            ("qhost", ["qhost"])):
            median, best = timed(env, args.repeat, *argv)
            print(f"{label:32s} {median * 1000:7.1f} ms (best {best * 1000:.1f} ms)")
    finally:
        subprocess.run(["gridtools", "daemon", "stop"], env=env, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
