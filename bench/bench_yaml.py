#!/usr/bin/env python3
"""The spool's YAML subset beside pyyaml's C loader and dumper, on spool documents.

    python bench/bench_yaml.py [--reps N]

For a job description, a job state and a task result (as the daemon reads and
writes them by the thousand), prints microseconds per load and per dump with
``formats.spoolyaml`` and with ``yaml.CSafeLoader`` / ``yaml.CSafeDumper``,
and checks that both read the same value. Prints; asserts nothing else.
"""

import argparse
import os
import sys
import timeit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))


def documents():
    """name -> a value as the spool holds it."""
    from gridtools.cli.sge import options, submit
    req = options.fresh_request()
    req.update(binary=True)
    spec = submit.finish_spec(req, 17, "true", "/tmp", [], command="/bin/true")
    spec.update(owner="someone", uid=1000, gid=1000, group="users")
    state = {"tasks": {1: {"state": "finished", "start_time": 1764600000.25, "end_time": 1764600001.5,
                           "exit_status": 0, "granted": [["all.q", "node1", 1]], "host": "node1"}}}
    result = {"exit_status": 0, "end_time": 1764600001.5, "failed": 0,
              "usage": {"ru_utime": 0.001, "ru_stime": 0.002, "ru_maxrss": 1024, "cpu": 0.003}}
    return {"job description": spec, "job state": state, "task result": result}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args(argv)
    import yaml
    from gridtools.formats import spoolyaml
    if not getattr(yaml, "__with_libyaml__", False):
        print("pyyaml has no C extension here: nothing to compare")
        return 0
    n = args.reps
    print(f"{'document':<16} {'chars':>5}  {'load: subset':>12} {'C loader':>9}  {'dump: subset':>12} {'C dumper':>9}")
    for name, value in documents().items():
        text = spoolyaml.dump(value)
        same = yaml.load(text, Loader=yaml.CSafeLoader) == spoolyaml.load(text)
        times = [timeit.timeit(f, number=n) / n * 1e6 for f in (
            lambda: spoolyaml.load(text), lambda: yaml.load(text, Loader=yaml.CSafeLoader),
            lambda: spoolyaml.dump(value), lambda: yaml.dump(value, Dumper=yaml.CSafeDumper))]
        print(f"{name:<16} {len(text):>5}  {times[0]:>9.0f} us {times[1]:>6.0f} us  {times[2]:>9.0f} us "
              f"{times[3]:>6.0f} us" + ("" if same else "  (values differ!)"))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
