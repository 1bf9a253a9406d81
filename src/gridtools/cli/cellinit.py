"""Making sure the selected cell exists before a command uses it.

The personal cell (no GRIDTOOLS_ROOT) is created on first use with this
machine as its single execution host, one slot per CPU and no load
threshold on its queue (the user's own jobs never wait for the machine's
load); a cell named by GRIDTOOLS_ROOT must have been created with
``gridtools init``.
"""

from gridtools import cell
from gridtools.errors import GridError


def ensure_cell():
    if cell.initialised():
        return
    if not cell.is_personal():
        raise GridError(f"error: {cell.root()} is not an initialised gridtools cell "
                        "(run: gridtools init)", 1)
    create_personal()


def create_personal():
    import os
    import pwd
    from gridtools.spool import cellsetup
    user = pwd.getpwuid(os.getuid()).pw_name
    from gridtools.exec import gpus
    cellsetup.initialise(cell.root(), [cell.hostname()], os.cpu_count() or 1, user, gpus.count(),
                         personal=True)
