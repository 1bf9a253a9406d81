"""What only some condor_submit runs need, kept out of the command's start-up
(``cli.condor.submit`` imports it where it is used): the usage text, the
options (every ``-word``) and ``NAME=value`` arguments, the check of a
``-name``d schedd (which condor_q, condor_rm and condor_qedit make too), the
``-terse``, ``-verbose`` and ``-dry-run`` outputs, the warnings of several
queue statements and of none that makes a proc, and the checks of the
parallel environments and GPUs a cluster asks for.
"""

import posix
import re
import sys

from gridtools import cell
from gridtools.errors import InputError, UsageError, lines

USAGE = """\
Usage: condor_submit [options] [<attrib>=<value>] [- | <submit-file>]
    [options] are
\t-file <submit-file>\tRead Submit commands from <submit-file>
\t-terse  \t\tDisplay terse output, jobid ranges only
\t-verbose\t\tDisplay verbose output, jobid and full job ClassAd
\t-append <line>\t\tadd line to submit file before processing
\t              \t\t(overrides submit file; multiple -a lines ok)
\t-queue <queue-opts>\tappend Queue statement to submit file before processing
\t                   \t(submit file must not already have a Queue or Iterate)
\t-batch-name <name>\tappend a line to submit file that sets the batch name
\t-dry-run <filename>\tprocess submit file and write ClassAd attributes to <filename>
\t        \t\tbut do not actually submit the job(s) to the SCHEDD
\t-maxjobs <maxjobs>\tDo not submit if number of jobs would exceed <maxjobs>.
\t-single-cluster\t\tDo not submit if more than one ClusterId is needed.
\t-dump <filename>\tWrite job ClassAds to <filename> instead of
\t                \tsubmitting to a schedd.
\t-interactive\t\tsubmit an interactive session job
\t-factory\t\tSubmit a late materialization job factory
\t-name <name>\t\tsubmit to the specified schedd
\t<attrib>=<value>\tSet <attrib>=<value> before reading the submit file.

    If <submit-file> is omitted or is -, and a -queue is not provided, submit commands
     are read from stdin. Use of - implies verbose output unless -terse is specified
"""


#: what HTCondor 24's condor_submit says of a description with more than one queue
#: statement (printed as it is, before the other warnings)
MULTI_QUEUE = ("\nWarning: Use of multiple queue statements in a single submit file is deprecated."
               "\n         This functionality will be removed in the 25.x feature series. To see"
               "\n         how multiple queue statements can be converted into one visit:"
               "\nhttps://htcondor.readthedocs.io/en/latest/auto-redirect.html?category=example"
               "&tag=convert-multi-queue-statements")
#: what HTCondor's condor_submit says (on standard error, but with -terse) of a description
#: whose queue statements make no proc (``queue 0``); nothing is queued, and it exits 0
EMPTY_QUEUE = '\nWARNING: "{source}" has only empty "queue" commands -- no jobs queued'


def _prefix(arg, word, least):
    """HTCondor's option matching: ``-word`` abbreviated to at least ``least`` letters."""
    name = arg.lstrip("-")
    return arg.startswith("-") and least <= len(name) <= len(word) and word.startswith(name)


#: the options with a value: (name, fewest letters, the key of the options it sets; None:
#: read and ignored)
_VALUED = (("append", 1, "append"), ("batch-name", 1, "batch_name"), ("file", 2, "file"), ("name", 1, "schedd"), ("remote", 1, "schedd"),
           ("pool", 2, None), ("addr", 2, None))


def option(opts, arg, args):
    """Read option ``arg`` into ``opts`` (its value, when it takes one, from ``args``)."""
    if _prefix(arg, "help", 1):
        opts["help"] = True
    elif _prefix(arg, "verbose", 1):
        opts["verbose"], opts["terse"] = True, False
    elif _prefix(arg, "terse", 3):
        opts["terse"], opts["verbose"] = True, False
    elif _prefix(arg, "queue", 1) or _prefix(arg, "iterate", 2) or _prefix(arg, "table", 5):
        queue_words(opts, arg, args)
    elif _prefix(arg, "factory", 2) or _prefix(arg, "generator", 1):
        opts["factory"] = True
    elif _prefix(arg, "unused", 1):
        opts["unused"] = not opts.get("unused")        # (each one turns the warnings over)
    elif _prefix(arg, "disable", 1) or _prefix(arg, "spool", 1):
        pass
    elif _prefix(arg, "single-cluster", 3):
        opts["single_cluster"] = True
    elif _prefix(arg, "dump", 2) or _prefix(arg, "dry-run", 3):
        dump = _prefix(arg, "dump", 2)
        if opts["dry_run"] is not None and opts.get("dump", False) != dump:
            raise UsageError("condor_submit: -dump <file> and -dry-run <file> cannot be used together" if dump
                             else "condor_submit: -dry-run <file> and -dump <file> cannot be used together", 1)
        if not args or (args[0].startswith("-") and args[0] != "-"):
            raise UsageError(f"condor_submit: {arg} requires another argument", 1)
        opts["dry_run"], opts["dump"] = args.pop(0), dump
    elif _prefix(arg, "interactive", 1):
        opts["interactive"] = True
    elif _prefix(arg, "maxjobs", 3):
        if not args:
            raise UsageError(f"condor_submit: {arg} requires another argument", 1)
        value = args.pop(0)
        if not re.fullmatch(r"\s*[-+]?\d+", value):            # (strtol, whole)
            raise UsageError(f"Error: Unable to convert argument ({value}) to a number for -maxjobs.", 1)
        if int(value) < -1:
            raise UsageError(f"Error: {int(value)} is not a valid for -maxjobs.", 1)
        opts["max_jobs"] = int(value)
    else:
        for word, least, attr in _VALUED:
            if _prefix(arg, word, least):
                if not args or (args[0].startswith("-") and args[0] != "-"):
                    raise UsageError(f"condor_submit: {arg} requires another argument", 1)
                value = args.pop(0)
                if attr == "append":
                    opts["append"].append(value)
                elif attr:
                    opts[attr] = value
                return
        sys.stderr.write(USAGE)
        raise UsageError(f"condor_submit: unknown option {arg}", 1)


def check_counts(opts, clusters):
    """-maxjobs and -single-cluster: refuse, in condor_submit's words, a submission of
    more jobs or clusters (nothing is queued)."""
    most = opts.get("max_jobs") or 0
    if most > 0 and sum(len(ads) for _c, ads in clusters) > most:
        raise InputError(lines("", f"ERROR: Number of submitted jobs would exceed -maxjobs ({most})"))
    if opts.get("single_cluster") and len(clusters) > 1:
        raise InputError(lines("", "ERROR: Number of submitted clusters would exceed 1 and -single-cluster "
                               "was specified"))


def queue_words(opts, arg, args):
    """``-queue`` (or ``-iterate``, another word for it) and the words after it (up to the
    next option) as the queue statement's arguments; ``-table FILE``: ``from table FILE``
    (HTCondor 24 has both, unlisted in its usage)."""
    if not args or args[0].startswith("-"):
        raise UsageError(f"condor_submit: {arg} requires at least one argument", 1)
    if opts["queue"] is not None:
        raise UsageError(f"condor_submit: only one {arg} command allowed", 1)
    if _prefix(arg, "table", 5):
        opts["queue"] = "from table " + args.pop(0)
        return
    words = []
    while args and (args[0] == "-" or not args[0].startswith("-")):
        words.append(args.pop(0))
    opts["queue"] = " ".join(words)


def variable(opts, arg):
    """A ``NAME=value`` argument, set before the file is read. As HTCondor's
    condor_submit reads it, the name is letters, digits, ``_``, ``.`` and ``/`` (``MY.NAME``
    an attribute): ``+NAME`` is refused (its test of a leading ``+`` looks at the second
    character, which makes ``a+b`` the name ``MY.+b``, refused too)."""
    name, _, value = arg.partition("=")
    name, value = name.strip(), value.strip()
    if name[1:2] == "+":
        name = "MY." + name[1:]
    if not name or not all(c.isascii() and c.isalnum() or c in "_./" for c in name):
        raise UsageError(f"condor_submit: invalid attribute name '{name}' for attrib=value assigment", 1)
    opts["variables"][name] = value


def knob_on(name):
    """Boolean knob ``name`` of this host's configuration, False when it is not set or
    not a boolean."""
    from gridtools.cli.condor.machineviews import client_config
    from gridtools.formats import condor_config
    try:
        return condor_config.boolean(client_config(), name, False)
    except condor_config.ConfigError:
        return False


def known_schedd(name):
    """True when ``name`` is this cell's schedd (its host, by any of its names)."""
    return cell.is_this_host(name.split("@")[-1])


def pe_names():
    """The parallel environments the cell defines."""
    try:
        return set(posix.listdir(cell.etc("pe")))
    except OSError:
        return set()


def complexes():
    """The names of the cell's complex attributes."""
    try:
        with open(cell.etc("complex"), encoding="utf-8") as fh:
            return {line.split()[0] for line in fh if line.strip() and not line.startswith("#")}
    except OSError:
        return set()


def countable_complexes():
    """Name in lower case -> name of the cell's machine resources
    (``formats.sge.complex.machine_resources``), as the daemon counts them; none when
    the complex cannot be read (the daemon checks the job again)."""
    from gridtools.formats.sge.complex import machine_resources_in
    return machine_resources_in(cell.etc("complex"))


def terse_lines(clusters):
    """``-terse``: the first and last id of each cluster."""
    return [f"{c}.{ads[0].eval('ProcId')} - {c}.{ads[-1].eval('ProcId')}" for c, ads in clusters]


def verbose_text(clusters):
    """``-verbose`` (and a description read from ``-``): each proc's id and ad."""
    return "".join(f"\n** Proc {c}.{ad.eval('ProcId')}:\n{ad}" for c, ads in clusters for ad in ads)


def write_dry_run(target, clusters, dump=False):
    """The ads in long form, a blank line after each, into ``target`` ("-": stdout), for
    -dry-run or (``dump``) -dump."""
    text = "".join(f"{ad}\n" for _c, ads in clusters for ad in ads)
    if target == "-":
        sys.stdout.write(text)
        return
    from gridtools import ownfiles
    try:
        with ownfiles.open_text(target) as fh:     # (not through a link another user planted)
            fh.write(text)
    except OSError as exc:
        what = "to dump ClassAds into" if dump else "-dry-run output file"
        raise InputError(f"ERROR: Failed to open file {what} ({exc.strerror})") from None


def dump_report(opts, clusters):
    """What -dump into a file prints (-dump - prints only the ads): the proc dots after
    "Storing job ClassAd(s)" and a line per cluster, as a submission says them; -terse's
    ranges, or -verbose's ads."""
    if opts["terse"]:
        return "".join(line + "\n" for line in terse_lines(clusters))
    if opts["verbose"]:
        return verbose_text(clusters)
    dots = "".join("." for _c, ads in clusters for _ad in ads)
    return f"Storing job ClassAd(s){dots}\n" + "".join(
        f"{len(ads)} job(s) submitted to cluster {c}.\n" for c, ads in clusters)


# ---------------------------------------------------------------- -interactive

#: the waiting program of an interactive job (INTERACTIVE_SUBMIT_CMD_OVERRIDE,
#: INTERACTIVE_SUBMIT_ARGS_OVERRIDE): as HTCondor's, it waits 180 seconds at most for
#: its session (the directory .condor_ssh_to_job_1 condor_ssh_to_job makes in the
#: scratch directory for the session condor_submit opens), then as long as that
#: directory is there, every 3 seconds; here, as long as the process its ``owner`` file
#: names (pid and start time) goes on: the session's end removes the file (the directory
#: stays for this program to see and remove), and a session whose process ended without
#: removing it (its client killed) is over too. It ends with exit status 0 as soon as
#: its session has, not after 180 seconds in any case.
INTERACTIVE_COMMAND = "/bin/sh"
INTERACTIVE_ARGS = ("\"-c 'd=${_CONDOR_SCRATCH_DIR}/.condor_ssh_to_job_1; i=0; "
                    "while test $i -lt 180 && ! test -d $d; do /bin/sleep 1; i=$((i+1)); done; "
                    "while read p t < $d/owner && read s < /proc/$p/stat && set -- ${s##*) } "
                    "&& test ${20} = $t; do /bin/sleep 3; done 2>/dev/null; rm -rf $d; exit 0'\"")
#: the description of ``condor_submit -interactive`` without a file: HTCondor's
#: interactive.sub (its shell logs out after 2 hours idle: TMOUT)
INTERACTIVE_TEXT = (f"universe = vanilla\nexecutable = {INTERACTIVE_COMMAND}\narguments = {INTERACTIVE_ARGS}\n"
                    "environment = \"TMOUT=7200\"\ntransfer_executable = false\nnotification = never\n"
                    "priority = 1000\nrequest_memory = 512m\nqueue\n")
#: the JobDescription of an interactive job that has none (as HTCondor's)
INTERACTIVE_DESCRIPTION = '"interactive job"'


def interactive_text(opts, knobs):
    """-interactive: (the description's text, its name): the file given (its executable
    and arguments replaced by INTERACTIVE_SUBMIT_CMD_OVERRIDE and
    INTERACTIVE_SUBMIT_ARGS_OVERRIDE, as HTCondor rewrites them), else
    INTERACTIVE_SUBMIT_FILE, else the built-in one; the jobs are marked InteractiveJob,
    and described as "interactive job" unless the description says otherwise."""
    from gridtools.cli.condor.submit import read_text
    opts["append"].append("MY.InteractiveJob = True")
    opts["variables"].setdefault("MY.JobDescription", INTERACTIVE_DESCRIPTION)
    if opts["factory"]:
        raise InputError(lines("", "ERROR: Interactive jobs cannot be materialized late"))
    if opts["file"] not in (None, "-"):
        text, source = read_text(opts)
        command = knobs.get("INTERACTIVE_SUBMIT_CMD_OVERRIDE") or INTERACTIVE_COMMAND
        arguments = knobs.get("INTERACTIVE_SUBMIT_ARGS_OVERRIDE") or INTERACTIVE_ARGS
        opts["append"] += [f"executable = {command}", f"arguments = {arguments}", "transfer_executable = false"]
        return text, source
    path = (knobs.get("INTERACTIVE_SUBMIT_FILE") or "").strip()
    if path:
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                return fh.read(), path
        except OSError as exc:
            raise InputError(f"ERROR: Failed to open command file ({path}) ({exc.strerror})") from None
    return INTERACTIVE_TEXT, "interactive.sub"


def start_session(clusters):
    """-interactive, once the job is queued: condor_ssh_to_job to its first proc, waiting
    for it to start; an interrupt removes it. The session's exit status."""
    from gridtools.cli.condor import ssh_to_job
    sys.stdout.flush()
    cluster = clusters[0][0]
    return ssh_to_job.main(["-auto-retry", "-remove-on-interrupt", "-X", f"{cluster}.0"], submitted=True)


def dry_run_output(opts, clusters):
    """What -dry-run (and -dump) write: the ads to their file, then the report, or the
    summary a dry run prints (nothing more when the ads go to standard output)."""
    from gridtools.cli.condor.submit import summary
    from gridtools.formats.safetext import output_is_the_result
    if opts["dry_run"] == "-":
        output_is_the_result()
    write_dry_run(opts["dry_run"], clusters, opts["dump"])
    if opts["dump"] and opts["dry_run"] != "-":
        sys.stdout.write(dump_report(opts, clusters))
    elif opts["dry_run"] != "-":
        # (-terse: the ranges a submission would print)
        sys.stdout.write("".join(line + "\n" for line in terse_lines(clusters)) if opts["terse"]
                         else summary(clusters, True))
