"""Whether the daemon's own code changed under it, so that it starts itself again.

The daemon imports some modules only when first needed. When gridtools is
upgraded (``pip install -U``) or its checkout moves on while the daemon
runs, such an import would mix the new code with the old already loaded
(a name one expects of the other is missing) and every pass that needs it
would fail. So the daemon looks every CHECK_EVERY seconds whether a source
file of its package changed (``stamp``: the newest modification time and the
number of files), and when one did it stops as ``gridtools daemon stop``
does (running jobs go on under their shepherds) and starts its own program
again (``daemon.__main__``), which takes its state back from the spool.
"""

import os

#: seconds between two looks at the package's files
CHECK_EVERY = 10.0
#: what the daemon's main returns to be started again
RESTART = 75
#: the package's top folder
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stamp(top=PACKAGE):
    """(newest modification time in ns, number of files) of the package's sources."""
    newest = count = 0
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith((".py", ".lark")):
                try:
                    st = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                newest = max(newest, st.st_mtime_ns)
                count += 1
    return newest, count


class Watch:
    """The package's stamp when the daemon started, looked at again now and then."""

    def __init__(self, now, top=PACKAGE):
        self.top = top
        self.stamp = stamp(top)
        self.next = now + CHECK_EVERY

    def changed(self, now):
        """True when the package's files changed since the start (looked at most every
        CHECK_EVERY seconds)."""
        if now < self.next:
            return False
        self.next = now + CHECK_EVERY
        return stamp(self.top) != self.stamp
