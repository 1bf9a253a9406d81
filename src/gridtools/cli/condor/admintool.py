"""What HTCondor's administrative tools (condor_reconfig, condor_vacate, condor_off,
condor_on, condor_restart) share: options read as HTCondor's tools read them (a
prefix of at least the letters each asks for), the request to the daemon and the
way they end."""

import sys

from gridtools.errors import GridError, UsageError


def option(arg, options):
    """The option of ``options`` (name -> the letters it asks for at least) that ``arg``
    stands for, or None."""
    word = arg[1:].lstrip("-").lower()
    for name, least in options.items():
        if len(word) >= least and name.startswith(word):
            return name
    return None


def ask(kind, body):
    """Send a request the daemon answers, print its answer; (exit code, out, err)."""
    from gridtools.cli.ask import ensure_daemon
    from gridtools.spool import requests, wake
    ensure_daemon()
    name = requests.write(kind, body, reply=True)
    wake.poke()
    code, out, err = requests.wait_reply(name, 60.0)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return int(code), out, err


def version():
    from gridtools.formats.condor.jobad import VERSION_TEXT
    sys.stdout.write(VERSION_TEXT)
    return 0


def main(run, argv, prog, usage):
    """``run(argv, prog)``, with a usage error told (and ``usage``) on standard error."""
    try:
        return run(list(argv), prog)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        sys.stderr.write(usage)
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
