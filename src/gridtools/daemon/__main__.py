"""``python -m gridtools.daemon``: the dispatcher daemon's process.

Its exec server (``daemon.execd``) is forked first, while the process has
loaded only what a shepherd needs: every shepherd is a fork of that small
process, not of the daemon that holds every job. Then the daemon runs
(``daemon.loop``).
"""

import sys

from gridtools.daemon.execd import ExecClient


def main():
    client = ExecClient()
    client.start()
    from gridtools.daemon import loop
    return loop.main(exec_client=client)


if __name__ == "__main__":
    sys.exit(main())
