"""Attacks on the daemon through what users may write into the spool: requests holding
texts no file can hold, and junk left in the folders everybody may write (the reply
folders, the requests' folder, the id claims). The daemon refuses the one and clears
the other away without stopping, and another user's job still runs at once.
"""

import os
import time

from attack_tools import forge_request, forge_submit, user_py
from conftest import wait_for
from qtools import jid_of


def _still_serves(cell, user, workdir):
    """Another user's job is taken in, runs and ends promptly."""
    began = time.time()
    proc = cell.qsub("-sync", "y", "-b", "y", "true", user=user, cwd=workdir, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert time.time() - began < 30


def test_a_text_no_file_can_hold_is_refused(cell, users, workdir):
    """A lone surrogate (an escape in a request written by hand) in a job's name, account
    or environment would have every accounting record and every listing fail: the
    request is refused, and nothing is queued."""
    alice, bob = users[0], users[1]
    for overrides in ({"name": "bad\ud800name"}, {"account": "acct\udfff"}, {"env": {"X": "\ud83d"}}):
        claimed, _name, answer = forge_submit(cell, alice, overrides, reply=True)
        assert answer[0] != 0, (overrides, answer)
        assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(claimed)))
    # a byte that was not UTF-8 (a file name's, say) is kept as it came
    claimed, _name, answer = forge_submit(cell, alice, {"name": "ok\udcffname", "user_hold": True}, reply=True)
    assert answer[0] == 0, answer
    job = jid_of(cell.qsub("-h", "-b", "y", "true", user=alice, cwd=workdir))
    _name, answer = forge_request(cell, alice, "alter", {"targets": [{"id": job, "tasks": None}],
                                                         "changes": {"name": "x\ud800"}})
    assert answer[0] != 0, answer
    listing = cell.run("qstat", "-u", "*", text=False)
    assert listing.returncode == 0 and b"ok\xffname" in listing.stdout
    _still_serves(cell, bob, workdir)
