"""Waiting for the daemon's scheduling passes, for tests that assert something did NOT happen.

Such a test must first know that the daemon looked after the change: a job still pending
a moment after its submission proves nothing if no pass has looked at it yet. Every pass
keeps its figures for the negotiator's ad (``daemon.condor.Condor.decide``), and the
status snapshot the daemon publishes after the pass carries them: ``negotiator.cycle.end``
is the ``now`` of the daemon's round that ran the pass, taken when the round began, before
it took in the requests queued and looked at etc/. A published end later than a moment
``since`` thus proves that a whole pass began after ``since`` and that what it did is
published (the job files it changed were written before that status).

``condor_reschedule`` asks the daemon for a pass at once, as it asks HTCondor's schedd
for a negotiation cycle: the waits below need not wait for the regular pass of the
schedule_interval (15 s by default).
"""

import os
import time

from conftest import wait_for


def last_pass(cell):
    """When the last pass published by the cell's daemon began (the daemon's clock), or
    None when no status shows one."""
    from gridtools.spool import status
    try:
        with open(os.path.join(cell.root, "spool", "status"), "rb") as fh:
            found = status._sections(fh, ("head",))
    except (OSError, EOFError, ValueError, TypeError):
        return None
    head = (found or {}).get("head")
    if not isinstance(head, dict):
        return None
    cycle = (head.get("negotiator") or {}).get("cycle") or {}
    end = cycle.get("end")
    return float(end) if end else None


def reschedule(cell):
    """Ask the daemon for a pass now (``condor_reschedule``); returns once its answer came."""
    proc = cell.run("condor_reschedule")
    assert proc.returncode == 0, proc.stderr + proc.stdout


def pass_after(cell, since=None, timeout=30):
    """Wait until a pass that began after ``since`` (default: now) is published, asking the
    daemon for one; returns when that pass began. A round that had begun before ``since``
    may take the request in and answer it; the daemon is then asked again."""
    since = time.time() if since is None else since

    def passed():
        end = last_pass(cell)
        if end is not None and end > since:
            return end
        reschedule(cell)
        end = last_pass(cell)
        return end if end is not None and end > since else None
    return wait_for(passed, timeout)
