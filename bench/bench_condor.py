#!/usr/bin/env python3
"""Figures of the HTCondor dialect beside the Grid Engine one, on a scratch cell.
Prints, does not assert.

    python bench/bench_condor.py [--quick]

- submit latency: median wall time of 50 ``condor_submit`` of one held job,
  beside 50 ``qsub -h -b y true``
- query latency: median of 20 ``condor_q`` (the batch view), ``condor_q -nobatch``
  and plain ``qstat`` with 10,000 held jobs in the queue (half of them
  submitted as HTCondor clusters, half as Grid Engine jobs)
"""

import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_core import new_cell, run, submit_many, timed  # noqa: E402

SUBMIT = "executable = /bin/true\nhold = true\nqueue\n"


def bench_submits(env, root, n):
    path = os.path.join(root, "one.sub")
    with open(path, "w") as fh:
        fh.write(SUBMIT)
    condor = timed(env, ["condor_submit", path], n)
    qsub = timed(env, ["qsub", "-h", "-b", "y", "true"], n)
    return condor, qsub


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
    return {"condor_q": timed(env, ["condor_q"], n),
            "condor_q -nobatch": timed(env, ["condor_q", "-nobatch"], n),
            "qstat": timed(env, ["qstat"], n)}, lines


def main():
    quick = "--quick" in sys.argv
    root, env = new_cell()
    try:
        run(env, "gridtools", "daemon", "start", check=True)
        condor, qsub = bench_submits(env, root, 20 if quick else 50)
        print(f"condor_submit of one job (median):  {condor * 1000:7.1f} ms")
        print(f"qsub of one job (median):           {qsub * 1000:7.1f} ms")
        count = 1000 if quick else 10000
        figures, lines = bench_queries(env, root, count, 10 if quick else 20)
        for name, value in figures.items():
            print(f"{name:<18} with {count} jobs (median): {value * 1000:7.1f} ms")
        print(f"(condor_q -nobatch printed {lines} lines)")
    finally:
        run(env, "gridtools", "daemon", "stop")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
