#!/usr/bin/env python3
"""Time of one negotiation cycle (sched.negotiator) on a simulated pool.

    python bench/bench_negotiator.py [--repeat N]

10,000 idle jobs of 100 users in 100 autoclusters against 1,000 static slots
(125 hosts of 8 cores), every user at another priority; prints the median and
best CPU time of ``negotiate()`` (target: well under a second on a 2-core
machine) and the time to build the slot ads and job ads it is given.
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from gridtools import ads  # noqa: E402
from gridtools.classad import ClassAd, parse  # noqa: E402
from gridtools.formats.condor_config import Config  # noqa: E402
from gridtools.sched import negotiator as N  # noqa: E402

NOW = 1_700_000_000
REQUIREMENTS = ('(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk)'
                ' && (TARGET.Memory >= RequestMemory) && (TARGET.HasFileTransfer)')


def pool(hosts=125, cores=8):
    cfg = Config({})
    slots = []
    for i in range(hosts):
        host = ads.HostFacts(f"node{i:03d}", cpus=cores, memory=4096 * cores, disk=10**8)
        slots += [N.Slot(ad.eval("Name"), ad) for ad in ads.machine_ads(host, cfg, NOW)]
    return slots


def idle_jobs(users=100, per_user=100):
    req = parse(REQUIREMENTS)
    out = []
    for u in range(users):
        for k in range(per_user):
            n = u * per_user + k
            ad = ClassAd({"Owner": f"user{u}", "ClusterId": n, "ProcId": 0, "QDate": NOW - n,
                          "JobPrio": 0, "RequestCpus": 1, "RequestMemory": 1000 + u, "RequestDisk": 1000,
                          "JobUniverse": 5, "Cmd": "/bin/true", "Iwd": "/tmp"})
            ad["Requirements"] = req
            ad["Rank"] = 0.0
            out.append((f"{n}.0", ad))
    return N.submitters_from(out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    began = time.process_time()
    slots = pool()
    subs = idle_jobs()
    built = time.process_time() - began
    prios = {f"user{u}": 0.5 + u for u in range(100)}
    times = []
    for _ in range(args.repeat):
        began = time.process_time()
        out = N.negotiate(subs, slots, prios, N.NegotiatorConfig(), NOW)
        times.append(time.process_time() - began)
    print(f"ads built in {built:.3f} s; negotiate(): median {statistics.median(times):.3f} s, "
          f"best {min(times):.3f} s; {len(out.matches)} matches, {len(out.rejected)} left idle")


if __name__ == "__main__":
    main()
