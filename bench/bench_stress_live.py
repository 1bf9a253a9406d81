#!/usr/bin/env python3
"""A larger stress run against a real daemon and four execution daemons.

    python bench/bench_stress_live.py [--arrays N] [--tasks K] [--ar-jobs M] [--seed S]

Submits N random array jobs of K tasks (consumables, a per-host quota, parallel
jobs, -R y) and M jobs into an advance reservation (default 200 x 5 + 20: over
1,000 jobs), waits for all of them and checks from the accounting records that no
consumable, slot count, quota or reservation was ever oversubscribed (see
tests/stresscell.py). Prints the number of jobs, the problems found and the time.
Run as root from the repository (it makes a cell under /tmp).
"""

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))

import stresscell  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arrays", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--ar-jobs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="gtstress-", dir="/tmp")
    os.chmod(workdir, 0o777)
    total, intervals, problems, seconds = stresscell.run(
        workdir, args.arrays, args.tasks, args.ar_jobs, args.seed, timeout=3600)
    print(f"{total} jobs, {len(intervals)} accounted in {seconds:.1f} s; "
          f"{len(problems)} moments oversubscribed")
    for line in problems[:20]:
        print("  " + line)
    return 1 if problems or len(intervals) != total else 0


if __name__ == "__main__":
    sys.exit(main())
