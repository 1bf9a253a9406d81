#!/usr/bin/env python3
"""How fast the ClassAd engine evaluates, parses and matches.

    python bench/bench_classad.py [--seconds N]

Prints evaluations per second of a typical job Requirements expression
(nine terms) against a machine ad, of a short START expression, of
symmetric_match and rank, and the rate of parsing new (uncached) and
repeated (cached) expression text.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from gridtools.classad import ClassAd, parse, rank, symmetric_match  # noqa: E402
from gridtools.classad import grammar  # noqa: E402

REQUIREMENTS = ('(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && '
                "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
                "(TARGET.Cpus >= RequestCpus) && (TARGET.LoadAvg < 0.5) && "
                '(TARGET.KeyboardIdle > 15 * 60) && (Owner =!= "rival") && '
                "(TARGET.HasFileTransfer || TARGET.FileSystemDomain == FileSystemDomain)")
START = 'KeyboardIdle > 15 * 60 || Owner == "coltrane"'


def ads():
    job = ClassAd({"Owner": "alice", "RequestMemory": 1024, "RequestCpus": 2,
                   "RequestDisk": 1000, "FileSystemDomain": "example.org",
                   "Requirements": parse(REQUIREMENTS), "Rank": parse("TARGET.Memory")})
    machine = ClassAd({"Arch": "X86_64", "OpSys": "LINUX", "Memory": 4096, "Cpus": 8,
                       "Disk": 100000, "LoadAvg": 0.1, "KeyboardIdle": 1000,
                       "HasFileTransfer": True, "FileSystemDomain": "example.org",
                       "Requirements": parse(START), "Rank": parse('Owner == "alice"')})
    return job, machine


def rate(fn, seconds):
    """Calls of ``fn`` per second, measured for about ``seconds``."""
    count, start = 0, time.perf_counter()
    batch = 100
    while True:
        for _ in range(batch):
            fn()
        count += batch
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed
        batch = min(batch * 2, 20000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    seconds = parser.parse_args().seconds
    job, machine = ads()
    requirements, start = parse(REQUIREMENTS), parse(START)
    assert requirements.eval(job, machine) is True
    counter = iter(range(10 ** 9))
    results = [
        ("Requirements (9 terms) evaluations", rate(lambda: requirements.eval(job, machine), seconds)),
        ("START (2 terms) evaluations", rate(lambda: start.eval(machine, job), seconds)),
        ("symmetric_match calls", rate(lambda: symmetric_match(job, machine), seconds)),
        ("rank calls", rate(lambda: rank(job, machine), seconds)),
        ("parses of new text", rate(lambda: grammar.run(
            f"{REQUIREMENTS} && x{next(counter)}", "start_expr"), seconds)),
        ("parses of cached text", rate(lambda: parse(REQUIREMENTS), seconds)),
    ]
    for label, per_second in results:
        print(f"{label:40s} {per_second:12,.0f} /s  {1e6 / per_second:9.2f} us each")


if __name__ == "__main__":
    main()
