"""What HTCondor's administrative tools (condor_reconfig, condor_vacate,
condor_checkpoint, condor_off, condor_on, condor_restart) share: options read as HTCondor's tools read them (a
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


#: how the usage of HTCondor's daemon tools begins, and tells the targets (with the
#: -constraint line, for a tool that takes it: {constraint})
GENERAL = """\
where [general-options] can be zero or more of:
    -help\t\tgives this usage information
    -version\t\tprints the version
    -pool <hostname>\tuse the given central manager to find daemons
"""
TARGETS = """\
where [targets] can be zero or more of:
    -all\t\tall hosts in your pool (overrides other targets)
    hostname\t\tgiven host
    <ip.address:port>\tgiven "sinful string"
  (for compatibility with other Condor tools, you can also use:)
    -name name\tgiven host
{constraint}    -addr <addr:port>\tgiven "sinful string"
  (if no targets are specified, the local host is used)
"""
CONSTRAINT = "    -constraint constraint\tconstraint\n"


def targets_usage(constraint=False):
    return TARGETS.format(constraint=CONSTRAINT if constraint else "")


class Finished(Exception):
    """-help or -version was answered: the tool ends with ``code``."""

    def __init__(self, code=0):
        super().__init__(code)
        self.code = code


def parse(argv, options, usage, valued=("pool", "name", "addr")):
    """(target names, [(option, its value or None)]) of a tool's arguments, in order:
    a word is a target, as is the value of -name and -addr; -pool's is left out (the
    cell is the only pool); -help prints ``usage`` and -version the version (Finished);
    an option ``options`` does not know, or one of ``valued`` without its value, is a
    UsageError."""
    names, seen = [], []
    args = iter(argv)
    for arg in args:
        if not arg.startswith("-") or arg == "-":
            names.append(arg)
            continue
        name = option(arg, options)
        if name == "help":
            sys.stdout.write(usage)
            raise Finished(0)
        if name == "version":
            raise Finished(version())
        if name is None:
            raise UsageError(f"ERROR: unknown option {arg}")
        value = None
        if name in valued:
            value = next(args, None)
            if value is None:
                raise UsageError(f"ERROR: -{name} requires another argument")
            if name in ("name", "addr"):
                names.append(value)
            if name in ("name", "addr", "pool"):
                continue
        seen.append((name, value))
    return names, seen


def ask(kind, body, shown=True, wait=60.0):
    """Send a request the daemon answers within ``wait`` seconds, print its answer (its
    error part only, unless ``shown``); (exit code, out, err)."""
    from gridtools.cli.ask import ensure_daemon
    from gridtools.spool import requests, wake
    ensure_daemon()
    name = requests.write(kind, body, reply=True)
    wake.poke()
    code, out, err = requests.wait_reply(name, wait)
    if shown:
        sys.stdout.write(out)
    sys.stderr.write(err)
    return int(code), out, err


def startd_targets(seen):
    """(-all given, the -constraint or None) of a startd tool's options (``parse``'s
    ``seen``); a second -constraint, or one that is not an expression, is an error."""
    every, constraint = False, None
    for option_name, value in seen:
        if option_name == "constraint":
            if constraint is not None:
                raise UsageError("ERROR: only one -constraint argument is allowed")
            constraint = value
        elif option_name == "all":
            every = True
    if constraint is not None:
        from gridtools.classad import ClassAdSyntaxError, parse as parse_expr
        try:
            parse_expr(constraint)
        except ClassAdSyntaxError:
            raise GridError(f"ERROR: Invalid constraint ({constraint})") from None
    return every, constraint


def to_startds(kind, names, seen, word, **body):
    """Send a startd tool's request (``kind``) for target ``names`` and the options
    ``seen`` (-all, -constraint); a refusal is told for each target as HTCondor's tool
    tells it (``word``: its command's name). The exit code."""
    every, constraint = startd_targets(seen)
    body.update(dialect="condor", all=every, names=names, constraint=constraint)
    code, _out, err = ask(kind, body)
    if code and err.startswith("SECMAN:"):            # refused: each command, as HTCondor's tool says
        for target in (["all startds"] if every else None) or [f"startd {n}" for n in names] or ["local startd"]:
            sys.stderr.write(f"Can't send {word} command to {target}\n")
    return int(code)


def version():
    from gridtools.formats.condor.jobad import VERSION_TEXT
    sys.stdout.write(VERSION_TEXT)
    return 0


def main(run, argv, prog, usage):
    """``run(argv, prog)``, with a usage error told (and ``usage``) on standard error."""
    try:
        return run(list(argv), prog)
    except Finished as done:
        return done.code
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        sys.stderr.write(usage)
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
