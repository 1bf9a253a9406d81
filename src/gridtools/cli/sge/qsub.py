"""qsub: submit a batch job (Grid Engine dialect).

The hot path imports only the standard library core and gridtools' own small
modules: a submission costs one lock, two small files and a byte in the
daemon's FIFO.
"""

import posix
import sys

from gridtools import cell
from gridtools.cli.sge import cellfacts, options, submit
from gridtools.cli.sge.tokens import LINE_END, script_directives
from gridtools.errors import GridError, UsageError
from gridtools.formats.safetext import output_is_the_result
from gridtools.spool import ids


def _job_label(spec):
    rng = spec.get("tasks")
    if not rng:
        return str(spec["id"])
    return f"{spec['id']}.{rng[0]}-{rng[1]}:{rng[2]}"


def submitted_message(spec, terse):
    if terse:
        return _job_label(spec)
    kind = "job-array" if spec.get("tasks") else "job"
    return f'Your {kind} {_job_label(spec)} ("{spec["name"]}") has been submitted'


def _without_prefix_option(words):
    """Directive words without ``-C prefix``: the prefix only counts on the command line
    (a -C that ends its line stays, to be refused for its missing argument)."""
    out = []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
        elif word == "-C" and i + 1 < len(words) and words[i + 1] is not LINE_END:
            skip = True
        else:
            out.append(word)
    return out


def default_name(name, command, binary):
    """A job's name when -N gives none: its script's or command's file name, STDIN for
    a script read from standard input (as Grid Engine names it before any JSV runs)."""
    import posixpath
    return posixpath.basename((command if binary else name) or "") or "STDIN"


#: the options qsub takes (options.parse's ``allowed``)
EVERYTHING = ("all", "submit", "cli")


def build(argv, stdin=None, prog="qsub", cwd=None, allowed=EVERYTHING, binary=False, preset=None,
          keep=None):
    """Parse everything and return (spec without id, script bytes, client flags, job
    name, command, arguments). Also qrsh's: ``allowed`` its options, ``binary`` its
    default for -b (y), ``preset(req)`` its defaults that the request files do not
    change but directives and the command line do, ``keep(words)`` the words of the
    request files and directives it takes (the others dropped unread).

    The request is not checked against the cell's objects (``check``): Grid Engine's
    qmaster checks it, after the client's JSVs, which may repair it."""
    cwd = cwd or posix.getcwd()
    probe_ctx = options.Context(prog, cwd)
    probe = options.fresh_request()
    probe["binary"] = binary
    rest = options.parse(list(argv), probe, probe_ctx, allowed=allowed)
    req = options.fresh_request()
    req["binary"] = binary
    ctx = options.Context(prog, cwd)
    ctx.source = "defaults"
    defaults = submit.default_request_words(cwd)
    options.parse(keep(defaults) if keep else defaults, req, ctx, allowed=allowed, stop_at_arg=False)
    ctx.soft = False
    # as Grid Engine's qsub: -b y of the request files makes the command a binary unless
    # the command line gives -b
    binary = probe["binary"] if "-b" in probe_ctx.seen or prog != "qsub" else req["binary"]
    prefix = probe_ctx.client.get("prefix", "#$")
    script = None
    directives = []
    if binary:
        if not rest and prog == "qsub":
            raise UsageError("no command given for -b y")
    else:
        script = submit.read_script(rest[0] if rest else None, stdin)
        text = script.decode("utf-8", "replace")
        directives = _without_prefix_option(script_directives(text, prefix))
        if keep:
            directives = keep(directives)
    if preset is not None:
        preset(req)
    if directives:
        ctx.source = "script"
        left = options.parse(directives, req, ctx, allowed=allowed)
        if left:
            raise UsageError(f'invalid option argument "{left[0]}" in script directive')
        ctx.soft = False
    # as Grid Engine's qsub: -sync and -verify count from any source, -terse and -C
    # only from the command line (Nextflow writes "#$ -terse" into every job script)
    ctx.client.pop("terse", None)
    ctx.client.pop("prefix", None)
    ctx.source = "cmdline"
    options.parse(list(argv), req, ctx, allowed=allowed)
    if req["binary"] and not binary:    # (only a directive can have set it)
        raise submit.Rejected("the -b option cannot be embedded in the script file itself: "
                              "give -b y on the command line")
    if binary and prog == "qsub":
        req["binary"] = True            # (a -clear after the request files' -b y keeps the command)
    if prog == "qsub":
        options.refuse_unknown(ctx)
    if req.get("ar") and "-w" not in ctx.seen[_last_clear(ctx.seen):]:
        req["verify"] = "e"             # (as Grid Engine's clients: -ar without -w means -w e)
    if binary:
        name, command, args = (rest[0], rest[0], rest[1:]) if rest else (None, None, [])
    else:
        name = rest[0] if rest and rest[0] != "-" else "STDIN"
        command, args = None, rest[1:]
    return req, script, ctx.client, name, command, args


def check(req):
    """Check a request as Grid Engine's qmaster checks a new job's (resources, queues,
    PE, checkpointing environment, project: ``submit.check_request``) and turn a
    ``-l slots=N`` into its PE request."""
    submit.check_request(req, new_job=True)
    submit.slots_as_pe(req)


def _last_clear(seen):
    """Where the options that count start: after the last -clear."""
    return max((i for i, word in enumerate(seen) if word == "-clear"), default=-1) + 1


def _check_admission(req, conf):
    """Refuse what Grid Engine's admission rules refuse (projects, users, -dl, job counts)."""
    owner = submit.submitter(posix.getcwd())["owner"]
    why = cellfacts.refusal(req, owner, conf)
    if why is not None:
        raise submit.Rejected(why)


def _check_ar(req):
    """Refuse a job for a reservation that does not exist or that it may not use."""
    import time
    from gridtools.cli.sge import arlist
    why = arlist.job_refusal(req, time.time())
    if why is not None:
        raise submit.Rejected(why)


def main(argv, prog="qsub"):
    if "-help" in argv or "--help" in argv:
        output_is_the_result()
        sys.stdout.write(options.usage(prog, ("all", "submit", "cli")))
        return 0
    try:
        return _submit(argv, prog)
    except submit.Rejected as exc:
        sys.stderr.write(f"Unable to run job: {exc}\nExiting.\n")
        return exc.exit_code
    except UsageError as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return exc.exit_code
    except options.UnknownOptions as exc:
        sys.stderr.write(f"{exc}\n\n")
        return exc.exit_code
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def _submit(argv, prog):
    cwd = posix.getcwd()
    stdin = sys.stdin.buffer if not sys.stdin.isatty() else None
    if not cell.initialised():          # (before the options: their defaults and checks read it)
        from gridtools.cli import cellinit
        cellinit.ensure_cell()
    req, script, client, name, command, args = build(argv, stdin, prog, cwd)
    if client.get("verify_only"):       # -verify: the would-be job described, nothing submitted
        from gridtools.cli.sge import qstat_j
        check(req)
        spec = submit.finish_spec(req, 1, name, cwd, args, command)
        output_is_the_result()
        sys.stdout.write("".join(line + "\n" for line in qstat_j.verify_lines(spec)))
        return 0
    if client.get("jsv"):               # as Grid Engine's, after -verify and before the master's checks
        from gridtools.cli.sge import jsv
        req, name, command, args = jsv.verify(client["jsv"], req, name, command, args,
                                              submit.submitter(cwd), prog, cwd,
                                              default_name=default_name(name, command, req["binary"]))
    check(req)
    conf = cellfacts.attributes(cell.etc("conf", "global"))
    if req.get("ar"):
        _check_ar(req)
    if req["verify"] in ("e", "v", "w", "p"):
        from gridtools.cli.sge import verify
        code = verify.report(req, client, prog)
        if code is not None:
            return code
    _check_admission(req, conf)
    submit.check_like_daemon(req)
    spec = submit.finish_spec(req, 1, name, cwd, args, command)
    submit.check_spec(spec, script, conf)
    guard = None
    if client.get("sync") or req.get("now"):
        from gridtools.cli.sge import sync
        guard = sync.arm()          # an interruption from here on deletes the job
    spec["id"] = ids.allocate("job")[0]
    try:
        submit.send(spec, script, conf)
    except submit.Refused:
        return 1
    print(submitted_message(spec, client.get("terse")), flush=True)
    if req.get("now"):
        from gridtools.cli.sge import sync
        if not sync.wait_immediate(spec, guard):
            return 1
    if client.get("sync"):
        from gridtools.cli.sge import sync
        return sync.wait(spec, guard=guard, terse=bool(client.get("terse")))
    return 0
