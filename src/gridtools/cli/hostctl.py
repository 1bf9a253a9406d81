"""Host states from the command line: ``gridtools host OP HOST…`` and ``llctl``.

``llctl [-h HOST]... [-g] drain|flush|suspend|resume`` is LoadLeveler's
spelling: ``-h`` names a host (default: this one), ``-g`` all hosts of the
cell; ``startd``/``schedd`` after drain or resume are accepted and ignored.
Both send one ``host`` request to the daemon, which checks the rights and
answers; this module needs nothing beyond the standard library, so every
user can run it.
"""

import sys

from gridtools.errors import GridError, UsageError

#: what may be asked of an execution host
OPERATIONS = ("drain", "flush", "suspend", "resume")
LLCTL_USAGE = "usage: llctl [-h host] [-g] drain|flush|suspend|resume"


def send(op, hosts, all_hosts=False):
    """Send the request, print the daemon's answer; returns the exit code."""
    from gridtools.cli.ask import ask
    if all_hosts:
        from gridtools.spool import config
        hosts = [h for h in config.names("exechost") if h != "global"]
    if not hosts:
        raise UsageError("name at least one host (or --all)")
    return ask("host", {"op": op, "hosts": list(hosts)})


def llctl_args(argv):
    """(operation, hosts, all hosts?) from llctl's arguments."""
    hosts, op, everywhere = [], None, False
    words = list(argv)
    while words:
        word = words.pop(0)
        if word == "-h" and words:
            hosts.append(words.pop(0))
        elif word == "-g":
            everywhere = True
        elif word in OPERATIONS and op is None:
            op = word
        elif word in ("startd", "schedd") and op in ("drain", "resume"):
            continue
        else:
            raise UsageError(f'unknown argument "{word}"')
    if op is None:
        raise UsageError("name one of drain, flush, suspend, resume")
    if not hosts and not everywhere:
        from gridtools import cell
        hosts = [cell.hostname()]
    return op, hosts, everywhere


def llctl(argv):
    try:
        op, hosts, everywhere = llctl_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"llctl: {exc}\n{LLCTL_USAGE}\n")
        return 1
    try:
        return send(op, hosts, everywhere)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def main(argv, prog="llctl"):
    """Entry point of the llctl launcher."""
    return llctl(argv)
