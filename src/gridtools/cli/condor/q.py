"""condor_q: the jobs in the queue (HTCondor dialect), jobs of qsub included.

Reads the published status (``cli.status``): the default batch view and
``-totals`` come from its job listing (``qlisting``); ``-nobatch``, ``-run``,
``-hold`` of 10,000 jobs cost one file read and string formatting; job ads
are built only for ``-l``, ``-json``, ``-af``, ``-format``, ``-constraint``,
``-idle``, ``-dag`` and the analysis, and only for the procs selected by ids
and users first. Options
may be abbreviated as HTCondor allows. Tables are in ``qviews``; attribute
printing in ``formatting``; the analysis in ``analyze``. A caller the READ
level at the SCHEDD does not allow is refused before anything is read
(``check_read``); without a READ restriction in the configuration that costs
one read of its global file (``access.open_to_all``). ``-userlog FILE`` shows
the jobs of a job event log instead, in the same views (``qlog``), and
``-jobads FILE`` those of a file of job ads (``qjobads``).
"""

import sys
import time

from gridtools.cli import status
from gridtools.cli.condor import access, cut, qlisting, qviews, queue as Q
from gridtools.errors import GridError, UsageError

USAGE = """\
Usage: condor_q [general-opts] [restriction-list] [output-opts | analyze-opts]

    [general-opts] are
\t-allusers\t\t Consider jobs from all users
\t-name <name>\t\t Name of schedd
\t-jobads[:<form>] <file>\t Read queue from a file of job ClassAds
\t-userlog <file>\t\t Read queue from a user log file
    [restriction-list] each restriction may be one of
\t<cluster>\t\t Get information about specific cluster
\t<cluster>.<proc>\t Get information about specific job
\t<owner>\t\t\t Information about jobs owned by <owner>
\t-factory\t\t Get information about late materialization job factories
\t-autocluster\t\t Get information about the SCHEDD's autoclusters
\t-constraint <expr>\t Get information about jobs that match <expr>
\t-unmatchable\t\t Get information about jobs that do not match any machines
    [output-opts] are
\t-limit <num>\t\t Limit the number of results to <num>
\t-cputime\t\t Display CPU_TIME instead of RUN_TIME
\t-currentrun\t\t Display times only for current run
\t-batch\t\t\t Show a single row for each batch of jobs (the default)
\t-nobatch\t\t Show a row for each job
\t-dag\t\t\t Sort DAG jobs under their DAGMan
\t-run\t\t\t Get information about running jobs
\t-hold\t\t\t Get information about jobs on hold
\t-hold-codes\t\t Display first job for each unique hold code and subcode
\t-idle\t\t\t Get information about idle jobs
\t-io\t\t\t Display information regarding I/O
\t-grid\t\t\t Get information about grid jobs
\t-totals\t\t\t Display only job totals
\t-stream-results \t Produce output as jobs are fetched
\t-long\t\t\t Display entire ClassAds
\t-json\t\t\t Display entire ClassAds in JSON
\t-xml\t\t\t Display entire ClassAds in XML
\t-attributes X,Y,...\t Attributes to show in -long and -json
\t-format <fmt> <attr>\t Print attribute attr using format fmt
\t-print-format <file>\t Use <file> to set display attributes and formatting
\t-autoformat[:jlhVr,tng] <attr> [<attr2> [...]]
\t\t\t\t Print attr(s) with automatic formatting
\t-af[:jlhVr,tng] <attr> [<attr2> [...]]
\t\t\t\t Same as -autoformat
\t-version\t\t Print the HTCondor version and exit
\t-wide[:<width>]\t\t Don't truncate data to fit in 80 columns.
\t\t\t\t Truncates to console width or <width> argument.
    [analyze-opts] are
\t-analyze[:<qual>]\t Perform matchmaking analysis on jobs
\t-better-analyze[:<qual>] Perform more detailed match analysis
\t    <qual> is a comma separated list of one or more of
\t    priority\tConsider user priority during analysis
\t    summary\tShow a one-line summary for each job or machine
\t    reverse\tAnalyze machines rather than jobs
\t-machine <name>\t\t Machine name or slot name for analysis
\t-mconstraint <expr>\t Machine constraint for analysis
\t-slotads[:<form>] <file> Read Machine ClassAds for analysis from <file>
\t\t\t\t <file> can be the output of condor_status -long
\t-userprios <file>\t Read user priorities for analysis from <file>
\t\t\t\t <file> can be the output of condor_userprio -l
\t-nouserprios\t\t Don't consider user priority during analysis (default)
\t-reverse-analyze\t Analyze Machine requirements against jobs
"""


class Options:
    def __init__(self):
        self.selection = Q.Selection()
        self.view = "batch"          # batch nobatch run hold idle totals long json af format analyze
        self.af_attrs, self.af_quals = [], ""
        self.formats = []            # [(fmt, attr)]
        self.attributes = None       # -attributes
        self.dag = False
        self.factory = 0             # -factory[:OPTS]: cluster ads (qfactory.CLUSTERS, .LATE: bits)
        self.form = None             # the form of the ads: long, json or xml
        self.grouped = False         # -hold-codes: a row per hold code and subcode
        self.stream = False          # -stream-results
        self.states = set()          # of -run, -hold and -idle: the one given
        self.hold_codes = []         # -hold:CODE[/SUB],...: [(code, subcode or None)]
        self.ec2 = False             # -grid:ec2
        self.batch = None            # -batch (True), -nobatch (False), or neither
        self.zero = "_"              # what the batch view shows for a count of 0 (-batch:MARK)
        self.fold_dags = False       # -batch:N with N's bit 2: the DAGs of a batch name in one row
        self.unreduced = False       # -batch:0: the batch view's columns, a row per job (qbatchraw)
        self.aaf = []                # -aaf's (qualifier, words): columns appended (qappend)
        self.better = False
        self.limit = 0
        self.wide = None             # -wide: True; -wide:N: N
        self.cputime = False         # -cputime: CPU_TIME for RUN_TIME
        self.current_run = None      # -currentrun (True) or -cumulative-time (False)
        self.help = False
        self.version = False
        self.schedd = None
        self.userlog = None          # -userlog: the jobs of a job event log (qlog)
        self.print_format = None     # -print-format's printmask.Mask (view "print")
        self.jobads = None           # -jobads: the jobs of a file of job ads (qjobads)
        self.jobads_form = "auto"    # -jobads:FORM, -slotads:FORM: the form of the file
        self.slotads_form = "auto"
        self.userprios = None        # -userprios: a file of user priorities for the analysis
        self.prios = False           # the analysis weighs user priorities (-analyze:priority)
        self.summary = False         # -analyze:summary: a line per autocluster
        self.machine = None          # -machine: the slot or machine name the analysis looks at
        self.mconstraint = None      # -mconstraint: the slots the analysis looks at
        self.slotads = None          # -slotads: a file of slot ads for the analysis
        self.reverse = False         # -reverse-analyze, -analyze:reverse: the slots' side
        self.detail = 0              # the analysis' detail flags (noprune, diagnostic, ifthenelse: steps)
        self.unmatchable = False     # -unmatchable: only the jobs no slot matches
        self.autocluster = None      # -autocluster ("default") or -group-by ("group-by"): qautocluster


def _is(arg, word, least=1):
    name = arg[1:].split(":", 1)[0] if arg.startswith("-") else ""
    return least <= len(name) <= len(word) and word.startswith(name)


#: -batch:MARK's marks: what the batch view shows for a count of 0 (HTCondor's alt texts)
_ZERO_MARKS = {"b": "", "?": "?", "*": "*", ".": ".", "-": "-", "_": "_", "#": "#", "z": "0"}


def _batch_marks(opts, text):
    """-batch:N and -batch:MARK (several, split by "," or ":"): a word starting with one
    of ``b?*.-_#z`` sets the mark shown for a count of 0 (blank, the character, or 0 for
    z; the last one counts), as HTCondor's alternative texts; N (a word starting with a
    digit, read as C's atoi; the last one counts) picks HTCondor's experimental forms
    of the view: with its bit 2 set, the DAGs of one owner's batch name are one row."""
    from gridtools.formats.condor import c_atoi
    for word in text.replace(":", ",").split(","):
        if word and word[0] in _ZERO_MARKS:
            opts.zero = _ZERO_MARKS[word[0]]
        elif word[:1].isdigit():
            opts.fold_dags = bool(c_atoi(word) & 2)
            opts.unreduced = c_atoi(word) == 0


def _take(args, arg, missing=None):
    """The option's value; without one, HTCondor's words for it (``missing``, else
    "requires another parameter")."""
    if not args:
        raise UsageError(missing or f"Error: {arg} requires another parameter", 1)
    return args.pop(0)


_VIEWS = (("nobatch", 3, "nobatch"), ("batch", 2, "batch"), ("run", 1, "run"), ("hold", 2, "hold"),
          ("held", 2, "hold"), ("idle", 3, "idle"), ("totals", 3, "totals"), ("long", 1, "long"),
          ("json", 2, "json"), ("xml", 2, "xml"))


#: HTCondor's options the cell has no use for (job sets, other schedds, dry runs,
#: profiling), with the letters each needs
_UNSUPPORTED = (("jobset", 5),
                ("schedd-constraint", 5), ("dry-run", 3), ("capture-raw-results", 7), ("profile", 4))

#: the views that select procs by state, which exclude each other
_STATES = ("run", "hold", "idle")


def parse_args(argv):
    opts = Options()
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("-") or arg == "-":
            opts.selection.add_word(arg, owners=True)
            continue
        _option(opts, arg, args)
    return opts


def _option(opts, arg, args):
    if _is(arg, "batch", 2) or _is(arg, "progress", 3):
        opts.unreduced = False
        _batch_marks(opts, arg.partition(":")[2])
        arg = "-batch"
    for word, least, view in _VIEWS:
        if _is(arg, word, least):
            if view in _STATES:
                if opts.states - {view}:
                    raise WithUsage("-run and -hold/held or -idle are incompatible", 1)
                opts.states.add(view)
            if view == "batch" and opts.stream:
                raise WithUsage("-stream-results and -batch are incompatible", 1)
            if view in ("nobatch", "batch"):
                opts.batch = view == "batch"
                if opts.view not in ("batch", "nobatch"):
                    return
            if view in ("long", "json", "xml"):
                view = _form(opts, view, arg.partition(":")[2])
            opts.view = view
            opts.grouped = False
            if view == "hold" and arg.partition(":")[2]:
                opts.hold_codes += _hold_codes(arg.partition(":")[2])
            return
    if _is(arg, "wide", 1):
        from gridtools.formats.condor import c_atoi
        opts.wide = c_atoi(arg.partition(":")[2]) if ":" in arg else True
    elif _is(arg, "autoformat", 2) or _is(arg, "af", 2):
        if not args or args[0].startswith("-"):
            raise UsageError("Error: -autoformat requires at least one attribute parameter", 1)
        opts.view, opts.af_quals = "af", arg.partition(":")[2]
        while args and not args[0].startswith("-"):
            opts.af_attrs.append(args.pop(0))
        if args and args[0] == "-":             # (a lone dash ends the attributes)
            args.pop(0)
    elif _is(arg, "aaf", 3):
        if not args or args[0].startswith("-"):
            raise UsageError("Error: -aaf requires at least one attribute parameter", 1)
        words = []
        opts.aaf.append((arg.partition(":")[2], words))
        while args and not args[0].startswith("-"):
            words.append(args.pop(0))
        if args and args[0] == "-":             # (a lone dash ends the attributes)
            args.pop(0)
    elif _is(arg, "format", 1):
        if len(args) < 2:
            raise UsageError("Error: -format requires format and attribute parameters", 1)
        opts.formats.append((args.pop(0), args.pop(0)))
        opts.view = "format"
    elif _is(arg, "constraint", 2):
        opts.selection.constraints.append(_take(args, arg, "Error: -constraint requires another parameter"))
    elif _is(arg, "allusers", 2):
        opts.selection.allusers = True
    elif _is(arg, "attributes", 2):
        opts.attributes = [a for a in _take(args, arg, "Error: -attributes requires a list of attributes to show")
                           .replace(",", " ").split() if a]
    elif _is(arg, "factory", 4):
        from gridtools.cli.condor import qfactory
        opts.factory = qfactory.kinds(arg)
    elif _is(arg, "dag", 2):
        if opts.stream:
            raise WithUsage("-stream-results and -dag are incompatible", 1)
        opts.dag = True
    elif _is(arg, "stream-results", 2):         # (the answer is written at once anyway)
        if opts.dag or opts.batch:
            raise WithUsage("-stream-results and -dag or -batch are incompatible", 1)
        opts.stream = True
    elif (_is(arg, "analyze", 2) or _is(arg, "analyse", 2) or _is(arg, "better-analyze", 2)
          or _is(arg, "better-analyse", 2)):
        opts.view, opts.better = "analyze", opts.better or arg[1:].startswith("b")
        for word in arg.partition(":")[2].replace(":", ",").split(","):
            if word and "summary".startswith(word):
                opts.summary, opts.prios = True, False
            elif word and "reverse".startswith(word):
                opts.reverse, opts.prios = True, False
            elif len(word) > 1 and "priority".startswith(word):
                opts.prios = True
            elif word:
                opts.detail = _detail_word(word, opts.detail)
    elif _is(arg, "reverse-analyze", 3):
        opts.view, opts.reverse, opts.prios = "analyze", True, False
        if ":" in arg:
            opts.detail |= _detail_number(arg.partition(":")[2], opts.detail)
    elif _is(arg, "unmatchable", 5):
        opts.unmatchable = True
    elif _is(arg, "autocluster", 2):
        opts.autocluster = "default"
    elif _is(arg, "group-by", 2) and not _is(arg, "grid", 2):     # (-gr is -grid)
        opts.autocluster = "group-by"
    elif _is(arg, "slotconstraint", 5) or _is(arg, "mconstraint", 2):
        if not args:
            raise UsageError(f"Error: {arg} requires another parameter", 1)
        opts.mconstraint = args.pop(0)
    elif _is(arg, "machine", 2):
        if not args:
            raise UsageError(f"Error: {arg} requires another parameter", 1)
        opts.machine = args.pop(0)
    elif _is(arg, "slotads", 2):
        if not args:
            raise UsageError("Error: -slotads requires a filename", 1)
        from gridtools.cli.condor.qjobads import form_of
        opts.slotads_form = form_of(arg.partition(":")[2])
        opts.slotads = args.pop(0)
    elif _is(arg, "hold-codes", 6) or _is(arg, "holdcodes", 5):
        if opts.states - {"hold"}:
            raise WithUsage("-hold-codes incompatible with -idle or -run", 1)
        opts.states.add("hold")
        opts.view, opts.grouped = "hold", True
        if arg.partition(":")[2]:
            opts.hold_codes += _hold_codes(arg.partition(":")[2])
    elif _is(arg, "io", 2):
        opts.view = "io"
    elif _is(arg, "grid", 2):
        opts.view, opts.ec2 = "grid", arg.partition(":")[2] == "ec2"
    elif _is(arg, "cputime", 2):
        opts.cputime = True
    elif _is(arg, "currentrun", 3) or _is(arg, "cumulative-time", 3):
        current = arg[1:4] == "cur"
        if opts.current_run is not None:
            other = "-cumulative-time" if current else "-currentrun"
            raise UsageError(f"Error: -{'currentrun' if current else 'cumulative-time'} can't be used with {other}", 1)
        opts.current_run = current
    elif _is(arg, "limit", 3):
        if not args:
            raise UsageError("Error: -limit requires the max number of results as an argument.", 1)
        opts.limit = _number(args.pop(0))
    elif _is(arg, "print-format", 2):
        if not args or (args[0].startswith("-") and args[0] != "-"):
            raise UsageError("Error: -print-format requires a filename argument", 1)
        _print_format(opts, args.pop(0))
    elif _is(arg, "submitter", 2):
        opts.selection.users.append(_take(args, arg, "Error: -submitter requires the name of a user."))
    elif _is(arg, "userlog", 1):
        opts.userlog = _take(args, arg, "Error: -userlog requires a filename")
    elif _is(arg, "userprios", 5):
        if not args:
            raise UsageError("Error: -userprios requires a filename argument", 1)
        opts.userprios, opts.prios = args.pop(0), True
    elif _is(arg, "nouserprios", 3):
        opts.userprios, opts.prios = None, False
    elif _is(arg, "jobads", 1):
        if not args:
            raise UsageError("Error: -jobads requires a filename", 1)
        from gridtools.cli.condor.qjobads import form_of
        opts.jobads_form = form_of(arg.partition(":")[2])
        opts.jobads = args.pop(0)
    elif _is(arg, "name", 1):
        opts.schedd = _take(args, arg, "Error: -name requires the name of a schedd as an argument.")
    elif _is(arg, "pool", 1):
        _take(args, arg, "Error: -pool requires a hostname as an argument.")     # one pool: this cell's
    elif _is(arg, "help", 1):
        opts.help = True
    elif _is(arg, "direct", 1):              # (one kind of daemon answers: the schedd)
        if not args:
            raise UsageError("Error: -direct requires [schedd]", 1)
        if args.pop(0).lower() != "schedd":
            raise UsageError("Error: -direct may only take 'schedd' as an option.", 1)
    elif _is(arg, "debug", 3):
        pass                                  # (nothing to trace)
    elif any(_is(arg, word, least) for word, least in _UNSUPPORTED):
        name = next(word for word, least in _UNSUPPORTED if _is(arg, word, least))
        raise UsageError(f"Error: -{name} is not supported by this condor_q", 1)
    elif _is(arg, "version", 1) and not _is(arg, "verbose", 4):
        opts.version = True
    elif not any(_is(arg, w, n) for w, n in (("global", 1), ("expert", 2), ("verbose", 4))):
        raise WithUsage(f"Error: unrecognized argument {arg}", 1)


def _print_format(opts, path):
    """-print-format FILE: the view "print" (``printformat``), its WHERE a constraint
    (``-pr !``: no user default print files, which the cell has none of)."""
    if path == "!":
        return
    from gridtools.cli.condor import printformat
    opts.print_format, opts.view = printformat.load(path, "condor_q"), "print"
    if opts.print_format.aggregate is not None:     # (its rows: autoclusters or groups, qautocluster)
        opts.autocluster = "default" if opts.print_format.aggregate == "autocluster" else "group-by"
    if opts.print_format.where is not None:
        opts.selection.constraints.append(opts.print_format.where)


#: the analysis qualifiers that are detail flags: (word, letters it needs, flag)
_DETAIL_WORDS = (("noprune", 3, 0x04), ("diagnostic", 4, 0x40), ("show-work", 4, 0x80),
                 ("slot-exprs", 4, 0x800), ("ifthenelse", 2, 0x08))


def _detail_word(word, detail):
    """The detail flags after an -analyze qualifier: a flag's name adds it; any other
    word is read for numbers (``4,8`` or ``4+8``), whose flags are added (a word with
    none clears them)."""
    for name, least, flag in _DETAIL_WORDS:
        if len(word) >= least and name.startswith(word):
            return detail | flag
    return _detail_number(word, detail)


def _detail_number(text, detail):
    flags = number = 0
    for ch in text:
        if ch.isdigit():
            number = number * 10 + int(ch)
        elif ch in ",+":
            flags, number = flags | number, 0
    flags |= number
    return detail | flags if flags else 0


def _form(opts, view, qualifier):
    """The view of -long[:FORM], -json or -xml: the form the ads are printed in (of
    -long, the one chosen before unless its qualifier names another)."""
    if view == "long":
        for word in qualifier.split(","):
            if word in ("json", "xml", "long"):
                opts.form = word
        return opts.form or "long"
    if (view, opts.form) in (("json", "xml"), ("xml", "json")):
        raise UsageError("Error: Cannot print as both XML and JSON", 1)
    opts.form = view
    return view


def _hold_codes(text):
    """The (code, subcode or None) pairs of -hold:CODE[/SUB],... (a word that starts
    with no number is passed over with HTCondor's warning)."""
    from gridtools.formats.condor import c_atoi
    found = []
    for word in text.split(","):
        if not word:
            continue
        digits = word.lstrip()
        if not digits[1 if digits[:1] in "+-" else 0:][:1].isdigit():
            sys.stderr.write(f'Warning "{word}" is not a hold code and/or subcode. ignoring\n')
            continue
        code, _slash, sub = word.partition("/")
        sub = c_atoi(sub) if sub.lstrip()[:1].isdigit() else None
        found.append((c_atoi(code), sub))
    return found


class WithUsage(UsageError):
    """An option condor_q does not know, or one the others exclude: refused with the
    usage on the standard output."""




def table_width(opts):
    """The width the tables are cut to (the package's ``table_width`` of -wide)."""
    from gridtools.cli import condor
    return condor.table_width(opts.wide)


def _number(text):
    digits = text.lstrip()
    digits = digits[1:] if digits[:1] in ("+", "-") else digits
    if not (digits.isascii() and digits.isdigit()):      # (strtol's whole text)
        raise UsageError(f"Error: Unable to convert ({text}) to a number for -limit.", 1)
    number = int(text)
    if number <= 0:
        raise UsageError(f"Error: {number} is not a valid for -limit.", 1)
    return number


# ---------------------------------------------------------------- running

def main(argv, prog="condor_q"):
    try:
        opts = parse_args(argv)
        if opts.help:
            sys.stdout.write(USAGE)
            return 0
        if opts.version:
            from gridtools.formats.condor import jobad
            sys.stdout.write(jobad.VERSION_TEXT)
            return 0
        sys.stdout.write(run(opts))
        return 0
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        if isinstance(exc, WithUsage):
            sys.stdout.write(USAGE)
        return exc.exit_code


def _schedd():
    from gridtools import cell
    return cell.hostname()


#: the schedd's address as a failed query names it (its summary heads the tables: qviews)
SCHEDD_ADDRESS = "<127.0.0.1:9618?addrs=127.0.0.1-9618&alias={host}>"


def check_read():
    """Refuse a caller the READ level at the SCHEDD does not allow, in the words of
    condor_q's failed query (exit 1); nothing of the queue is read before."""
    who = access.refused("READ", "SCHEDD")
    if who is not None:
        host = _schedd()
        sys.stderr.write(f"\n-- Failed to fetch ads from: {SCHEDD_ADDRESS.format(host=host)} : {host}\n")
        raise GridError(access.denied_line(who), 1)


def batch_is_default():
    """CONDOR_Q_DASH_BATCH_IS_DEFAULT (true unless the configuration says false), read
    from the configuration only when it may set it."""
    if not access.may_set("CONDOR_Q_DASH_BATCH_IS_DEFAULT"):
        return True
    from gridtools.cli.condor.machineviews import client_config
    value = client_config().get("CONDOR_Q_DASH_BATCH_IS_DEFAULT")
    word = (value or "").strip().lower()
    if word in ("false", "no", "f", "n", "0"):
        return False
    return True


def settle_view(opts):
    """The view of a command line that chose neither -batch nor -nobatch (nor another
    table): the batch view, or the per-proc one when the configuration says -batch is
    not the default. -batch with -af or -format is refused, as HTCondor refuses it."""
    if opts.unmatchable and opts.view != "analyze":
        if opts.batch is not None:          # (-nobatch too, as in HTCondor)
            raise UsageError("Error: -batch conflicts with -unmatchable", 1)
        if opts.autocluster:
            raise UsageError("Error: -autocluster conflicts with -unmatchable", 1)
        if opts.view == "batch":
            opts.view = "nobatch"           # (-unmatchable lists jobs, not batches)
    reducing = opts.batch and not opts.unreduced        # (-batch:0 is batch mode 0: no batches)
    if reducing and opts.view in ("af", "format"):
        raise UsageError("Error: -batch conflicts with -format and -af", 1)
    if opts.autocluster and reducing and opts.view not in ("long", "json", "xml"):
        name = "-group-by" if opts.autocluster == "group-by" else "-autocluster"
        raise UsageError(f"Error: -batch conflicts with {name}", 1)
    if opts.view == "batch" and opts.batch is None and not batch_is_default():
        opts.view = "nobatch"
    if opts.aaf:
        from gridtools.cli.condor import qappend
        opts.aaf_columns = qappend.check(opts)
    if opts.print_format is not None or opts.aaf:       # (their CPU_TIME follows -cputime, -currentrun)
        from gridtools.cli.condor import printas
        printas.JOB_TIME.update(cputime=opts.cputime, current_run=bool(opts.current_run))


def run(opts):
    settle_view(opts)
    if opts.jobads is not None:            # (no schedd is asked: the caller reads the file)
        from gridtools.cli.condor import qjobads
        return qjobads.run(opts, select, _attributes)
    if opts.userlog is not None:           # (no schedd is asked: the caller reads the log)
        from gridtools.cli.condor import qlog
        return qlog.run(opts, select, _attributes)
    if opts.schedd and opts.schedd != _schedd():
        from gridtools.cli.condor.submit_more import known_schedd
        if not known_schedd(opts.schedd):
            raise GridError(f"Error: Can't find address for schedd {opts.schedd}")
    check_read()
    if opts.autocluster:
        from gridtools.cli.condor import qautocluster
        return qautocluster.run(opts, _attributes, lambda now: qviews.title(_schedd(), now))
    if _from_listing(opts):
        user = Q.me()
        listing = status.load_listing(tables=qlisting.wanted_tables(opts, user))
        if listing is not None:
            for fault in listing["faults"]:
                sys.stderr.write(f"warning: {fault['text']}\n")
            return qlisting.view(opts, listing, user, time.time(), _schedd(), table_width(opts))
    snap = status.load()
    if opts.view == "analyze" and not (snap.get("exechosts") or snap.get("hosts")):
        from gridtools.cli.condor import machineviews   # a daemon just started: its first status
        from gridtools.spool import daemonctl, status as spool_status
        if daemonctl.running() and machineviews.first_status(daemonctl, spool_status) is not None:
            snap = status.load()
    for line in status.warnings(snap):
        sys.stderr.write(line + "\n")
    user, now = Q.me(), time.time()
    everyone = Q.procs(snap, _named_clusters(opts))
    source = Q.AdSource(snap, user)
    if opts.factory:
        from gridtools.cli.condor import qfactory
        ads = qfactory.select(opts, qfactory.factory_ads(snap, everyone, source, opts.factory), user)
        if opts.view in _CHOSEN_ONLY:
            return _show_ads(opts, ads)
        return qviews.title(_schedd(), now) + qfactory.table(ads)
    chosen = select(opts, everyone, user, source)
    if opts.limit:
        chosen = chosen[:opts.limit]
    return render(opts, snap, chosen, everyone, user, now, source)


GRID_UNIVERSE = 9

#: the views that show only the chosen procs (no totals, no comparison with the others)
_CHOSEN_ONLY = ("long", "json", "xml", "af", "format")


def _named_clusters(opts):
    """The clusters the command line names when only their procs matter (a view of the
    chosen procs alone, named by cluster or id only), else None: every proc."""
    sel = opts.selection
    if opts.view not in _CHOSEN_ONLY or sel.users or not (sel.clusters or sel.ids):
        return None
    return sel.clusters | {cluster for cluster, _proc in sel.ids}


def _from_listing(opts):
    """True when the published listing alone answers: the batch view, the totals or
    the plain per-proc table (RUN_TIME, no DAG order) of the jobs of all, some or the
    calling users."""
    sel = opts.selection
    per_proc = opts.view == "nobatch" and not (opts.dag or opts.cputime or opts.current_run)
    batch = opts.view == "batch" and not opts.unreduced
    return ((batch or opts.view == "totals" or per_proc) and not (opts.limit or opts.unmatchable or opts.aaf)
            and not (sel.constraints or sel.clusters or sel.ids or opts.factory or opts.states))


#: QUEUE_SUPER_USERS when the configuration does not set it (HTCondor's default)
SUPER_USERS = "root, condor"
_SUPER = {}


def queue_super_user(user):
    """True when ``user`` is a queue super user: root, or one the configuration's
    QUEUE_SUPER_USERS names (root and condor by default). The schedd answers a queue
    super user's query with everybody's jobs, and sends no totals of their own."""
    if user == "root":
        return True
    found = _SUPER.get(user)
    if found is None:
        text = SUPER_USERS
        if access.may_set("QUEUE_SUPER_USERS"):
            from gridtools.cli.condor.machineviews import client_config
            text = client_config().get("QUEUE_SUPER_USERS") or SUPER_USERS
        names = {name.lower() for name in text.replace(",", " ").split()}
        found = _SUPER[user] = user.lower() in names
    return found


def only_mine(sel, user):
    """True for a query of the caller's own jobs (HTCondor's only-my-jobs query): no
    owner, job id or -allusers names what to show, and the caller is no queue super
    user. The summary then has a line of the caller's totals (``qviews.totals_text``)."""
    return not (sel.allusers or sel.named) and not queue_super_user(user)


def select(opts, everyone, user, source):
    sel = opts.selection
    if not only_mine(sel, user):
        chosen = [p for p in everyone if sel.by_name(p)] if sel.named else list(everyone)
    else:
        chosen = [p for p in everyone if p.owner == user]
    # -run, -hold and -idle select by state whatever the output (-af, -format, -l, -json ...
    # after them change the view, not the selection), as condor_q ANDs their constraint
    if "run" in opts.states:
        chosen = [p for p in chosen if p.status in (Q.RUNNING, Q.TRANSFERRING, Q.SUSPENDED)]
    elif "hold" in opts.states:
        chosen = [p for p in chosen if p.status == Q.HELD]
        if opts.hold_codes:
            chosen = [p for p in chosen if _held_for(p, opts.hold_codes)]
    elif "idle" in opts.states:
        chosen = [p for p in chosen if p.status == Q.IDLE]
    if opts.view == "io":
        chosen = [p for p in chosen if qviews.moving_files(source.ad(p))]
    elif opts.view == "grid":
        chosen = [p for p in chosen if p.universe == GRID_UNIVERSE]
    if sel.constraints:
        exprs = Q.compile_constraints(sel.constraints)
        chosen = [p for p in chosen if Q.matches_all(source.ad(p), exprs)]
    if opts.unmatchable and opts.view != "analyze":
        from gridtools.cli.condor import analyze
        chosen = analyze.unmatchable(chosen, everyone, source, opts)
    return chosen


def _held_for(proc, codes):
    """True when the hold of ``proc`` has one of the (code, subcode or None) ``codes``."""
    hold = proc.hold or ["", 0, 0]
    code, sub = int(hold[1]), int(hold[2])
    return any(code == c and (s is None or sub == s) for c, s in codes)


def render(opts, snap, chosen, everyone, user, now, source):
    view = opts.view
    if view in _CHOSEN_ONLY:
        return _attributes(opts, chosen, source)
    head = qviews.title(_schedd(), now)
    width = None if opts.aaf and opts.wide is None else table_width(opts)   # (-aaf: whole rows)
    if view == "print":
        from gridtools.cli.condor import printformat, qappend
        mine_shown = only_mine(opts.selection, user)
        mask = qappend.extend(opts.print_format, opts.aaf_columns) if opts.aaf else opts.print_format
        return printformat.q_table(mask, chosen, source.ad, head,
                                   lambda: printformat.q_totals(chosen, everyone, user, mine_shown),
                                   lambda body: cut(body, width),
                                   lambda: printformat.counted(chosen, everyone, user, mine_shown))
    if view == "analyze":
        from gridtools.cli.condor import analyze
        return head + analyze.report(snap, chosen, everyone, source, opts, now)
    body, totals = _table(opts, snap, chosen, user, now, source)
    if opts.aaf and view != "totals":
        from gridtools.cli.condor import qappend
        rows = [source.ad(p) for p in qappend.procs_of_rows(opts, chosen, source)]
        body = qappend.append(body, rows, opts.aaf_columns)
    if view != "hold":                      # (hold reasons are never cut)
        body = cut(body, width)
    if not totals:
        return head + body
    mine = None                             # (no line of the caller's own: see only_mine)
    if only_mine(opts.selection, user):
        mine = [p for p in everyone if p.owner == user]
        if len(mine) == len(everyone):
            mine = everyone
        if len(chosen) == len(mine) and (not chosen or chosen[0] is mine[0]) and chosen == mine:
            chosen = mine
    counts = qviews.summary(chosen, mine, everyone, user)
    if view == "totals":
        return head + counts
    return head + body + "\n" + counts + "\n"


def _attributes(opts, chosen, source):
    """-long, -json, -af and -format: what the ads say."""
    return _show_ads(opts, [source.ad(p) for p in chosen])


def _show_ads(opts, ads):
    """-long, -json, -xml, -af and -format of ``ads``."""
    from gridtools.cli.condor import formatting
    if opts.view in ("long", "json", "xml") and opts.attributes:
        ads = formatting.projected(ads, opts.attributes)
    if opts.view == "long":
        return formatting.long_ads(ads)
    if opts.view == "json":
        return formatting.json_ads(ads) if ads else ""
    if opts.view == "xml":
        return formatting.xml_ads(ads)
    if opts.view == "af":
        return formatting.autoformat(ads, opts.af_attrs, opts.af_quals)
    return formatting.format_ads(ads, opts.formats)


def _table(opts, snap, chosen, user, now, source):
    """(table text, whether the totals follow) of the tabular views."""
    view = opts.view
    if view == "totals":
        return "", True
    clock = _clock(opts, source)
    if view == "run":
        return qviews.running(chosen, user, now, clock), False
    if view == "hold":
        if opts.grouped:
            return qviews.hold_codes(chosen), False
        return qviews.held(chosen), True
    if view == "idle":
        return qviews.idle(chosen, source.ad), False
    if view == "io":
        return qviews.io(chosen, source.ad), True
    if view == "grid":
        return qviews.grid(chosen, source.ad, opts.ec2), False
    if view == "nobatch":
        if opts.dag:
            chosen, names = dag_order(chosen, source)
            return qviews.nobatch(chosen, user, now, names, clock), True
        return qviews.nobatch(chosen, user, now, clock=clock), True
    if opts.unreduced:
        from gridtools.cli.condor import qbatchraw
        return qbatchraw.rows(chosen, source.ad), True
    jobs = snap.get("jobs") or {}
    totals = {jid: _submitted(info) for jid, info in jobs.items()}
    unmade = {jid: totals[jid] - (info.get("condor") or {})["materialized"] for jid, info in jobs.items()
              if "materialized" in (info.get("condor") or ())}
    return qviews.batch_view(chosen, totals, opts.zero, opts.fold_dags, unmade), True


def _clock(opts, source):
    """The time column of the per-proc tables (``qviews.Clock``), None for RUN_TIME."""
    if opts.cputime:
        def cpu(proc, _now):
            value = source.ad(proc).eval("RemoteUserCpu")
            return value if type(value) in (int, float) else 0
        return qviews.Clock("CPU_TIME", cpu)
    if opts.current_run:
        return qviews.Clock("RUN_TIME", qviews.current_run)
    return None


def _submitted(info):
    rng = info.get("tasks")
    return len(range(rng[0], rng[1] + 1, rng[2])) if rng else 1


def dag_order(procs, source):
    """Procs with DAG node jobs under their DAGMan job, and the OWNER/NODENAME labels."""
    by_dag, top, names = {}, [], {}
    for p in procs:
        ad = source.ad(p)
        dag, node = ad.eval("DAGManJobId"), ad.eval("DAGNodeName")
        if type(dag) is int and isinstance(node, str):
            by_dag.setdefault(dag, []).append(p)
            names[p.id] = node
        else:
            top.append(p)
    ordered = []

    def place(p, depth):
        ordered.append(p)
        if p.id in names:
            names[p.id] = " " * depth + "|-" + names[p.id]
        for child in by_dag.pop(p.cluster, []) if p.proc == 0 else []:
            place(child, depth + 1)
    for p in top:
        place(p, 0)
    for rest in by_dag.values():
        for p in rest:
            place(p, 0)
    return ordered, names
