"""Crash points: a daemon that kills itself with SIGKILL at a chosen moment.

For testing what a crash leaves behind. ``GRIDTOOLS_CRASH_AT=<phase>:<n>``
(several separated by commas) makes the daemon kill itself the ``n``-th time
it passes a crash point of that phase:

- ``startup``  after taking the daemon lock, and when start-up is complete
- ``intake``   after each request applied (before its effect is written), and
               after the batch was written (before it is answered)
- ``reap``     after accounting records were appended (before the tasks'
               states change), and after they changed (before they are written)
- ``pass``     after the scheduler decided (before anything is started)
- ``start``    after the dispatched states were written (before the
               shepherds are ordered), and after each order
- ``publish``  before the status snapshot is written, and after it was
               written (before the requests it shows are answered)
- ``journal``  after records of bulk changes were flushed to the journal (before
               the requests they come from are answered)
- ``answer``   after a pass answered and removed requests (before the folders
               of purged jobs go and journalled jobs' states are written)
- ``history``  after a pass appended ads to the history and wrote the jobs'
               states (before anything else)

Unset (the normal case) every crash point costs one dictionary lookup.
"""

import os
import signal

ENV = "GRIDTOOLS_CRASH_AT"
PHASES = ("startup", "intake", "reap", "pass", "start", "publish", "journal", "answer", "history")

_armed = {}


def arm(spec):
    """Arm crash points from a ``phase:n[,phase:n...]`` text (empty disarms)."""
    _armed.clear()
    for item in (spec or "").split(","):
        phase, _, count = item.strip().partition(":")
        if phase in PHASES and count.strip().isdigit() and int(count) > 0:
            _armed[phase] = int(count)


def point(phase):
    """A crash point of ``phase``: die here if this is the armed one."""
    if not _armed or phase not in _armed:
        return
    _armed[phase] -= 1
    if _armed[phase] <= 0:
        os.kill(os.getpid(), signal.SIGKILL)


arm(os.environ.get(ENV))
