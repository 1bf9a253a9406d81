"""What the tests of unmodified third-party clients share (test_sge_clients.py,
test_condor_clients.py)."""

import os
import sys


def client_env(cell, monkeypatch):
    """The cell's environment in this process, where the client library runs its commands."""
    for key in ("GRIDTOOLS_ROOT", "PATH", "GRIDTOOLS_HOST", "GRIDTOOLS_NO_AUTOSTART", "TZ"):
        monkeypatch.setenv(key, cell.env[key])


def worker_init():
    """parsl's worker_init that finds its worker pool in this virtual environment."""
    return f"export PATH={os.path.dirname(sys.executable)}:$PATH"


def parsl_adds(parsl, config, while_loaded=None):
    """Run a parsl app (40 + 2) with ``config`` loaded; ``while_loaded()`` runs after it,
    before parsl shuts down (and cancels its blocks)."""
    namespace = {"__name__": "__main__"}          # so that the app travels by value, not by module
    exec("def add(a, b):\n    return a + b\n", namespace)
    add = parsl.python_app(namespace["add"])
    with parsl.load(config):
        assert add(40, 2).result(timeout=120) == 42
        if while_loaded is not None:
            while_loaded()
