#!/usr/bin/env python3
"""Fuzz every gridtools parser with mutated input: the long run of tests/test_fuzz.py.

    python bench/fuzz.py [--seed N] [--count N] [--workers N] [--commands N] [--only NAME ...]

``--count`` mutated inputs go to every parser in process (default 30,000;
35 parsers, so about a million inputs); ``--commands`` mutated command
lines also run through the real commands against a scratch cell with its
daemon (default 0). Prints each parser's count and every finding (an input
that ended in anything but one of the project's errors as one line, with the
input), and exits 1 when there is one. The same seed gives the same inputs.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))
sys.path.insert(0, os.path.join(REPO, "tests"))

import fuzzing  # noqa: E402


def in_process(args):
    root = tempfile.mkdtemp(prefix="gtfuzz-")
    os.environ["GRIDTOOLS_ROOT"] = root
    try:
        fuzzing.make_cell(root)
        names = args.only or [t.name for t in fuzzing.make_targets(root)]
        began = time.time()
        fed, findings = fuzzing.run_parallel(root, args.seed, args.count, args.workers, names,
                                             stop_after=args.stop_after)
        print(f"{fed} inputs to {len(names)} parsers in {time.time() - began:.1f} s, "
              f"{len(findings)} findings")
        return findings
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _env(root):
    env = dict(os.environ, GRIDTOOLS_ROOT=root, GRIDTOOLS_NO_AUTOSTART="1", GRIDTOOLS_HOST="fuzzhost",
               EDITOR="true")
    env["PATH"] = os.pathsep.join([os.path.join(REPO, "bin"), os.path.dirname(sys.executable), env["PATH"]])
    return env


def through_commands(args):
    root = tempfile.mkdtemp(prefix="gtfuzzcell-")
    os.chmod(root, 0o755)
    env = _env(root)
    work = tempfile.mkdtemp(prefix="gtfuzzwork-")
    subprocess.run(["gridtools", "init", "--slots", "2", "--host", "fuzzhost"], env=env, check=True,
                   capture_output=True)
    subprocess.run(["gridtools", "daemon", "start"], env=env, check=True, capture_output=True)
    try:
        return _feed(root, env, work, fuzzing.command_lines(args.seed, args.commands))
    finally:
        subprocess.run(["gridtools", "daemon", "stop"], env=env, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def _settle(root):
    """Wait until the daemon answered every request (none queued or taken)."""
    end = time.time() + 20
    folders = [os.path.join(root, "spool", name) for name in ("requests", "taken")]
    while any(os.path.isdir(f) and os.listdir(f) for f in folders) and time.time() < end:
        time.sleep(0.02)


def _feed(root, env, work, lines):
    usage = set()
    for name in fuzzing.COMMANDS:
        usage.update(subprocess.run([name, "-help"], env=env, capture_output=True, text=True).stdout.splitlines())
    problems = []
    for argv in lines:
        before = fuzzing.cell_digest(root)
        try:
            proc = subprocess.run(argv, env=env, cwd=work, capture_output=True, input=b"true\n", timeout=60)
        except subprocess.TimeoutExpired:
            problems.append(f"{argv!r}: no end within 60 s")
            continue
        _settle(root)
        problem = fuzzing.judge(argv, proc.returncode, proc.stdout.decode("utf-8", "backslashreplace"),
                                proc.stderr.decode("utf-8", "backslashreplace"), usage,
                                fuzzing.changed(before, fuzzing.cell_digest(root)))
        if problem:
            problems.append(f"{argv!r}: {problem}")
    print(f"{len(lines)} command lines through the real commands, {len(problems)} findings")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=30_000, help="inputs per parser")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: CPUs)")
    parser.add_argument("--commands", type=int, default=0, help="command lines through real commands")
    parser.add_argument("--only", nargs="*", help="parser names (default: all)")
    parser.add_argument("--stop-after", type=int, default=20, help="findings kept per parser")
    args = parser.parse_args()
    findings = [str(f) for f in in_process(args)] if args.count else []
    if args.commands:
        findings += through_commands(args)
    for finding in findings:
        print(finding, end="\n\n")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
