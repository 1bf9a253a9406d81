#!/usr/bin/env python3
"""Figures of the HTCondor dialect beside the Grid Engine one, on a scratch cell.
Prints, does not assert.

    python bench/bench_condor.py [--quick]

- submit latency: median wall time of 50 ``condor_submit`` of one held job,
  beside 50 ``qsub -h -b y true``
- query latency: median of 20 ``condor_q`` (the batch view), ``condor_q -nobatch``
  and plain ``qstat`` with 10,000 held jobs in the queue (half of them
  submitted as HTCondor clusters, half as Grid Engine jobs)

The measures of each pair are interleaved (one run of each in turn), so that
a busy spell of a shared machine weighs on all of them alike; each figure's
ratio to its Grid Engine counterpart follows it.
"""

import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import statistics  # noqa: E402

from bench_core import new_cell, run, submit_many  # noqa: E402

SUBMIT = "executable = /bin/true\nhold = true\nqueue\n"


def interleaved(env, commands, n):
    """name -> median wall seconds of ``n`` runs of each command (a name -> argv
    mapping), run one of each in turn."""
    times = {name: [] for name in commands}
    for _ in range(n):
        for name, argv in commands.items():
            t0 = time.perf_counter()
            run(env, *argv)
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(found) for name, found in times.items()}


def bench_submits(env, root, n):
    path = os.path.join(root, "one.sub")
    with open(path, "w") as fh:
        fh.write(SUBMIT)
    found = interleaved(env, {"condor_submit": ["condor_submit", path],
                              "qsub": ["qsub", "-h", "-b", "y", "true"]}, n)
    return found["condor_submit"], found["qsub"]


def submit_condor_many(count, cwd):
    """Queue ``count`` one-proc HTCondor clusters through the spool API as condor_submit does."""
    from gridtools.formats.condor import spec as condor_spec
    from gridtools.formats.condor.jobad import SubmitContext
    from gridtools.formats.condor.submit import parse_submit
    from gridtools.cli.condor.submit import submitter
    from gridtools.spool import ids, requests
    desc = parse_submit(SUBMIT)
    now = time.time()
    who = submitter(now)
    numbers = ids.allocate("job", count)
    for jid in numbers:
        ads = desc.job_ads(jid, SubmitContext(cwd=cwd, owner=who["owner"], now=int(now)))
        requests.write("submit", {"job": condor_spec.cluster_spec(ads, who)})
    return numbers


def wait_published(count):
    from gridtools.spool import status
    while True:
        snap = status.read() or {}
        if len({r["id"] for r in snap.get("rows", [])}) >= count:
            return
        time.sleep(0.2)


def bench_queries(env, root, count, n):
    run(env, "gridtools", "daemon", "stop")
    run(env, "qdel", "-u", "*")
    half = count // 2
    submit_condor_many(half, root)
    submit_many(count - half, user_hold=True)
    run(env, "gridtools", "daemon", "start", check=True)
    wait_published(count)
    lines = run(env, "condor_q", "-nobatch").stdout.count("\n")
    return interleaved(env, {"condor_q": ["condor_q"], "condor_q -nobatch": ["condor_q", "-nobatch"],
                             "qstat": ["qstat"]}, n), lines


def main():
    quick = "--quick" in sys.argv
    root, env = new_cell()
    try:
        run(env, "gridtools", "daemon", "start", check=True)
        condor, qsub = bench_submits(env, root, 20 if quick else 50)
        print(f"condor_submit of one job (median):  {condor * 1000:7.1f} ms  ({condor / qsub:.2f} of qsub's)")
        print(f"qsub of one job (median):           {qsub * 1000:7.1f} ms")
        count = 1000 if quick else 10000
        figures, lines = bench_queries(env, root, count, 10 if quick else 20)
        for name, value in figures.items():
            ratio = f"  ({value / figures['qstat']:.2f} of qstat's)" if name != "qstat" else ""
            print(f"{name:<18} with {count} jobs (median): {value * 1000:7.1f} ms{ratio}")
        print(f"(condor_q -nobatch printed {lines} lines)")
    finally:
        run(env, "gridtools", "daemon", "stop")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
