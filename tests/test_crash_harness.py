"""The kill -9 harness: the dispatcher killed at 120 random moments (at its crash
points in intake, pass, start, reap, publish and start-up, and by the harness at any
moment) over a stream of jobs loses no job, runs none twice, accounts none twice, and
every ``qsub -sync y`` returns. ``bench/crash_harness.py`` runs it larger (10,000 kills)."""

import importlib.util
import os
import sys

import pytest

from conftest import REPO

KILLS = int(os.environ.get("GRIDTOOLS_CRASH_KILLS", "120"))


def _harness_module():
    path = os.path.join(REPO, "bench", "crash_harness.py")
    spec = importlib.util.spec_from_file_location("crash_harness", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hundreds_of_kills_of_the_dispatcher_lose_nothing(monkeypatch):
    if not hasattr(os, "pidfd_open"):
        pytest.skip("needs Linux process file descriptors")
    module = _harness_module()
    monkeypatch.syspath_prepend(os.path.join(REPO, "src"))
    cwd = os.getcwd()
    harness = module.Harness(kills=KILLS, jobs=KILLS // 3, syncs=8, seed=1009)
    try:
        with monkeypatch.context() as patch:
            for name in ("GRIDTOOLS_ROOT", "GRIDTOOLS_HOST", "GRIDTOOLS_NO_AUTOSTART"):
                patch.delenv(name, raising=False)
            problems = harness.run()
            report = harness.report(problems)
    finally:
        os.chdir(cwd)
        harness.cleanup()
    sys.stdout.write(report + "\n")
    assert sum(harness.kills.values()) >= KILLS
    assert set(harness.phases) >= {"intake", "pass", "start", "reap", "publish"}
    assert not harness.timed_out, report
    assert problems == [], report
