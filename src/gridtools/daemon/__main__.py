"""``python -m gridtools.daemon``: the dispatcher daemon's process.

Started by ``gridtools daemon start`` (or a command that starts the daemon), it is
the daemon's master (``daemon.master``), which runs this program again as its child
with GRIDTOOLS_MASTER set: that one is the daemon. ``gridtools daemon run`` runs the
daemon itself, in the foreground, with no master.

Its exec server (``daemon.execd``) is forked first, while the process has
loaded only what a shepherd needs: every shepherd is a fork of that small
process, not of the daemon that holds every job. Then the daemon runs
(``daemon.loop``). A daemon that stopped because its code changed
(``daemon.upgrade``) executes its program again, in the same process.

It is started with ``-P`` (``spool.daemonctl``), so that the folder it was
started from, which other users may write to, is never searched for modules,
and it works from ``/``.
"""

import os
import sys

from gridtools.daemon.execd import ExecClient


def main(master=False):
    os.chdir("/")                       # (not the folder of whoever started it)
    if master:
        from gridtools.daemon.master import run
        return run()
    client = ExecClient()
    client.start()
    from gridtools.daemon import loop
    code = loop.main(exec_client=client)
    from gridtools.daemon.upgrade import RESTART
    if code == RESTART:                 # its code changed (daemon.upgrade): the new one runs
        os.execv(sys.executable, [sys.executable] + sys.orig_argv[1:])
    return code


if __name__ == "__main__":
    sys.exit(main(master="GRIDTOOLS_MASTER" not in os.environ))
