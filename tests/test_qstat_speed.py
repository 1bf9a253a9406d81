"""Plain qstat stays fast and import-lean with 10,000 pending jobs."""

import io
import os
import subprocess
import sys
import time

import pytest

from test_qstat_format import reference_snapshot

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: modules the plain listing must not load (they belong to the other views or to the daemon)
HEAVY = ("gridtools.cli.sge.qstat_views", "gridtools.cli.sge.qstat_report", "gridtools.cli.sge.qstat_j",
         "json", "xml.etree", "fnmatch", "yaml", "lark", "psutil", "gridtools.spool.config",
         "gridtools.formats.spoolyaml", "gridtools.daemon.publish")


def big_snapshot(count=10000):
    snap = reference_snapshot()
    template = snap["jobs"][53]
    now = time.time()
    for i in range(count):
        job_id = 1000 + i
        snap["jobs"][job_id] = dict(template, name=f"job{i}", owner="alice", submit_time=now - i)
        snap["rows"].append({"id": job_id, "tasks": None, "state": "qw", "hold": "", "time": now - i,
                             "queue": "", "slots": 1, "prio": 0.25})
    return snap


@pytest.fixture
def big_cell(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    from gridtools.spool import status
    status.publish(big_snapshot())
    return tmp_path


def test_ten_thousand_pending_jobs_in_well_under_300_ms(big_cell):
    """Measured in CPU time of this process, so that other load on the machine does not count."""
    from gridtools.cli import entry
    best = None
    for _ in range(3):
        out, saved = io.StringIO(), sys.stdout
        start = time.process_time()
        try:
            sys.stdout = out
            assert entry.run("qstat", ["-u", "*"]) == 0
        finally:
            sys.stdout = saved
        elapsed = time.process_time() - start
        best = elapsed if best is None else min(best, elapsed)
    assert len(out.getvalue().splitlines()) == 2 + 11 + 10000
    assert best < 0.3


def test_plain_listing_imports_nothing_heavy(big_cell):
    code = ("import sys, os; sys.stdout = open(os.devnull, 'w'); "
            "from gridtools.cli import entry; entry.run('qstat', ['-u', '*']); "
            "sys.stderr.write('\\n'.join(sorted(sys.modules)))")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    loaded = set(proc.stderr.split())
    assert "gridtools.cli.sge.qstat" in loaded
    assert not [m for m in loaded if m.startswith(HEAVY)]
