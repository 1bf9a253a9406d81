#!/usr/bin/env python3
"""Time of one scheduling pass on simulated snapshots (no daemon, no processes).

    python bench/bench_sched.py [--repeat N]

Prints the median time of ``cycle()`` for:
- 10,000 pending jobs in 100 request profiles that no host can run, 100 hosts
  (target 0.2 s on a 2-core machine);
- 100,000 pending jobs in 100 profiles on 1,000 hosts (target 2 s);
- the first case with 1,000 of the jobs runnable (starts and placement);
- 10,000 pending ``-R y`` jobs with run times that need more of a host
  consumable than 100 busy hosts have left, with ``max_reservation 100``
  and without reservations (target: at most twice the time without).
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
    Ask, Host, PendingJob, QueueInstance, Request, Running, SchedConfig, Snapshot)

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


def busy_snapshot(njobs, nhosts, max_reservation, profiles=100):
    """Three of each host's four slots busy with tasks holding 5G of its 16G ``mem``
    consumable and ending within the next hour; the pending jobs ask -R y, a run time and
    2G to 11G of ``mem`` (more than is left now), in ``profiles`` request profiles."""
    table = complexes()
    mem = Complex("mem", "mem", CxType.MEMORY, Relop.LE, consumable=Consumable.YES)
    table["mem"] = mem
    queues = tuple(QueueInstance("all.q", f"node{h:04d}", 4) for h in range(nhosts))
    hosts = {q.host: Host(q.host, load={"np_load_avg": 0.1 * (i % 7)}, num_proc=4,
                          values=(("mem", 16 * GIB, "16G"),)) for i, q in enumerate(queues)}
    now = 100_000.0
    running = tuple(Running(10_000_000 + 4 * i + s, 1, "busy", ((q.queue, q.host, 1),),
                            amounts=(("mem", 5 * GIB),), start_time=now - 60,
                            end_time=now + 60 * (1 + (i * 7 + s) % 60))
                    for i, q in enumerate(queues) for s in range(3))
    jobs, requests = [], {}
    for i in range(njobs):
        size = i % profiles
        req = Request(hard=(Ask("h_rt", 600 + size, f"h_rt={600 + size}"),
                            Ask("mem", (2 + size % 10) * GIB, f"mem={2 + size % 10}G")), reserve=True,
                      runtime=600.0 + size)
        req = requests.setdefault(req, req)
        jobs.append(PendingJob(id=i + 1, owner=f"user{i % 10}", request=req, submit_time=float(i), tasks=(1,)))
    return Snapshot(now=now, jobs=tuple(jobs), running=running, queues=queues, hosts=hosts,
                    complexes=table, config=SchedConfig(max_reservation=max_reservation),
                    live=frozenset(j.id for j in jobs))


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
    without, _ = timed(busy_snapshot(10_000, 100, 0), args.repeat)
    print(f"{'10,000 pending -R y jobs, 100 busy hosts, max_reservation 0':<66} {without:8.3f}s {'-':>8} {0:>7}")
    seconds, decisions = timed(busy_snapshot(10_000, 100, 100), args.repeat)
    print(f"{'the same with max_reservation 100 (' + str(len(decisions.reserves)) + ' reserved)':<66} "
          f"{seconds:8.3f}s {2 * without:7.3f}s {len(decisions.starts):>7}")


if __name__ == "__main__":
    main()
