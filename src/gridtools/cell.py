"""Where a cell lives and the paths inside it. Reads the environment, writes nothing.

A cell is one directory: ``etc/`` holds its configuration (Grid Engine object
files, sge_request, sge_aliases, condor_config), ``spool/`` its runtime state.
``GRIDTOOLS_ROOT`` selects the cell; unset, it is the personal cell
``~/.gridtools`` of the calling user.
"""

import posix

from gridtools import ospaths

ENV_ROOT = "GRIDTOOLS_ROOT"
PERSONAL_DIR = ".gridtools"


_ROOTS = {}


def root():
    """The cell's top directory (absolute)."""
    key = ospaths.getenv(ENV_ROOT)
    found = _ROOTS.get(key)
    if found is None:
        path = key or ospaths.join(ospaths.home(), PERSONAL_DIR)
        found = _ROOTS[key] = ospaths.abspath(path)
    return found


def initialised():
    """True when the cell exists: its spool holds a job store (``gridtools init``, or the
    personal cell's first use, made it)."""
    return ospaths.isdir(spool("jobs"))


def is_personal():
    """True when no GRIDTOOLS_ROOT is set (the cell is created on first use)."""
    return not ospaths.getenv(ENV_ROOT)


def etc(*parts):
    """A path under the cell's configuration directory."""
    return ospaths.join(root(), "etc", *parts)


def spool(*parts):
    """A path under the cell's runtime spool."""
    return ospaths.join(root(), "spool", *parts)


def shipped_etc():
    """The shipped default configuration that ``gridtools init`` copies."""
    here = ospaths.dirname(ospaths.abspath(__file__))
    return ospaths.join(here, "data", "etc")


ENV_HOST = "GRIDTOOLS_HOST"


def hostname():
    """This machine's host name as the cell knows it (short form).

    ``GRIDTOOLS_HOST`` overrides it, which lets one machine act as several
    execution hosts (see ``gridtools execd``).
    """
    name = ospaths.getenv(ENV_HOST)
    if name:
        return name
    if not _NODE:                   # asked at every pass of the daemon: the system once
        _NODE.append(posix.uname().nodename.split(".")[0] or "localhost")
    return _NODE[0]


def is_this_host(name):
    """True when ``name`` is this machine, by any of its names (short or full, any case,
    ``localhost`` or a loopback address): the one host whose schedd and collector the
    cell has, for the HTCondor commands' -name and -pool."""
    import socket
    name = name.lower().rstrip(".")
    names = {hostname(), socket.gethostname(), "localhost", "127.0.0.1", "::1"}
    try:
        names.add(socket.getfqdn())
    except OSError:
        pass
    names = {n.lower() for n in names if n}
    return name in names or name.split(".")[0] in {n.split(".")[0] for n in names if not is_ip_address(n)}


def is_ip_address(text):
    """True when ``text`` is an IPv4 or IPv6 address."""
    import ipaddress
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


_NODE = []
