#!/usr/bin/env python3
"""Time of one scheduling pass on simulated snapshots (no daemon, no processes).

    python bench/bench_sched.py [--repeat N]

Prints the median time of ``cycle()`` for:
- 10,000 pending jobs in 100 request profiles that no host can run, 100 hosts
  (target 0.2 s on a 2-core machine);
- 100,000 pending jobs in 100 profiles on 1,000 hosts (target 2 s);
- the first case with 1,000 of the jobs runnable (starts and placement).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from gridtools.model.resources import Complex, Consumable, CxType, Relop  # noqa: E402
from gridtools.sched.cycle import cycle  # noqa: E402
from gridtools.sched.snapshot import (  # noqa: E402
    Ask, Host, PendingJob, QueueInstance, Request, Snapshot)

GIB = 1024 ** 3


def complexes():
    table = {}
    for name, short, kind, relop, consumable, urgency in (
            ("slots", "s", CxType.INT, Relop.LE, Consumable.YES, 1000.0),
            ("h_vmem", "h_vmem", CxType.MEMORY, Relop.LE, Consumable.NO, 0.0),
            ("np_load_avg", "nla", CxType.DOUBLE, Relop.GE, Consumable.NO, 0.0)):
        cx = Complex(name, short, kind, relop, consumable=consumable, urgency=urgency)
        table[name] = table[short] = cx
    return table


def snapshot(njobs, nhosts, profiles=100, runnable=0):
    queues = tuple(QueueInstance("all.q", f"node{h:04d}", 4, values=(("h_vmem", 64 * GIB, "64G"),))
                   for h in range(nhosts))
    hosts = {q.host: Host(q.host, load={"np_load_avg": 0.1 * (i % 7)}, num_proc=4)
             for i, q in enumerate(queues)}
    jobs, requests = [], {}
    for i in range(njobs):
        gib = 65 + i % profiles if i >= runnable else 1 + i % 8
        req = Request(hard=(Ask("h_vmem", gib * GIB, f"h_vmem={gib}G"),))
        req = requests.setdefault(req, req)          # as the daemon interns equal requests
        jobs.append(PendingJob(id=i + 1, owner=f"user{i % 10}", request=req,
                               submit_time=float(i), tasks=(1,)))
    return Snapshot(now=float(njobs), jobs=tuple(jobs), running=(), queues=queues, hosts=hosts,
                    complexes=complexes(), live=frozenset(j.id for j in jobs))


def timed(snap, repeat):
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        decisions = cycle(snap)
        times.append(time.perf_counter() - began)
    return statistics.median(times), decisions


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases = [("10,000 pending jobs, 100 profiles, 100 hosts, none runnable", 10_000, 100, 0, 0.2),
             ("10,000 pending jobs, 100 hosts, 1,000 runnable", 10_000, 100, 1_000, None),
             ("100,000 pending jobs, 100 profiles, 1,000 hosts, none runnable", 100_000, 1_000, 0, 2.0)]
    print(f"{'case':<66} {'pass':>9} {'target':>8} {'starts':>7}")
    for label, njobs, nhosts, runnable, target in cases:
        snap = snapshot(njobs, nhosts, runnable=runnable)
        seconds, decisions = timed(snap, args.repeat if njobs <= 10_000 else max(1, args.repeat // 2))
        shown = f"{target:.1f} s" if target else "-"
        print(f"{label:<66} {seconds:8.3f}s {shown:>8} {len(decisions.starts):>7}")


if __name__ == "__main__":
    main()
