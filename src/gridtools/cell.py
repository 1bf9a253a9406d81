"""Where a cell lives and the paths inside it. Reads the environment, writes nothing.

A cell is one directory: ``etc/`` holds its configuration (Grid Engine object
files, sge_request, sge_aliases, condor_config), ``spool/`` its runtime state.
``GRIDTOOLS_ROOT`` selects the cell; unset, it is the personal cell
``~/.gridtools`` of the calling user.
"""

import os

ENV_ROOT = "GRIDTOOLS_ROOT"
PERSONAL_DIR = ".gridtools"


_ROOTS = {}


def root():
    """The cell's top directory (absolute)."""
    key = os.environ.get(ENV_ROOT)
    found = _ROOTS.get(key)
    if found is None:
        path = key or os.path.join(os.path.expanduser("~"), PERSONAL_DIR)
        found = _ROOTS[key] = os.path.abspath(path)
    return found


def is_personal():
    """True when no GRIDTOOLS_ROOT is set (the cell is created on first use)."""
    return not os.environ.get(ENV_ROOT)


def etc(*parts):
    """A path under the cell's configuration directory."""
    return os.path.join(root(), "etc", *parts)


def spool(*parts):
    """A path under the cell's runtime spool."""
    return os.path.join(root(), "spool", *parts)


def shipped_etc():
    """The shipped default configuration that ``gridtools init`` copies."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "data", "etc")


ENV_HOST = "GRIDTOOLS_HOST"


def hostname():
    """This machine's host name as the cell knows it (short form).

    ``GRIDTOOLS_HOST`` overrides it, which lets one machine act as several
    execution hosts (see ``gridtools execd``).
    """
    name = os.environ.get(ENV_HOST)
    if name:
        return name
    if not _NODE:                   # asked at every pass of the daemon: the system once
        _NODE.append(os.uname().nodename.split(".")[0] or "localhost")
    return _NODE[0]


_NODE = []
