"""Fuzzing every parser with mutated input (see tests/fuzzing.py; bench/fuzz.py runs
more of it with any seed).

In process: every parser -- submit options (qsub, qalter, qrsh), sge_request
files, ``#$`` lines, qstat, qhost, qacct, qdel, qhold, qmod and qconf command
lines, qconf attribute changes as the daemon applies them, every qconf object
format, the spool files and accounting lines -- gets ``COUNT`` mutated inputs,
and must return or raise one of the project's errors as one line.

Through the real commands: ``COMMAND_LINES`` mutated command lines run against
real cells with their daemons; none may end in a traceback, a refusal says
why, and a refusal that reports nothing done leaves the cell as it was.
"""

import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import fuzzing
from conftest import destroy_cell, make_cell, unanswered, wait_for

#: the fixed seed of the continuous integration run
SEED = 20261201
#: mutated inputs per parser
COUNT = 10_000
#: mutated command lines through the real commands (split among two cells)
COMMAND_LINES = 300


def test_every_parser_takes_mutated_input(monkeypatch):
    root = tempfile.mkdtemp(prefix="gtfuzz-")
    monkeypatch.setenv("GRIDTOOLS_ROOT", root)
    try:
        fuzzing.make_cell(root)
        names = [t.name for t in fuzzing.make_targets(root)]
        assert len(names) >= 30
        fed, findings = fuzzing.run_parallel(root, SEED, COUNT, workers=2)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert not findings, "\n\n".join(str(f) for f in findings[:10])
    assert fed == COUNT * len(names)


def _settle(c):
    """Wait until the daemon answered every request a command left."""
    wait_for(lambda: not unanswered(c.root), timeout=20)


def _usage_lines(c):
    lines = set()
    for name in fuzzing.COMMANDS:
        lines.update(c.run(name, "-help").stdout.splitlines())
    return lines


def _feed(c, argv_list, workdir):
    usage = _usage_lines(c)
    problems = []
    for argv in argv_list:
        before = fuzzing.cell_digest(c.root)
        try:
            proc = subprocess.run(argv, capture_output=True, env=dict(c.env, EDITOR="true"), cwd=workdir,
                                  input=b"true\n", timeout=60)
        except subprocess.TimeoutExpired:
            problems.append(f"{argv!r}: no end within 60 s")
            continue
        out = proc.stdout.decode("utf-8", "backslashreplace")
        err = proc.stderr.decode("utf-8", "backslashreplace")
        _settle(c)
        difference = fuzzing.changed(before, fuzzing.cell_digest(c.root))
        problem = fuzzing.judge(argv, proc.returncode, out, err, usage, difference)
        if problem:
            problems.append(f"{argv!r}: {problem}")
    return problems


def test_mutated_command_lines_through_the_real_commands(workdir):
    lines = fuzzing.command_lines(SEED, COMMAND_LINES)
    cells = [make_cell(), make_cell()]
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            parts = pool.map(_feed, cells, [lines[0::2], lines[1::2]], [workdir, workdir])
            problems = [p for part in parts for p in part]
    finally:
        for c in cells:
            destroy_cell(c)
    assert not problems, "\n".join(problems[:20])
