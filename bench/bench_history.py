#!/usr/bin/env python3
"""Figures of condor_history reading a large history file. Prints, does not assert.

    python bench/bench_history.py [--quick]

A file of N records (about 1 KB each, clusters 1..N, one proc each, the oldest
first) is read for one job near its start, which a scan newest first meets
last: by its cluster, by its cluster.proc, and by its owner (the only job of
that owner), each of which reads the records' banners and parses only the
matching ad; beside it the same job chosen by -constraint, which parses every
ad. For each: the median wall time of a few runs (in this process) and the
number of ads parsed.
"""

import io
import os
import statistics
import sys
import tempfile
import time
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from gridtools.cli.condor import history, historyfile  # noqa: E402

ATTRS = "".join(f"Attr{i} = \"value number {i} of this record\"\n" for i in range(24))


def record(cluster, owner):
    return (f"ClusterId = {cluster}\nProcId = 0\nOwner = \"{owner}\"\nJobStatus = 4\nQDate = {1000 + cluster}\n"
            f"CompletionDate = {1100 + cluster}\nTotalSubmitProcs = 1\nCmd = \"/bin/true\"\n{ATTRS}"
            f"*** ProcId = 0 ClusterId = {cluster} Owner = \"{owner}\" CompletionDate = {1100 + cluster}\n")


def measure(args, runs):
    times, parsed = [], 0
    for _ in range(runs):
        before = historyfile.parses
        t0 = time.perf_counter()
        with redirect_stdout(io.StringIO()):
            history.main(args)
        times.append(time.perf_counter() - t0)
        parsed = historyfile.parses - before
    return statistics.median(times), parsed


def main():
    quick = "--quick" in sys.argv
    sizes = (200, 2000) if quick else (200, 2000, 20000)
    runs = 1 if quick else 3
    with tempfile.TemporaryDirectory() as root:
        os.environ["GRIDTOOLS_ROOT"] = root
        os.mkdir(os.path.join(root, "spool"))
        print(f"{'records':>8} {'query':<28} {'seconds':>9} {'parsed':>7}")
        for size in sizes:
            path = os.path.join(root, f"history{size}")
            with open(path, "w") as fh:
                fh.write("".join(record(c, "bob" if c == 5 else "alice") for c in range(1, size + 1)))
            for name, words in (("cluster 5", ["5"]), ("cluster.proc 5.0", ["5.0"]), ("owner bob", ["bob"]),
                                ("-constraint ClusterId == 5", ["-constraint", "ClusterId == 5"])):
                seconds, parsed = measure([*words, "-file", path, "-af", "ClusterId"], runs)
                print(f"{size:>8} {name:<28} {seconds:>9.3f} {parsed:>7}")


if __name__ == "__main__":
    main()
