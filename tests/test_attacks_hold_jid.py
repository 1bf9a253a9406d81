"""A job waits for the jobs its -hold_jid names as their ids: a name or pattern such as
"*" becomes every matching id at submission. Each of a user's jobs holding on "*"
would keep all the others', so the ids grow as the square of their number (memory,
spool and status of the whole cell): the ids all the jobs of one owner wait for are
bounded (intake.MOST_HELD_ON), for qsub and qalter alike.

The daemon runs in this process, with the bound made small; the clients are real."""

import subprocess
import time

from test_qdel_bulk import send


def _run(cell, daemon, *argv):
    """Run a real client command to its end while the daemon ticks."""
    env = dict(cell.env, GRIDTOOLS_NO_AUTOSTART="1")
    proc = subprocess.Popen(list(argv), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd="/tmp")
    deadline = time.time() + 60
    while proc.poll() is None and time.time() < deadline:
        daemon.tick()
        time.sleep(0.01)
    out, err = proc.communicate(timeout=10)
    return proc.returncode, out, err


def _taken_in(daemon, jid):
    """Tick until the daemon took job ``jid`` in (its record) or refused it (None)."""
    from gridtools.spool import inbox
    for _ in range(200):
        daemon.tick()
        if jid in daemon.state.jobs:
            return daemon.state.jobs[jid]
        if not inbox.pending():
            return None
    raise AssertionError(f"job {jid} was neither taken in nor refused")


def test_the_ids_an_owner_s_jobs_wait_for_are_bounded(inproc, monkeypatch):
    import os
    from gridtools.daemon import intake
    cell, start = inproc
    daemon = start()
    monkeypatch.setattr(intake, "MOST_HELD_ON", 5)
    send(cell, monkeypatch, 3)
    daemon.tick()
    code, out, err = _run(cell, daemon, "qsub", "-terse", "-hold_jid", "*", "-b", "y", "true")
    assert code == 0, err
    assert _taken_in(daemon, int(out)).spec["predecessors"] == [1, 2, 3]
    code, out, err = _run(cell, daemon, "qsub", "-terse", "-hold_jid", "*", "-b", "y", "true")
    assert code == 0, err
    assert _taken_in(daemon, int(out)) is None
    with open(os.path.join(cell.root, "spool", "messages")) as fh:
        assert f"job {int(out)} of root refused: job rejected: the jobs of user root would wait for more " \
            "than 5 jobs in all (-hold_jid, -hold_jid_ad)" in fh.read()
    code, out, err = _run(cell, daemon, "qalter", "-hold_jid", "1,2", "3")     # (3 + 2: within the bound)
    assert code == 0, out + err
    assert daemon.state.jobs[3].spec["predecessors"] == [1, 2]
    code, out, err = _run(cell, daemon, "qalter", "-hold_jid", "1", "2")
    assert code != 0 and "would wait for more than 5 jobs in all" in out + err
    assert not daemon.state.jobs[2].spec.get("predecessors")
