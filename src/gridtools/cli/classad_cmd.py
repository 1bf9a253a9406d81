"""gridtools classad: evaluate ClassAd expressions and match ads.

    gridtools classad eval EXPR [--my FILE|-] [--target FILE|-]
    gridtools classad match JOBAD MACHINEAD
    gridtools classad unparse EXPR

Ad files hold one ad in long form (``Name = value`` lines, as ``condor_q
-l`` prints) or bracketed form (``[ a = 1; b = 2 ]``); ``-`` reads standard
input. Exit status: 0 on success (for match: the ads match), 1 when match
finds no match, 2 on bad input.
"""

import sys

from gridtools.errors import GridError

USAGE = """\
Usage: {prog} eval EXPR [--my FILE|-] [--target FILE|-]
       {prog} match JOBAD MACHINEAD
       {prog} unparse EXPR

  eval     print the value of EXPR, evaluated with the ad in --my as MY
           and the ad in --target as TARGET
  match    say whether two ads match (each one's Requirements is true
           against the other) and print both Requirements and Ranks
  unparse  print EXPR in canonical form

An ad file holds Name = value lines or one [ ... ] ad; - is standard input.
"""


class _Usage(GridError):
    exit_code = 2


def _read_ad(path, stdin_used):
    from gridtools.classad import ClassAdSyntaxError, parse_ad
    if path == "-":
        if stdin_used[0]:
            raise _Usage("standard input (-) can be read only once")
        stdin_used[0] = True
        text, name = sys.stdin.read(), "standard input"
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                text, name = handle.read(), path
        except OSError as exc:
            raise _Usage(f"cannot read {path}: {exc.strerror}") from None
    try:
        return parse_ad(text)
    except ClassAdSyntaxError as exc:
        raise _Usage(f"{name}: {exc}") from None


def _parse_options(args, names):
    """Split ``args`` into {option: value} for ``names`` and positionals."""
    options, positional = {}, []
    i = 0
    while i < len(args):
        arg = args[i]
        key, _, inline = arg.partition("=")
        if key in names:
            if inline or "=" in arg:
                options[key] = inline
            elif i + 1 < len(args):
                options[key] = args[i + 1]
                i += 1
            else:
                raise _Usage(f"{key} needs a file name")
        elif arg.startswith("--"):
            raise _Usage(f"unknown option {arg}")
        else:
            positional.append(arg)
        i += 1
    return options, positional


def _one_expression(positional, command):
    from gridtools.classad import ClassAdSyntaxError, parse
    if len(positional) != 1:
        raise _Usage(f"{command} takes exactly one expression")
    try:
        return parse(positional[0])
    except ClassAdSyntaxError as exc:
        raise _Usage(f"bad expression: {exc}") from None


def cmd_eval(args, out):
    from gridtools.classad import unparse
    options, positional = _parse_options(args, ("--my", "--target"))
    expr = _one_expression(positional, "eval")
    stdin_used = [False]
    my = _read_ad(options["--my"], stdin_used) if "--my" in options else None
    target = _read_ad(options["--target"], stdin_used) if "--target" in options else None
    out.write(unparse(expr.eval(my, target)) + "\n")
    return 0


def cmd_match(args, out):
    from gridtools.classad import rank, symmetric_match, unparse
    _, positional = _parse_options(args, ())
    if len(positional) != 2:
        raise _Usage("match takes two ad files: JOBAD MACHINEAD")
    stdin_used = [False]
    job, machine = (_read_ad(path, stdin_used) for path in positional)
    matched = symmetric_match(job, machine)
    out.write(f"job requirements: {unparse(job.eval('Requirements', machine))}\n")
    out.write(f"machine requirements: {unparse(machine.eval('Requirements', job))}\n")
    out.write(f"match: {'yes' if matched else 'no'}\n")
    out.write(f"job rank: {unparse(rank(job, machine))}\n")
    out.write(f"machine rank: {unparse(rank(machine, job))}\n")
    return 0 if matched else 1


def cmd_unparse(args, out):
    _, positional = _parse_options(args, ())
    out.write(_one_expression(positional, "unparse").unparse() + "\n")
    return 0


COMMANDS = {"eval": cmd_eval, "match": cmd_match, "unparse": cmd_unparse}


def main(argv, prog="gridtools classad"):
    argv = list(argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        (sys.stdout if argv else sys.stderr).write(USAGE.format(prog=prog))
        return 0 if argv else 2
    command = COMMANDS.get(argv[0])
    try:
        if command is None:
            raise _Usage(f"unknown command {argv[0]!r}")
        if "-h" in argv[1:] or "--help" in argv[1:]:
            sys.stdout.write(USAGE.format(prog=prog))
            return 0
        return command(argv[1:], sys.stdout)
    except GridError as exc:
        sys.stdout.flush()
        hint = f" (try {prog} --help)" if isinstance(exc, _Usage) and "command" in str(exc) else ""
        sys.stderr.write(f"{prog}: {exc}{hint}\n")
        return exc.exit_code
