"""qstat -pri's npprior column: the POSIX priority (-p) normalized over the fixed range
-1024..1024, (ppri + 1024) / 2048, as Grid Engine 8.1.9 shows it (qstat-pri.txt: -p 0
gives 0.50000, -p -100 gives 0.45117), for pending and running jobs alike and whatever
the other jobs' priorities are."""

import re

from conftest import wait_for
from test_qstat_format import reference
from test_qstat_live import kill_jobs_from, running, submit


def reference_npprior():
    """ppri -> npprior of the pending jobs (not held) of the reference capture."""
    found = {}
    for line in reference("qstat-pri.txt").splitlines()[2:]:
        f = line.split()
        if f[8] == "qw":
            found.setdefault(f[5], set()).add(f[3])
    return found


def pri_rows(cell):
    """job id -> (npprior, ppri) of qstat -pri, once the scheduler has ordered every job."""
    proc = cell.run("qstat", "-pri", "-u", "*")
    assert proc.returncode == 0, proc.stderr
    rows = {}
    for line in proc.stdout.splitlines()[2:]:
        f = line.split()
        if f[1] == "0.00000":
            return None
        rows[int(f[0])] = (f[3], f[5])
    return rows


def test_the_reference_numbers():
    assert reference_npprior() == {"0": {"0.50000"}, "-100": {"0.45117"}}


def test_npprior_is_over_the_fixed_range(cell, workdir):
    try:
        low = submit(cell, "-p", "-200", "-b", "y", "-N", "run_low", "sleep", "120", cwd=workdir)
        plain = submit(cell, "-b", "y", "-N", "run_plain", "sleep", "120", cwd=workdir)
        running(cell, low)
        running(cell, plain)
        waiting = {ppri: submit(cell, "-p", ppri, "-b", "y", "-N", f"p{ppri}", "true", cwd=workdir)
                   for ppri in ("0", "-100", "-300")}
        rows = wait_for(lambda: (lambda r: r if r and set(waiting.values()) <= set(r) else None)(pri_rows(cell)))
        expected = reference_npprior()
        for ppri, job in waiting.items():
            assert rows[job][1] == ppri
            if ppri in expected:
                assert {rows[job][0]} == expected[ppri]
        assert rows[waiting["-300"]][0] == "0.35352"          # 724 / 2048
        assert rows[low] == ("0.40234", "-200")                # 824 / 2048, running
        assert rows[plain] == ("0.50000", "0")
    finally:
        kill_jobs_from(workdir)


def test_a_lone_pending_job_is_not_stretched_to_the_ends(cell, workdir):
    """One pending job with -p -100 and nothing else: 0.45117 still, not 0.5."""
    cell.run("qconf", "-mattr", "queue", "slots", "0", "all.q", check=True)
    job = submit(cell, "-p", "-100", "-b", "y", "true", cwd=workdir)
    rows = wait_for(lambda: (lambda r: r if r and job in r else None)(pri_rows(cell)))
    assert rows[job] == ("0.45117", "-100")
    assert re.match(r"\d\.\d{5}$", rows[job][0])
