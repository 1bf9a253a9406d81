"""condor_fetchlog: print a daemon's log file.

    condor_fetchlog [-help] [-version] [-pool HOST] [-debug[:flags]]
                    [-master | -schedd | -startd | -collector | -negotiator | -kbdd]
                    MACHINE SUBSYSTEM[.ext]

One daemon is every HTCondor daemon of a cell: the log of MASTER, SCHEDD,
STARTD, STARTER, SHADOW, COLLECTOR, NEGOTIATOR, NEGOTIATOR_MATCH and KBDD
(with any extension) is its messages file (``spool/messages``), HISTORY the
job history condor_history reads (its public part). MACHINE is a host of the
cell (an execution host, or the cell's own). It needs ADMINISTRATOR access at
the daemon asked (the MASTER by default), as HTCondor's daemons check it.
"""

import sys

from gridtools import cell
from gridtools.errors import GridError

#: the logs one daemon keeps for every subsystem
DAEMON_LOGS = frozenset(("MASTER", "SCHEDD", "STARTD", "STARTER", "SHADOW", "COLLECTOR", "NEGOTIATOR",
                         "NEGOTIATOR_MATCH", "KBDD"))
#: the daemons -TYPE selects
DAEMONS = ("master", "schedd", "startd", "collector", "negotiator", "kbdd", "view_collector")

USAGE = """\
Usage: {prog} [options] <machine-name> <subsystem>[.ext]
Where options are:
    -help             Display options
    -version          Display Condor version
    -pool <hostname>  Use this central manager
    -debug            Show extra debugging info
To select a particular daemon to talk to (does NOT select log file), use:
    -master
    -schedd
    -startd
    -collector
    -negotiator
    -kbdd
    -view_collector
The subsystem name plus optional extension specifies the log file.
Possible subsystem names (anything with an entry XXX_LOG in remote config file):
    MASTER
    COLLECTOR
    NEGOTIATOR
    NEGOTIATOR_MATCH
    SCHEDD
    SHADOW
    STARTD
    STARTER
    KBDD
    HISTORY
    STARTD_HISTORY

Example 1: {prog} -debug coral STARTD

Example 2: {prog} -debug coral STARTER.slot2

"""


class _Usage(Exception):
    pass


def run(argv, prog):
    daemon, words = "master", []
    args = iter(argv)
    for arg in args:
        if arg == "-help":
            sys.stderr.write(USAGE.format(prog=prog))
            return 0
        if arg == "-version":
            from gridtools.formats.condor.jobad import VERSION_TEXT
            sys.stdout.write(VERSION_TEXT)
            return 0
        if arg == "-pool":
            if next(args, None) is None:
                sys.stderr.write("-pool requires an argument.\n\n")
                raise _Usage()
        elif arg.startswith("-debug") and arg[6:7] in ("", ":"):
            continue
        elif arg.startswith("-") and arg[1:].lower() in DAEMONS:
            daemon = arg[1:].lower()
        elif arg.startswith("-"):
            raise _Usage()
        elif len(words) < 2:
            words.append(arg)
        else:
            sys.stderr.write(f"Extra argument: {arg}\n\n")
            raise _Usage()
    if len(words) != 2:
        raise _Usage()
    machine, log = words
    if not _serves(machine):
        sys.stderr.write(f"Couldn't locate daemon on {machine}: Unable to find {daemon} {machine}\n")
        return 1
    from gridtools import seclevels
    from gridtools.cli.condor import machineviews
    subsystem = "COLLECTOR" if daemon == "view_collector" else daemon.upper()
    if not machineviews.verdict(seclevels.Level.ADMINISTRATOR, subsystem)[0].allowed:
        sys.stderr.write("Couldn't fetch log: permission denied.\n")
        return 1
    name = log.partition(".")[0].upper()
    if name in DAEMON_LOGS:
        path = cell.spool("messages")
    elif name == "HISTORY":
        path = cell.spool("history")
    else:
        sys.stderr.write("Couldn't fetch log: no log file by that name.\n")
        return 1
    try:
        with open(path, "rb") as fh:
            while True:
                chunk = fh.read(1 << 16)
                if not chunk:
                    break
                sys.stdout.buffer.write(chunk)
    except FileNotFoundError:
        return 0                    # (no line logged yet: an empty log)
    except OSError:
        sys.stderr.write("Couldn't fetch log: server was unable to access it.\n")
        return 1
    return 0


def _serves(machine):
    """True when ``machine`` (a full or short name) is a host of the cell."""
    import os
    try:
        hosts = set(os.listdir(cell.etc("exechosts"))) - {"global"}
    except OSError:
        hosts = set()
    hosts.add(cell.hostname())
    low = machine.lower()
    return any(low in (host.lower(), host.lower().split(".")[0]) for host in hosts)


def main(argv, prog="condor_fetchlog"):
    try:
        return run(list(argv), prog)
    except _Usage:
        sys.stderr.write(USAGE.format(prog=prog))
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
