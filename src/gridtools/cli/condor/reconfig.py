"""condor_reconfig: have the daemon read its configuration again.

    condor_reconfig [-help] [-all] [HOST ...]

The daemon reads etc/ (Grid Engine's objects) and condor_config with the
files it includes at once, instead of when it next notices they changed.
It needs ADMINISTRATOR access at the MASTER (by default the cell's
managers; ALLOW_ADMINISTRATOR in condor_config(5)). One daemon serves every
host of the cell, so naming hosts (or -all) reconfigures that daemon once
and reports it for each host named. A name that is none of the pool's
masters (the cell's execution hosts and this host, by full or short name) is
told as HTCondor's tool tells it: "Can't find address for master NAME" at
once, the command goes to the others (none: it is not sent), then "Can't find
address for NAME" and "Perhaps you need to query another pool.", status 1.
"""

import sys

from gridtools.errors import UsageError

USAGE = """\
Usage: {prog} [general-options] [targets]
where [general-options] can be zero or more of:
    -help              gives this usage information
and where [targets] can be zero or more of:
    -all               all hosts in your pool (overrides other targets)
    hostname           given host
If no targets are specified, the local host is the target.
"""


def run(argv, prog):
    hosts, every = [], False
    for arg in argv:
        word = arg.lstrip("-").lower()
        if arg.startswith("-") and word and "help".startswith(word):
            sys.stdout.write(USAGE.format(prog=prog))
            return 0
        if arg.startswith("-") and word and "all".startswith(word):
            every = True
        elif arg.startswith("-"):
            raise UsageError(f"{prog}: ERROR: unknown option {arg}")
        else:
            hosts.append(arg)
    unknown = []
    if hosts and not every:
        known = masters()
        unknown = [h for h in hosts if not _is_master(h, known)]
        hosts = [h for h in hosts if h not in unknown]
        for host in unknown:
            sys.stderr.write(f"Can't find address for master {host}\n")
        if not hosts:
            return _unresolved(unknown)
    from gridtools.cli.ask import ensure_daemon
    from gridtools.spool import requests, wake
    ensure_daemon()
    name = requests.write("reconfig", {"dialect": "condor"}, reply=True)
    wake.poke()
    answer = requests.wait_reply(name, 60.0)
    code, out, err = answer
    if code:
        sys.stderr.write(err)
        for host in hosts or [None]:
            target = f"master {host}" if host else "local master"
            sys.stderr.write(f"Can't send Reconfig command to {target}\n")
        return _unresolved(unknown) or int(code)
    if every or not hosts:
        sys.stdout.write(out if not every else 'Sent "Reconfig" command to all masters\n')
        return 0
    for host in hosts:
        sys.stdout.write(f'Sent "Reconfig" command to master {host}\n')
    return _unresolved(unknown)


def masters():
    """Host names of the pool's masters: the cell's execution hosts and this host."""
    from gridtools import cell
    from gridtools.spool import config
    return [n for n in config.names("exechost") if n != "global"] + [cell.hostname()]


def _is_master(name, known):
    """True when ``name`` (a full or short host name, any case) names one of ``known``."""
    low = name.lower()
    short = low.split(".")[0]
    return any(host.lower() in (low, short) or host.lower().split(".")[0] == low for host in known)


def _unresolved(names):
    """The closing lines for the names no master has (status 1), or 0 without any."""
    if not names:
        return 0
    sys.stderr.write("".join(f"Can't find address for {name}\n" for name in names))
    sys.stderr.write("Perhaps you need to query another pool.\n")
    return 1


def main(argv, prog="condor_reconfig"):
    from gridtools.cli.condor import admintool
    return admintool.main(run, argv, prog, USAGE.format(prog=prog))
