"""condor_submit: submit jobs from a submit description (HTCondor dialect).

    condor_submit [-terse] [-verbose] [-append LINE]... [-batch-name NAME]
                  [-dry-run FILE] [-factory] [-name SCHEDD] [NAME=value]... [FILE | -]
                  [-queue ARGS...]

Each cluster the description makes is one gridtools job (proc P is task
P+1; see formats.condor.spec); its id is claimed here, so the cluster
number is printed at once. The job's ads are built here and travel with the
description; the daemon checks them again. Nothing is queued unless every
cluster of the file could be built.

The submission needs the WRITE security level at the SCHEDD
(``gridtools.seclevels``): the caller is checked against the cell's
condor_config before any id is claimed, and a refusal is printed in
HTCondor's words with exit code 1. The request is marked as an HTCondor
command's, so the daemon applies the same check again. The request is not
waited for, as qsub's is not, unless the daemon may refuse what this
command's checks let through (``daemon_may_refuse``): then each cluster's
answer is waited for and a refusal said in HTCondor's words.

Start-up: a plain description (executable, streams, log, requests, literal
values, ``queue``) is read, built and queued with the modules imported at
the top here, which the launcher loads from the command's bundle, and none
of ``os``, ``re``, ``enum``, ``functools``, ``math`` or ``errno``; what only
other descriptions need (arguments and environments, macros, expressions,
the other queue forms, the rarer commands) and what only some runs need
(``submit_more``; ``submit_checks``, for configurations with submit
requirements or queue limits; ``submit_unused``, the list of every submit
command, only for a description with a line none of the commonest commands
sets, ``PLAIN_COMMANDS``) is imported where it is used. The WRITE check
reads the configuration's language only when the configuration could
restrict WRITE (``access.open_to_all``).
"""

import posix
import sys
import time

from gridtools import cell
from gridtools.cli import ask
from gridtools.cli.condor import access
from gridtools.cli.identity import submitter as identity
from gridtools.errors import GridError, InputError
from gridtools.formats import jobcheck
from gridtools.formats.safetext import output_is_the_result
from gridtools.formats.condor import spec as condor_spec
from gridtools.formats.condor.fsview import LocalFiles
from gridtools.formats.condor.jobattrs import unquoted
from gridtools.formats.condor.jobad import ADMIN_KNOBS, SubmitContext, max_jobs
from gridtools.formats.condor.submit import COMMAND, Assignment, QueueStatement, parse_submit, plain_count
from gridtools.spool import ids

#: the request's mark of an HTCondor command (the daemon's security levels apply)
CONDOR = "condor"
def more():
    """The module of what only some runs need (usage, options, NAME=value, -name, -terse,
    -verbose, -dry-run, parallel environments and GPUs)."""
    from gridtools.cli.condor import submit_more
    return submit_more


def options():
    """What the command line asks for, before it is read."""
    return {
        "file": None,           # None: stdin; "-": stdin, verbose
        "append": [], "queue": None, "terse": False, "verbose": False,
        "dry_run": None,        # the file -dry-run (or -dump) writes the ads to ("-": stdout)
        "dump": False,          # -dump: the ads are written as the submission's result
        "batch_name": None, "variables": {}, "schedd": None, "help": False,
        "knobs": None,          # the configuration's knobs a submission reads (submit_knobs)
        "factory": False,       # -factory: every cluster materialized late
        "confirm": False,       # the daemon's answer is waited for (check_requirements)
    }


def parse_args(argv):
    opts = options()
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "-":
            opts["file"] = "-"
        elif arg.startswith("-"):
            more().option(opts, arg, args)
        elif "=" in arg:
            more().variable(opts, arg)
        else:
            opts["file"] = arg
    return opts


# ---------------------------------------------------------------- building

def read_text(opts):
    """The submit description's text and its name for messages."""
    if opts["file"] in (None, "-"):
        if opts["file"] is None and opts["queue"] is not None and opts["variables"]:
            return "", "null"           # everything came from the command line
        data = sys.stdin.buffer.read() if not sys.stdin.isatty() or opts["file"] == "-" else b""
        return data.decode("utf-8", "surrogateescape"), "(stdin)"
    try:
        with open(opts["file"], "rb", buffering=0) as fh:
            return fh.readall().decode("utf-8", "surrogateescape"), opts["file"]
    except OSError as exc:
        raise InputError(f"ERROR: Failed to open command file ({opts['file']}) ({exc.strerror})") from None


def submitter(now):
    """The identity and the facts of the submitting user every job carries."""
    return dict(identity(posix.getcwd()), submit_time=now, account="sge")


def claim(taken, dry_run):
    """Claim the next cluster id for this submission, noted in ``taken`` (a dry run's are
    1, 2, ..., claimed from no one)."""
    number = ((taken[-1] + 1) if taken else 1) if dry_run else ids.allocate("job")[0]
    taken.append(number)
    return number


def release(taken, dry_run):
    """Give back the cluster ids ``taken`` (when the submission failed)."""
    if not dry_run:
        for number in taken:
            ids.release("job", number)


def setting(name):
    """A setting of this host's configuration (None when it surely has none): the
    configuration's language is read only when it may set it."""
    if not access.may_set(name):
        return None
    from gridtools.cli.condor.machineviews import client_config
    return client_config().get(name)


#: the knobs of this host's configuration a submission reads (``submit_knobs``)
SUBMIT_KNOBS = ("MAX_JOBS_PER_SUBMISSION", "SUBMIT_FACTORY_JOBS_BY_DEFAULT", "SUBMIT_PREVENT_MULTI_QUEUE",
                "SUBMIT_REQUIREMENT_NAMES", "JOB_TRANSFORM_NAMES", "MAX_JOBS_PER_OWNER",
                "MAX_JOBS_SUBMITTED", "WARN_ON_UNUSED_SUBMIT_FILE_MACROS") + ADMIN_KNOBS
#: the knobs condor_submit -interactive reads besides (cli.condor.submit_more)
INTERACTIVE_KNOBS = ("INTERACTIVE_SUBMIT_FILE", "INTERACTIVE_SUBMIT_CMD_OVERRIDE", "INTERACTIVE_SUBMIT_ARGS_OVERRIDE")


def submit_knobs(wanted=SUBMIT_KNOBS):
    """The knobs of ``wanted`` this host's configuration sets: name -> text. The
    configuration's language is read only when it may set one of them (one look at its
    file for them all)."""
    names = access.settable(wanted)
    if not names:
        return {}
    from gridtools.cli.condor.machineviews import client_config
    config = client_config()
    found = {}
    for name in names:
        text = config.get(name)
        if text is not None:
            found[name] = text
    return found


def knob_on(name, knobs):
    """Boolean knob ``name`` of this host's configuration (``knobs``: ``submit_knobs``)."""
    return name in knobs and more().knob_on(name)


def build(opts, text, source, taken, now, who, warnings=None, factories=None):
    """The job ads of the description, by cluster: [(cluster, [ads])]; the cluster ids
    claimed go into ``taken``; ``who``: the ``submitter``; what the build warns of goes
    into ``warnings`` (a list); the clusters materialized late into ``factories`` (a
    mapping: see ``SubmitContext``)."""
    cwd, dry_run = posix.getcwd(), opts["dry_run"] is not None
    desc = parse_submit(text, append=opts["append"], queue_override=opts["queue"], source=source,
                        variables=opts["variables"])
    if not desc.queues:
        raise InputError(f'ERROR: "{source}" doesn\'t contain any "queue" commands -- no jobs queued')
    if opts["knobs"] is None:           # (-interactive read them already, with its own)
        opts["knobs"] = submit_knobs()
    knobs = opts["knobs"]
    ctx = SubmitContext(cwd=cwd, owner=who["owner"], now=int(now), files=LocalFiles(cwd),
                        environ=None, variables=opts["variables"], filesystem_domain=cell.hostname(),
                        batch_name=unquoted(opts["batch_name"]), next_cluster=lambda: claim(taken, dry_run),
                        seed=time.time_ns(), max_jobs=max_jobs(knobs.get("MAX_JOBS_PER_SUBMISSION")),
                        setting=setting, admin=knobs)
    if warnings is not None:
        ctx.warnings = warnings
    ctx.factories = factories
    ctx.factory = 1 if opts["factory"] else \
        3 if not dry_run and knob_on("SUBMIT_FACTORY_JOBS_BY_DEFAULT", knobs) else 0
    ctx.one_queue = knob_on("SUBMIT_PREVENT_MULTI_QUEUE", knobs)
    first = claim(taken, dry_run)
    ads = desc.job_drafts(first, ctx)
    clusters = {}
    for ad in ads:
        clusters.setdefault(ad.eval("ClusterId"), []).append(ad)
    _release_unused(taken, clusters, dry_run)
    if len(desc.queues) > 1 and warnings is not None:
        warnings.insert(0, more().MULTI_QUEUE)
    if not ads and warnings is not None and not opts["terse"]:
        warnings.append(more().EMPTY_QUEUE.format(source=source))
    if ads and warnings is not None and not opts.get("interactive"):
        whole = "\n".join([text, *opts["append"]])
        if _may_be_unused(desc, whole, opts["variables"]):
            from gridtools.cli.condor import submit_unused
            if submit_unused.warn_unused_on(opts, knobs):
                warnings.extend(submit_unused.unused_lines(desc, whole, opts["variables"], ctx.files))
    return sorted(clusters.items())


#: commands of the commonest descriptions, each one condor_submit reads (so a line that
#: sets one is never unused: ``submit_unused.KNOWN_COMMANDS``, ``jobad.ALIASES``)
PLAIN_COMMANDS = frozenset((
    "executable", "arguments", "args", "universe", "input", "output", "error", "log", "hold",
    "request_cpus", "request_memory", "request_disk", "request_gpus", "requestcpus", "requestmemory",
    "requestdisk", "stream_output", "stream_error", "should_transfer_files", "when_to_transfer_output",
    "transfer_input_files", "transfer_output_files", "transfer_executable", "getenv", "environment",
    "initialdir", "notification", "notify_user", "requirements", "rank", "batch_name", "priority",
    "accounting_group", "accounting_group_user", "on_exit_remove", "on_exit_hold", "periodic_hold",
    "periodic_release", "periodic_remove", "max_retries", "job_lease_duration", "leave_in_queue"))


def _may_be_unused(desc, text, variables=None):
    """False when no command line of the description can be one condor_submit warns
    of as unused (``submit_unused.unused_lines``), which the commonest descriptions let
    know without the list of every command: each sets one of PLAIN_COMMANDS, a dotted
    name (a ``MY.`` attribute), or a macro ``text`` (the description and the lines
    appended) refers to as ``$(name)``, spelled as set; no command-line ``NAME=value``
    (``variables``) sets another name, and no queue statement has variables."""
    if variables and any("." not in name for name in variables):
        return True
    for statement in desc.statements:
        if isinstance(statement, QueueStatement):
            if statement.inline is not None or plain_count(statement.args) is None:
                return True
            continue
        if isinstance(statement, Assignment) and statement.kind == COMMAND:
            name = statement.name
            if name.lower() in PLAIN_COMMANDS or "." in name:
                continue
            if name.isascii() and name.replace("_", "a").isalnum() and not name[0].isdigit() \
                    and f"$({name})" in text:
                continue
            return True
    return False


def _release_unused(taken, clusters, dry_run):
    """Give back the ids of ``taken`` no proc was made in (a ``queue 0``), so that only
    the clusters queued keep theirs."""
    unused = [number for number in taken if number not in clusters]
    release(unused, dry_run)
    taken[:] = [number for number in taken if number in clusters]


def check_spec(spec, ads=()):
    """Refuse a cluster this cell cannot run, in HTCondor's words (``ads``: its procs, whose
    own requests are checked too where their stored ads change any)."""
    _check_requests(spec.get("pe"), spec["resources"]["hard"])
    texts = spec.get("condor_ad")
    if isinstance(texts, list):
        for ad, text in zip(ads[1:], texts[1:]):
            if "request" in text.lower() or "maxhosts" in text.lower():
                _check_requests(*condor_spec.requests_of(ad, ""))
    try:
        jobcheck.check(spec)
    except jobcheck.Invalid as exc:
        raise InputError(f"ERROR: {exc}") from None


def _check_requests(pe, hard):
    if pe and pe[0] not in more().pe_names():
        raise InputError(f"ERROR: this cell has no parallel environment \"{pe[0]}\" for jobs "
                         "of more than one CPU or machine")
    if condor_spec.GPU_REQUEST in hard and condor_spec.GPU_REQUEST not in more().complexes():
        raise InputError("ERROR: request_gpus: this cell has no GPUs (no complex "
                         f"\"{condor_spec.GPU_REQUEST}\")")


def touch_log(ads):
    """Create each user log named (as condor_submit does), so readers find it at once
    (``ownfiles.open_own``: not through a link another user planted in a sticky folder)."""
    for path in sorted({ad.eval("UserLog") for ad in ads if isinstance(ad.eval("UserLog"), str)}):
        from gridtools.ownfiles import open_own
        try:
            fd = open_own(path, posix.O_WRONLY | posix.O_CREAT | posix.O_APPEND | posix.O_NONBLOCK, 0o644,
                          follow_last=False)
            posix.close(fd)
        except OSError as exc:
            raise InputError(f"ERROR: Invalid log file: \"{path}\" ({exc.strerror})") from None


def check_write():
    """Refuse (exit 1) a caller the WRITE level at the SCHEDD does not allow, as
    condor_submit words a schedd's refusal."""
    who = access.refused("WRITE", "SCHEDD")
    if who is not None:
        sys.stderr.write("ERROR: Failed to connect to local queue manager\n")
        raise GridError(access.denied_line(who), 1)


# ---------------------------------------------------------------- output

def summary(clusters, dry_run):
    """What condor_submit prints: a dot per proc, then a line per cluster."""
    dots = "".join("." for _c, ads in clusters for _ad in ads)
    verb = "dry-run" if dry_run else "submitted"
    head = ("Dry-Run job(s)" if dry_run else "Submitting job(s)") + dots + "\n"
    return head + "".join(f"{len(ads)} job(s) {verb} to cluster {c}.\n" for c, ads in clusters)


# ---------------------------------------------------------------- main

def main(argv, prog="condor_submit"):
    try:
        opts = parse_args(argv)
        if opts["help"]:
            output_is_the_result()
            sys.stdout.write(more().USAGE)
            return 0
        return _submit(opts)
    except Refused:
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def _submit(opts):
    if opts["schedd"] and not more().known_schedd(opts["schedd"]):
        raise InputError(f"ERROR: Can't find address of schedd {opts['schedd']}")
    if opts.get("interactive"):
        opts["knobs"] = submit_knobs(SUBMIT_KNOBS + INTERACTIVE_KNOBS)
        text, source = more().interactive_text(opts, opts["knobs"])
    else:
        text, source = read_text(opts)
    now = time.time()
    if opts["dry_run"] is None:
        if not cell.initialised():
            from gridtools.cli import cellinit
            cellinit.ensure_cell()
        check_write()
    taken, warnings, factories = [], [], {}
    try:
        who = submitter(now)
        clusters = build(opts, text, source, taken, now, who, warnings, factories)
        if "max_jobs" in opts or "single_cluster" in opts:
            more().check_counts(opts, clusters)
        warned = check_requirements(clusters, opts) if opts["dry_run"] is None else []
        if opts["dry_run"] is None:
            check_job_limits(clusters, opts["knobs"], who["owner"], factories)
            opts["confirm"] = opts["confirm"] or daemon_may_refuse(opts["knobs"]) \
                or foreign_accounting(clusters, who["owner"])
        specs = _specs(clusters, who, factories) if opts["dry_run"] is None else []
    except BaseException:
        release(taken, opts["dry_run"] is not None)
        raise
    if opts["dry_run"] is not None:
        more().dry_run_output(opts, clusters)
        _warn(warnings)
        return 0
    _send(specs, taken, (opts, clusters) if opts["confirm"] else None)
    _report(opts, clusters, warned)
    _warn(warnings)
    if opts.get("interactive"):
        return more().start_session(clusters)
    return 0


def check_requirements(clusters, opts):
    """Check each job against the submit requirements of this host's configuration
    (SUBMIT_REQUIREMENT_NAMES), as the schedd would (``submit_checks.check_requirements``).
    Returns the first warning of the rules that only warn, or nothing."""
    names = opts["knobs"].get("SUBMIT_REQUIREMENT_NAMES")
    if not names or not names.strip():
        return []
    from gridtools.cli.condor import submit_checks
    return submit_checks.check_requirements(clusters, opts, names)


def foreign_accounting(clusters, owner):
    """True when a job names an accounting group whose user is not its owner, or gives it
    as an expression: the daemon decides whether the owner may
    (``daemon.condorreq.accounting_refusal``), and this command waits for its word."""
    for _cluster, ads in clusters:
        for ad in ads:
            if "AccountingGroup" in ad:
                group = ad.eval("AccountingGroup") if ad.plain("AccountingGroup") else None
                if not isinstance(group, str) or group.rpartition(".")[2] != owner:
                    return True         # (another user, or an expression: the daemon says)
    return False


def daemon_may_refuse(knobs):
    """True when the daemon may refuse what this command's own checks let through, so
    that it waits for the daemon's verdict (``_send``): the configuration has
    submit requirements or limits of the queue (``knobs``: ``submit_knobs``; the daemon
    counts the queue as it is, this command as the last status showed it), or the
    daemon marks that it checks rules (``ask.checks_marked``: the cell's own
    condor_config's, and Grid Engine's admission rules, ``max_u_jobs`` among them, which
    hold HTCondor jobs too), or the caller reads another configuration than the cell's
    (CONDOR_CONFIG, ``_CONDOR_`` variables), which the daemon does not."""
    if (knobs.get("SUBMIT_REQUIREMENT_NAMES") or "").strip() or "MAX_JOBS_SUBMITTED" in knobs \
            or "MAX_JOBS_PER_OWNER" in knobs or ask.checks_marked():
        return True
    from gridtools import ospaths
    own = ospaths.getenv("CONDOR_CONFIG")
    return bool(own and own != cell.etc("condor_config")) or bool(access.condor_variables())


def check_job_limits(clusters, knobs, owner, factories=None):
    """Refuse a submission that would take the queue over MAX_JOBS_SUBMITTED procs, or
    its owner's over MAX_JOBS_PER_OWNER, when this host's configuration sets them
    (``submit_checks.check_job_limits``)."""
    if "MAX_JOBS_PER_OWNER" not in knobs and "MAX_JOBS_SUBMITTED" not in knobs:
        return
    from gridtools.cli.condor import submit_checks
    submit_checks.check_job_limits(clusters, knobs, owner, factories)


class Refused(Exception):
    """A submission the submit requirements refused, said already (exit 1)."""


def _said(text):
    """A rule's reason as one line (its own control characters escaped), with the line
    break HTCondor's own reasons end with kept."""
    from gridtools.errors import one_line
    return one_line(text.rstrip("\n")) + ("\n" if text.endswith("\n") else "")


def _warn(warnings):
    """The build's warnings, after all else, as condor_submit prints them at its end (a
    text that starts a line of its own, as it is)."""
    if warnings:
        sys.stdout.flush()
        sys.stderr.write("".join(line + "\n" if line.startswith("\n") else f"WARNING: {line}\n"
                                 for line in warnings))


def _specs(clusters, who, factories):
    specs = []
    for cluster, ads in clusters:
        counted = more().countable_complexes() if condor_spec.custom_requests(ads[0]) else None
        spec = condor_spec.cluster_spec(ads, who, counted, defer=True, factory=factories.get(cluster))
        check_spec(spec, ads)
        specs.append(spec)
    touch_log([ad for _c, ads in clusters for ad in ads])
    return specs


def _send(specs, taken, confirm=None):
    """Queue the clusters' requests; the ids of those not sent go back. With ``confirm``
    ((opts, clusters): when the daemon may refuse what this command's own checks let
    through, ``daemon_may_refuse``, or a user map this user cannot read,
    ``check_requirements``) each cluster's answer is waited for, so that one the daemon
    refuses is said as condor_submit says a schedd's refusal (``Refused``, exit 1), and
    the clusters after it are not sent (those before it stay queued)."""
    sent = [0]
    try:
        if confirm is not None:
            from gridtools.cli.condor.submit_checks import send_confirmed
            send_confirmed(specs, confirm, sent)
            return
        for spec in specs:
            ask.tell("submit", {"job": spec, "dialect": CONDOR})
            sent[0] += 1
    except BaseException:
        release(taken[sent[0]:], False)
        raise


def _report(opts, clusters, warned=()):
    """What a submission prints; the submit requirements' warning (``warned``) comes as
    condor_submit prints it: after the proc dots, before the clusters' lines."""
    if opts["terse"]:
        out = "".join(line + "\n" for line in more().terse_lines(clusters))
    elif opts["verbose"] or opts["file"] == "-":
        out = more().verbose_text(clusters)
    else:
        out = summary(clusters, False)
    if warned:
        from gridtools.formats.condor.submitreqs import warning_text
        head, _, out = out.partition("\n") if not opts["terse"] else ("", "", out)
        sys.stdout.write(head)
        sys.stdout.flush()
        sys.stderr.write(warning_text(_said(warned[0])))
        out = "\n" + out if head else out
    sys.stdout.write(out)
    sys.stdout.flush()
