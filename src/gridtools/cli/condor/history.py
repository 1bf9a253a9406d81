"""condor_history: jobs that have left the queue (HTCondor dialect).

    condor_history [-l | -json | -jsonl | -xml | -af[:quals] ATTR ... | -format FMT ATTR ...]
                   [-constraint EXPR] [-limit N | -match N] [-forwards]
                   [-since JOBID | EXPR] [-completedsince TIME] [-scanlimit N]
                   [-file FILE | -userlog FILE | -search PATH] [-epochs[:d] | -startd]
                   [-print-format FILE] [-name SCHEDD] [-pool HOST]
                   [-attributes A,B,...] [cluster | cluster.proc | owner] ...

Reads the history file the daemon appends a job's final ad to when it
leaves the queue (``spool/history`` and its rotations, ``history.<time>`` as
``spool.rotation`` names them, and ``history.old``, the one rotation of older
cells; see daemon.history), newest first unless ``-forwards``: each file is
read from its end backwards, lazily, so that the scan reads only what it
looks at (historyfile.scan). ``-epochs`` reads
the job epoch history instead (``spool/epoch_history`` and its rotations): an ad
per run of a job. ``-search PATH`` reads PATH and its rotations (as HTCondor's:
the files of PATH's folder named PATH's base name, a dot and a time), ``-file``
the one file it names. As HTCondor's, each reads only the ads of the kind its
source holds: a banner ``*** EPOCH ...`` marks an epoch ad, one without a kind
(``*** ClusterId = ...``) a job's final ad. The default table has
a row per job: ID, OWNER, SUBMITTED, RUN_TIME, ST, COMPLETED, CMD, cut at the
terminal's width (``-wide``: not cut; ``-wide:N``: at N; ``-wide:80``: the
legacy short table).
The scan stops at the ad of job ``-since`` names (cluster.proc; a bare
cluster: its first ad met) or at the first ad its expression is true of,
or, as HTCondor's ``-completedsince T`` is ``-since 'CompletionDate <= T'``,
at the first job that completed on or before T (the last of the two
applies), and after ``-scanlimit`` ads; the ad it stops at is not shown.
Options take HTCondor's shortest abbreviations and its error wording; an
unknown one prints the usage on standard output, exit 1. The cell has one
schedd: -name and -pool naming it (its host, by any of its names, as
condor_q -name takes them) read its history; naming another, the command
fails as HTCondor's does when it cannot locate that schedd (``Unable to
locate remote schedd``), after the heading. -local and -schedd change nothing.
``-startd`` reads the history file STARTD_HISTORY names (and its rotations),
HTCondor's error when the configuration does not set it (the cell's startd
keeps none by default). ``-print-format FILE`` prints a table of an HTCondor
print-format file (``printmask``, its WHERE a constraint), its lines cut at
the terminal's width less one (79 off a terminal) unless ``-wide`` came before.
As HTCondor's, the heading of a view (the table's heading, ``[`` of -json,
the XML prolog) is printed before the history is read, so it is there when
reading fails; -json prints ``[`` and ``]`` even for no ads, and -xml has an
empty line after the prolog, after each ad and after the closing tag.

The history file holds what every user may see of a job; its private
attributes (command path, arguments, files: ``jobads.PRIVATE_ATTRS``) are
in a file of its owner's (``history.private/<uid>``, see daemon.history),
joined to the job's ad for its owner and for root: another user's job shows
exactly what condor_q shows of it, without them. ``-file`` naming the cell's
own history file (or its rotation), by any path, joins them just the same.

``-userlog FILE`` lists the jobs of a job event log instead, with the ads
``logads`` rebuilds from its events, in job id order: all of them that
the constraint and the restriction list let through (the bounds of a scan,
``-limit``, ``-scanlimit``, ``-since``, ``-completedsince``, are the history
file's only).
"""

import os
import sys

from gridtools.cli.condor import queue as Q
from gridtools.errors import GridError, InputError, UsageError
from gridtools.formats.condor import c_atoi

USAGE = """\
Usage: condor_history [options]
    where [options] are
        -help                 Display this screen
        -file <file>          Read history data from specified file
        -userlog <file>       Read job data from specified job event log
        -search <path>        Read history data from all matching HTCondor time rotated files
        -epochs               Read epoch (per job run instance) history data
        -startd               Read the startd's history (STARTD_HISTORY)
        -schedd               Read the schedd's history (the default)
        -forwards             List jobs in the order they finished
        -backwards            List jobs newest first (the default)
        -match <num>          Limit the number of jobs displayed
        -limit <num>          Same as -match
        -constraint <expr>    Display jobs that satisfy the expression
        -long                 Display entire ClassAds
        -json                 Display entire ClassAds in JSON
        -jsonl                Display entire ClassAds in JSON, one line each
        -xml                  Display entire ClassAds in XML
        -attributes <a,b,...> Attributes shown by -long, -json and -xml
        -format <fmt> <attr>  Print attribute attr using format fmt
        -since <jobid>|<expr> Stop scanning at this job id, or when expr is true
        -completedsince <time>  Stop scanning at a job that completed on or before time
        -scanlimit <num>      Stop scanning after num ads
        -wide[:<width>]       Don't cut the table (or cut it at width)
        -print-format <file>  Use <file> to specify the attributes and formatting
        -autoformat[:jlhVr,tng] <attr> [<attr2> [...]]
        -af[:jlhVr,tng] <attr> [<attr2> [...]]
        -name <schedd>        Read the history of this schedd (the cell's own)
        -pool <host>          Use this central manager (the cell's own)
        -local                Read the local history files (the default)
    and [cluster | cluster.proc | owner] restrict the jobs shown
"""


class Options:
    def __init__(self):
        self.selection = Q.Selection()
        self.view = "table"
        self.af_attrs, self.af_quals, self.formats = [], "", []
        self.limit = 0
        self.stop = None             # -since / -completedsince: the expression the scan stops at
        self.has_since = self.has_forwards = False
        self.scanlimit = 0
        self.forwards = False
        self.file = None
        self.userlog = None          # -userlog: the jobs of a job event log (logads)
        self.search = None           # -search: a history file and its rotations
        self.epochs = False          # -epochs: the job epoch history (an ad per run)
        self.attributes = []         # -attributes: what -long, -json and -xml show
        self.wide, self.wide_width = False, 0     # -wide[:N]
        self.help = False
        self.source, self.source_flag = None, None    # -schedd, -startd, -epochs: the one given
        self.name = self.pool = None    # -name, -pool: the schedd whose history is read
        self.remote = False             # the last of -name/-pool (True) and -file/-userlog/-local
        self.local = False              # -local given
        self.print_format = None        # -print-format's printmask.Mask (view "print")
        self.print_cut = None           # the width its lines are cut at (None: not cut)


class _ShowUsage(Exception):
    """What HTCondor's condor_history does with an argument it cannot use: the usage
    on standard output, exit status 1."""


def _is(arg, word, least=1):
    name = arg[1:].split(":", 1)[0]
    return arg.startswith("-") and least <= len(name) <= len(word) and word.startswith(name)


def _take(args, arg):
    if not args:
        raise UsageError(f"Error: Argument {arg} requires another parameter", 1)
    return args.pop(0)


def _fail(*parts):
    """HTCondor's error lines; a hint line keeps its leading tabs (one or two)."""
    from gridtools.errors import Lines, one_line
    return GridError(Lines("\n".join(p[:len(p) - len(p.lstrip("\t"))] + one_line(p.lstrip("\t"))
                                     for p in parts)), 1)


def _source(opts, kind, given, flag):
    """-schedd, -startd or -epochs (``kind``, typed as ``given``): one kind of history;
    another kind named before it is refused in HTCondor's words."""
    if opts.source_flag is not None and opts.source != kind:
        raise _fail(f"Error: {opts.source_flag} can not be used in association with {flag}.")
    opts.source, opts.source_flag = kind, given


def parse_args(argv):
    opts = Options()
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("-"):
            opts.selection.add_word(arg)
        elif _is(arg, "autoformat", 5) or _is(arg, "af", 2):
            if not args or args[0].startswith("-"):
                raise _fail(f"Error: Argument {arg} requires at least one attribute parameter",
                            f"\t\te.g. condor_history {arg} ClusterId")
            opts.view, opts.af_quals = "af", arg.partition(":")[2]
            while args and not args[0].startswith("-"):
                opts.af_attrs.append(args.pop(0))
        elif _is(arg, "long", 1):
            opts.view = "long"
        elif _is(arg, "jsonl", 5):
            opts.view = "jsonl"
        elif _is(arg, "json", 4):
            opts.view = "json"
        elif _is(arg, "xml", 3):
            opts.view = "xml"
        elif _is(arg, "file", 2):
            if not args or opts.file or opts.userlog:
                raise _ShowUsage()
            opts.file = args.pop(0)
            opts.remote = False
        elif _is(arg, "search", 3):
            if not args:
                raise _fail(f"Error: Argument {arg} requires another parameter")
            opts.search = args.pop(0)
        elif _is(arg, "epochs", 2):
            _source(opts, "epochs", arg, "-epochs")
            opts.epochs = True          # (its :d deletes the files of an epoch folder: none here)
        elif _is(arg, "startd", 3):
            _source(opts, "startd", arg, "-startd")
        elif _is(arg, "schedd", 3):
            _source(opts, "schedd", arg, "-schedd")
        elif _is(arg, "local", 2):
            if opts.name is not None:
                raise _fail("Error: Arguments -local and -name cannot be used together")
            opts.local, opts.remote = True, False
        elif _is(arg, "print-format", 2):
            if not args or (args[0].startswith("-") and args[0] != "-"):
                raise _fail("Error: Argument -print-format requires a filename argument")
            path = args.pop(0)
            if path != "!":             # (\"!\": no user's default print format: there is none)
                _print_format(opts, path)
        elif _is(arg, "name", 1) or _is(arg, "pool", 1):
            if not args:
                raise _fail("Error: Argument -name requires name of a remote schedd",
                            "\t\te.g. condor_history -name submit.example.com ")
            if _is(arg, "name", 1):
                if opts.local:
                    raise _fail("Error: -local and -name cannot be used together")
                opts.name = args.pop(0)
            else:
                opts.pool = args.pop(0)
            opts.remote = True
        elif _is(arg, "format", 1):
            if len(args) < 2:
                raise _fail("Error: Argument -format requires a spec and classad attribute name as parameters.",
                            "\t\te.g. condor_history -format '%d' ClusterId")
            opts.formats.append((args.pop(0), args.pop(0)))
            opts.view = "format"
        elif _is(arg, "constraint", 1):
            opts.selection.constraints.append(_take(args, arg))
        elif _is(arg, "match", 1) or _is(arg, "limit", 3):
            if not args:
                raise _fail("Error: Argument -match requires a number value as a parameter.")
            opts.limit = max(0, c_atoi(args.pop(0)))
        elif _is(arg, "since", 4):
            if opts.has_forwards:
                raise _fail("Error: Argument -forwards cannot be combined with -since.")
            opts.stop = _since(_take(args, arg))
            opts.has_since = True
        elif _is(arg, "completedsince", 3):
            if not args:
                raise _fail("Error: Argument -completedsince requires another parameter.")
            opts.stop = _completed_since(args.pop(0))
        elif _is(arg, "scanlimit", 4):
            if not args:
                raise _fail("Error: Argument -scanlimit requires a number value  as a parameter.")
            opts.scanlimit = max(0, c_atoi(args.pop(0)))
        elif _is(arg, "forwards", 4) or _is(arg, "nobackwards", 3):
            if opts.has_since:
                raise _fail("Error: Argument -forwards cannot be combined with -since.")
            opts.forwards = opts.has_forwards = True
        elif _is(arg, "backwards", 1):
            opts.forwards = False
        elif _is(arg, "userlog", 1):
            if not args or opts.file or opts.userlog:
                raise _ShowUsage()
            opts.userlog = args.pop(0)
            opts.remote = False
        elif _is(arg, "attributes", 2):
            if not args or args[0].startswith("-"):
                raise _fail("Error: Argument -attributes must be followed by a list of attributes")
            opts.attributes = [a for a in args.pop(0).replace(" ", ",").split(",") if a]
        elif _is(arg, "help", 1):
            opts.help = True
        elif _is(arg, "wide", 1):
            opts.wide = True
            if ":" in arg:           # -wide:N; N of 80 or less is no -wide at all
                opts.wide_width = max(0, c_atoi(arg.partition(":")[2]))
                opts.wide = opts.wide_width > 80
                if opts.print_format is not None:
                    opts.print_cut = _display_width(opts) - 1
        else:
            sys.stderr.write(f"Error: Unknown argument {arg}\n")
            raise _ShowUsage()
    return opts


def _display_width(opts):
    """HTCondor's display width: -wide:N's N, else the terminal's width, else 80."""
    if opts.wide_width > 0:
        return opts.wide_width
    try:
        if sys.stdout.isatty():
            return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return 80


def _print_format(opts, path):
    """-print-format FILE: the view "print" of a print-format file (``printmask``, with
    the PRINTAS functions every tool has), its WHERE ANDed to the constraints; the file's
    problems are named on standard error as HTCondor's condor_history names them. Its
    lines are cut at the display's width less one unless -wide came before."""
    from gridtools.cli.condor import printformat, printmask
    try:
        text = printformat.read(path)
    except OSError:
        raise _fail(f"Can't open select file: {path}", f"Error: cannot execute print-format file {path}") from None
    mask = printmask.parse(text, truncate=True)
    problems = list(mask.messages)
    bad = False
    if mask.where is not None:
        from gridtools.classad import parse
        try:
            parse(mask.where, old=True)
        except Exception:  # noqa: BLE001 - any parse error of the file's WHERE
            problems.append(f"WHERE expression is not valid: {mask.where}")
            bad = True
    if mask.aggregate is not None:
        problems.append("UNIQUE aggregation is not supported.")
        bad = True
    for line in problems:
        sys.stderr.write(line + "\n")
    if bad:
        raise _fail(f"Error: cannot execute print-format file {path}")
    if mask.where is not None:
        opts.selection.constraints.append(mask.where)
    opts.print_format, opts.view = mask, "print"
    opts.print_cut = None if opts.wide else _display_width(opts) - 1


def _since(text):
    """-since: an expression that is not a literal, else a job id (a bare cluster: its
    first ad met)."""
    from gridtools.classad import parse
    from gridtools.classad.nodes import Literal
    try:
        expr = parse(text)
    except Exception:  # noqa: BLE001 - not an expression: maybe a job id
        expr = None
    if expr is not None and expr.__class__ is not Literal:
        return expr
    cluster, dot, proc = text.partition(".")
    if cluster.isdigit() and (not dot or proc.isdigit()):
        return parse(f"ClusterId == {int(cluster)}" + (f" && ProcId == {int(proc)}" if dot else ""))
    raise _fail(f"Error: invalid -since constraint: {text}", "\tconstraint must be a job-id, or expression.")


def _completed_since(text):
    """-completedsince: as HTCondor, -since ``CompletionDate <= text`` (any expression)."""
    from gridtools.classad import parse
    try:
        return parse(f"CompletionDate <= {text}")
    except Exception:  # noqa: BLE001 - any syntax error
        raise _fail(f"Error: '{text}' not valid parameter for -completedsince") from None


def _stop_test(opts):
    """The test of the ad a scan stops at (the last of ``-since`` and
    ``-completedsince``), or None."""
    if opts.stop is None:
        return None
    return lambda ad, expr=opts.stop: Q.truthy(expr.eval(ad))


# ---------------------------------------------------------------- reading

def own_file(epochs=False):
    """The cell's history file (``epochs``: its job epoch history)."""
    from gridtools import cell
    return cell.spool("epoch_history" if epochs else "history")


def with_rotations(base):
    """``base`` with its rotations, oldest first: the ``.old`` of older cells, then the
    time-rotated files (``spool.rotation``)."""
    from gridtools.spool import rotation
    return [base + ".old"] + rotation.find(base)


def history_files(opts):
    """The files to read, oldest first: ``-file``'s one file, ``-search``'s file and its
    rotations, else the cell's history (or epoch history) and its rotations."""
    from gridtools.spool import rotation
    if opts.file:
        return [opts.file]
    if opts.search is not None:
        return rotation.find(opts.search)
    return with_rotations(own_file(opts.epochs))


def _is_cell_history(path):
    """The private folder of the cell's own history or epoch history file (or a
    rotation of them) when ``path`` names one by whatever name (its ads get their
    private attributes as without -file), else None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    try:
        for epochs in (False, True):
            base = own_file(epochs)
            for own in with_rotations(base):
                try:
                    if os.path.samestat(st, os.stat(own)):
                        return base + ".private"
                except OSError:
                    continue
    except GridError:
        pass
    return None


def banner_kind(line):
    """The kind of ad a banner line closes (see historyfile.banner_kind)."""
    from gridtools.cli.condor.historyfile import banner_kind as kind
    return kind(line)


def read_ads(paths, named=False, kind=None):
    """The ads of history files, oldest first, as a list (see historyfile.scan)."""
    from gridtools.cli.condor.historyfile import read_ads as read
    return read(paths, named, kind)


def scan_ads(opts):
    """(banner fields, ad) of the records of the history files ``opts`` names, in the
    order of the scan (newest first unless -forwards), read lazily from the end of the
    newest file (see historyfile.records), with the private attributes their reader
    may see; a record ``banner_test`` shows unwanted is a historyfile.Skipped."""
    from gridtools.cli.condor.historyfile import records
    named = opts.file or opts.search
    pairs = records(history_files(opts), named=named is not None, kind="EPOCH" if opts.epochs else "JOB",
                    forwards=opts.forwards, want=banner_test(opts))
    folder = own_file(opts.epochs) + ".private" if named is None else _is_cell_history(named)
    if folder is None:
        return pairs
    return _pairs_with_private(pairs, folder)


def _pairs_with_private(pairs, folder):
    join = None
    for fields, ad in pairs:
        if join is None:
            join = _private_joiner(folder)
        join(ad)
        yield fields, ad


def log_ads(opts):
    """The ads of the jobs of the job event log ``-userlog`` names, rebuilt from its
    events (``logads``: every job it saw submitted, by job id, shown in that order).
    As HTCondor's condor_history prints every ad of a log its constraint lets
    through, ``-limit``, ``-scanlimit``, ``-since`` and ``-completedsince`` do not
    apply to it."""
    from gridtools.cli.condor import logads
    try:
        ads = logads.read(opts.userlog, Q.me())
    except OSError:
        sys.stdout.write(_heading(opts))        # HTCondor prints the heading before it reads
        raise GridError(f"Error: Can't open userlog {opts.userlog}", 1) from None
    opts.forwards = True
    opts.limit = opts.scanlimit = 0
    opts.stop = None
    return ads


def private_files(folder):
    """(uid, path) of the private history files of ``folder`` the caller may read: its
    own (every user's for root), with their rotations."""
    uid = os.getuid()
    try:
        names = sorted({n.split(".")[0] for n in os.listdir(folder)}) if uid == 0 else [str(uid)]
    except OSError:
        return []
    found = []
    for name in names:
        if name.isdigit():
            found += [(int(name), path) for path in with_rotations(os.path.join(folder, name))]
    return found


def _uid_of(name, known):
    if name not in known:
        import pwd
        try:
            known[name] = pwd.getpwnam(name).pw_uid if isinstance(name, str) else None
        except KeyError:
            known[name] = None
    return known[name]


def private_records(folder):
    """{GlobalJobId: (uid, record)} of the private records the caller may read (the
    records of ``folder``)."""
    by_id = {}
    for uid, path in private_files(folder):
        try:
            records = read_ads([path])
        except InputError:
            continue
        for record in records:
            key = record.eval("GlobalJobId")
            if isinstance(key, str):
                by_id[key] = (uid, record)
    return by_id


def with_private(ads, folder):
    """The ads ``ads`` with the private attributes the caller may read (the records of
    ``folder``) laid over those of their jobs (by GlobalJobId, which names one run of
    one proc), one at a time. A user may rewrite their own file: its records are laid
    over the ads of that user's jobs only."""
    join = None
    for ad in ads:
        if join is None:
            join = _private_joiner(folder)
        join(ad)
        yield ad


def _private_joiner(folder):
    """What lays the private attributes of ``folder`` over one ad (see with_private);
    a historyfile.Skipped is left as it is."""
    from gridtools.cli.condor.historyfile import Skipped
    by_id = private_records(folder)
    known = {}

    def join(ad):
        if not by_id or ad.__class__ is Skipped:
            return
        uid, record = by_id.get(ad.eval("GlobalJobId"), (None, None))
        if record is not None and _uid_of(ad.eval("Owner"), known) == uid:
            for name in record:
                if name not in ("ClusterId", "ProcId", "GlobalJobId"):
                    ad[name] = record.lookup(name)
    return join


def join_private(ads, folder):
    """Lay the private attributes the caller may read over the ads of the list ``ads``
    (see with_private)."""
    for _ad in with_private(ads, folder):
        pass


def _compiled(sel):
    """The -constraint expressions; a bad one is refused as HTCondor's condor_history
    refuses it, naming the whole query it built (GenericQuery's makeQuery)."""
    try:
        return Q.compile_constraints(sel.constraints)
    except InputError:
        raise InputError(f"Error:  could not parse constraint {_query_text(sel)}") from None


def _query_text(sel):
    """The query condor_history parses: the constraints ANDed, then the job ids and
    owners ORed, each term in parentheses."""
    ors = [f"ClusterId == {c} && ProcId == {p}" for c, p in sorted(sel.ids)]
    ors += [f"ClusterId == {c}" for c in sorted(sel.clusters)]
    ors += [f'Owner == "{u}"' for u in sel.users]
    groups = [(" && ", sel.constraints), (" || ", ors)]
    return " && ".join("(" + " " + join.join(f"({t})" for t in terms) + " )"
                       for join, terms in groups if terms)


# The attributes a banner may give (historyfile.banner_fields) that -since and
# -completedsince may be judged by without the ad.
_BANNER_ATTRS = ("ClusterId", "ProcId", "Owner", "CompletionDate")
# The expression nodes a stop test judged by a banner may have (no function calls,
# no scoped or selected names, which could reach attributes a banner lacks).
_PLAIN_NODES = frozenset(("Literal", "Attr", "Binary", "Paren", "Unary", "Cond", "Elvis"))


def _names_in(expr):
    """The attribute names (lower case) an expression refers to, or None when it has a
    node whose references cannot be told without evaluating it."""
    names, todo = set(), [expr]
    while todo:
        node = todo.pop()
        kind = node.__class__.__name__
        if kind not in _PLAIN_NODES:
            return None
        if kind == "Attr":
            names.add(node.key)
        todo.extend(node.children())
    return names


def banner_test(opts):
    """The test of a record's banner fields (historyfile.scan's ``want``) when the
    options choose jobs by cluster, cluster.proc or owner, as HTCondor's condor_history
    reads its banners: a record is parsed when its banner names a cluster or an owner
    (any case) chosen, or lacks the field to tell; otherwise it is skipped unparsed
    (-constraint is judged on the ads parsed). A record the -since or -completedsince
    test cannot be judged on by its banner alone is parsed. None: every record is."""
    sel = opts.selection
    if not sel.named:
        return None
    clusters = set(sel.clusters) | {cluster for cluster, _proc in sel.ids}
    users = {user.casefold() for user in sel.users}
    needs = set()
    if opts.stop is not None:
        needs = _names_in(opts.stop)
        if needs is None:
            return None
    known = {name.lower(): name for name in _BANNER_ATTRS}
    if not needs <= set(known):
        return None
    needs = [known[name] for name in needs]

    def want(fields):
        for name in needs:
            if name not in fields:
                return True
        if clusters:
            cluster = fields.get("ClusterId")
            if cluster is None or cluster in clusters:
                return True
        if users:
            owner = fields.get("Owner")
            if owner is None or owner.casefold() in users:
                return True
        return False
    return want


def _banner_ad(fields):
    """The ad of a record's banner fields (a skipped record's -since test)."""
    from gridtools.classad import ClassAd
    return ClassAd({name: fields[name] for name in _BANNER_ATTRS if name in fields})


class _JobsFound:
    """HTCondor's end of a scan for job ids (its checkMatchJobIdsFound): when the
    options name clusters and cluster.procs only, the scan stops once each has been
    found. A proc is found at its ad (a job leaves the history one ad; in the epoch
    history, read backwards, its first run's, RunInstanceId 0); a cluster once as
    many of its procs are found as its TotalSubmitProcs, or at the first record
    written (its banner's CurrentTime) more than 5 seconds before the cluster's QDate,
    read backwards: no older record can be one of its jobs. (A banner's CompletionDate
    is no write time: a job may stay in the queue long after it completed.)"""

    SLOP = 5

    def __init__(self, opts):
        sel = opts.selection
        self.clusters = {cluster: None for cluster in sel.clusters}     # cluster: procs still to find
        self.procs = {job for job in sel.ids if job[0] not in self.clusters}
        self.qdates = {}
        self.epochs, self.backwards = opts.epochs, not opts.forwards

    @classmethod
    def of(cls, opts):
        sel = opts.selection
        if sel.users or not (sel.clusters or sel.ids):
            return None
        return cls(opts)

    def done(self, fields, ad):
        """Note the record of ``fields`` (its banner's) and ``ad`` (None: not parsed);
        True once every job named is found."""
        fields = dict(fields or ())
        if ad is not None:
            for name, attr in (("ClusterId", "ClusterId"), ("ProcId", "ProcId"),
                               ("RunInstanceId", "RunInstanceID")):
                value = ad.eval(attr)
                if name not in fields and type(value) is int:
                    fields[name] = value
        cluster, proc = fields.get("ClusterId"), fields.get("ProcId")
        once = not self.epochs or (self.backwards and fields.get("RunInstanceId") == 0)
        if ad is not None and cluster in self.clusters:
            qdate = ad.eval("QDate")
            if type(qdate) is int:
                self.qdates.setdefault(cluster, qdate)
            left = self.clusters[cluster]
            if left is None:
                total = ad.eval("TotalSubmitProcs")
                left = total if type(total) is int else None
            if left is not None and once:
                left -= 1
            self.clusters[cluster] = left
            if left is not None and left <= 0:
                del self.clusters[cluster]
        elif ad is not None and once:
            self.procs.discard((cluster, proc))
        written = fields.get("CurrentTime")
        if self.backwards and written is not None and written > 0:
            for gone in [c for c, qdate in self.qdates.items()
                         if c in self.clusters and qdate > written + self.SLOP]:
                del self.clusters[gone]
        return not self.clusters and not self.procs


def select(opts, ads):
    """The ads of the list ``ads`` (oldest first) the options choose (see select_scanned)."""
    return select_scanned(opts, ((None, ad) for ad in (ads if opts.forwards else reversed(ads))))


def select_scanned(opts, pairs):
    """The ads the options choose of ``pairs`` ((banner fields, ad) of each record, see
    scan_ads), given in the order of the scan: the scan stops (reading no further) at
    -scanlimit, at the ad of -since, once -limit ads are chosen, or once each job
    named by its id is found (``_JobsFound``). A record left unparsed by its banner
    (historyfile.Skipped) counts as scanned, and -since is judged on its banner."""
    from gridtools.cli.condor.historyfile import Skipped
    sel = opts.selection
    exprs = _compiled(sel) if sel.constraints else []
    stop = _stop_test(opts)
    found = _JobsFound.of(opts)
    chosen = []
    for scanned, (fields, ad) in enumerate(pairs):
        if opts.scanlimit and scanned >= opts.scanlimit:
            break
        if ad.__class__ is Skipped:     # a record its banner showed unwanted (banner_test)
            if stop is not None and stop(_banner_ad(fields)):
                break
            if found is not None and found.done(fields, None):
                break
            continue
        if stop is not None and stop(ad):
            break
        cluster, proc, owner = ad.eval("ClusterId"), ad.eval("ProcId"), ad.eval("Owner")
        if not sel.named or cluster in sel.clusters or (cluster, proc) in sel.ids or owner in sel.users:
            if not exprs or Q.matches_all(ad, exprs):
                chosen.append(ad)
                if opts.limit and len(chosen) >= opts.limit:
                    break
        if found is not None and found.done(fields, ad):
            break
    return chosen


# ---------------------------------------------------------------- output

def table_width(opts, stdout):
    """How wide the default table may be (HTCondor's overall width: header and rows are
    cut there): None for -wide; N for -wide:N; else the terminal's width less one, or
    1024 on anything but a terminal. 80 (-wide:80) is the legacy short table."""
    if opts.wide and not opts.wide_width:
        return None
    if opts.wide_width:
        return opts.wide_width
    try:
        if stdout.isatty():
            return os.get_terminal_size(stdout.fileno()).columns - 1
    except (OSError, ValueError, AttributeError):
        pass
    return 1024


def short_table(ads):
    """The legacy table of -wide:80 (HTCondor's short_header and displayJobShort): CMD
    is the full path with the Args that fit in 14 characters, cut at 15; an ad without
    one of the attributes it shows is `` --- ???? --- ``."""
    from gridtools.cli.condor.qviews import format_date, format_time
    lines = [" %-7s %-14s %11s %12s %-2s %11s %-15s" % ("ID", "OWNER", "SUBMITTED", "RUN_TIME", "ST",
                                                         "COMPLETED", "CMD")]
    needed = ("ClusterId", "ProcId", "QDate", "CompletionDate", "JobStatus", "JobPrio", "ImageSize")
    for ad in ads:
        values = [ad.eval(a) for a in needed]
        owner, cmd = ad.eval("Owner"), ad.eval("Cmd")
        if not all(type(v) is int for v in values) or not isinstance(owner, str) or not isinstance(cmd, str):
            lines.append(" --- ???? --- ")
            continue
        cluster, proc, qdate, done, status = values[:5]
        wall = _number(ad.eval("RemoteWallClockTime"), _number(ad.eval("RemoteUserCpu"), 0))
        args = ad.eval("Args")
        if isinstance(args, str) and len(cmd) < 14:
            cmd = cmd + " " + args[:14 - len(cmd)]
        lines.append("%4d.%-3d %-14s %-11s %-12s %-2s %-11s %-15s" % (
            cluster, proc, owner[:14], format_date(qdate), format_time(int(wall)),
            Q.STATUS_LETTER.get(status, " "), format_date(done), cmd[:15]))
    return "\n".join(lines) + "\n"


def table(ads, width=None):
    """The default table (HTCondor's print format of condor_history), its lines cut at
    ``width``."""
    text = _table(ads)
    if width is None:
        return text
    return "".join(line[:width] + "\n" for line in text.splitlines())


def _table(ads):
    from gridtools.cli.condor.qviews import format_date, format_time
    ids = [f"{ad.eval('ClusterId')}.{ad.eval('ProcId')}" for ad in ads]
    width = max([12] + [len(i) for i in ids])
    lines = [f"{' ID':<{width}} {'OWNER':<14} {'  SUBMITTED':>11} {'  RUN_TIME  ':>12} ST "
             f"{'  COMPLETED':>11} CMD"]
    for jid, ad in zip(ids, ads):
        wall = _number(ad.eval("RemoteWallClockTime"), _number(ad.eval("RemoteUserCpu"), 0))
        status = ad.eval("JobStatus")
        lines.append(f"{jid:<{width}} {_text(ad.eval('Owner')):<14} "
                     f"{format_date(_number(ad.eval('QDate'), 0)):>11} {format_time(wall):>12} "
                     f"{Q.STATUS_LETTER.get(status, '?'):<2} "
                     f"{format_date(_number(ad.eval('CompletionDate'), 0)):>11} {_command(ad)}")
    return "\n".join(lines) + "\n"


def _number(value, default):
    return value if type(value) in (int, float) else default


def _text(value):
    return value if isinstance(value, str) else "??"


def _command(ad):
    """The CMD column: the command's base name and its arguments; a DAG's manager job
    reads ``condor_dagman ARGS``, as condor_q shows it (``spool.rows``)."""
    cmd = ad.eval("Cmd")
    text = os.path.basename(cmd) if isinstance(cmd, str) else ""
    from gridtools.formats.condor.spec import arguments
    from gridtools.spool.rows import DAGMAN_ARGS
    args = arguments(ad)
    if ad.eval("JobUniverse") == 7 and tuple(args[:len(DAGMAN_ARGS)]) == DAGMAN_ARGS:
        text, args = "condor_dagman", args[len(DAGMAN_ARGS):]
    return text + (" " + " ".join(args) if args else "")


def _default_table(opts, ads):
    width = table_width(opts, sys.stdout)
    return short_table(ads) if opts.wide_width == 80 else table(ads, width)


def json_line(ad):
    """An ad as -jsonl prints it: HTCondor's one-line JSON, ``{"A": 1,"B": "x"}``."""
    from gridtools.cli.condor.adformat import json_line as one_line
    return one_line(ad)


def _heading(opts):
    """What HTCondor's condor_history prints before it reads any history (its
    printHeader): the default table's heading, -print-format's, ``[`` of -json, the
    XML prolog of -xml and an empty line; else nothing."""
    if opts.view == "table":
        return _default_table(opts, [])
    if opts.view == "print":
        return _print_table(opts, [])
    if opts.view == "json":
        return "[\n"
    if opts.view == "xml":
        from gridtools.cli.condor import formatting
        return formatting.xml_ads([]).replace("</classads>\n", "") + "\n"
    return ""


def _xml(ads):
    """-xml as HTCondor's condor_history prints it: an empty line after the prolog,
    after each ad and after the closing tag (the element text escapes every ``<``, so
    ``</c>`` ends an ad only)."""
    from gridtools.cli.condor import formatting
    text = formatting.xml_ads(ads).replace("<classads>\n", "<classads>\n\n", 1)
    return text.replace("</c>\n", "</c>\n\n") + "\n"


def _json(ads):
    """-json: HTCondor's list, its ``[`` and ``]`` printed even for no ads."""
    from gridtools.cli.condor import formatting
    return formatting.json_ads(ads) if ads else "[\n]\n"


def _print_table(opts, ads):
    """-print-format's table: the heading as the mask stands before any ad is seen
    (HTCondor prints it before reading), then the rows, each line cut at the display."""
    mask = opts.print_format
    head = mask.table([])[0] or ""
    rows = "".join(mask.table(ads)[1]) if ads else ""
    text = head + rows
    if opts.print_cut is None:
        return text
    return "".join(line[:opts.print_cut] + "\n" for line in text.splitlines())


def _check_remote(opts):
    """-name/-pool: the cell's own schedd (its host, by any of its names, as condor_q
    -name takes them; a pool, with or without its port) is read as without them;
    another cannot be located, as HTCondor says after its heading."""
    if not opts.remote:
        return
    from gridtools.cli.condor.submit_more import known_schedd
    pool = opts.pool
    if pool is not None and pool.rpartition(":")[2].isdigit():
        pool = pool.rpartition(":")[0]
    if (opts.name is None or known_schedd(opts.name)) and (pool is None or known_schedd(pool)):
        return
    sys.stdout.write(_heading(opts))
    daemon = "startd" if opts.source == "startd" else "schedd"
    raise GridError(f"Unable to locate remote {daemon} (name={opts.name or ''}, pool={opts.pool or ''}).", 1)


def _startd_history(opts):
    """-startd without -file or -search: the file STARTD_HISTORY names, searched as
    -search searches (with its rotations); HTCondor's error, after the heading, when
    the configuration does not set it."""
    if opts.source != "startd" or opts.file or opts.search is not None or opts.userlog is not None:
        return
    from gridtools import cell
    from gridtools.errors import ConfigError
    from gridtools.formats import condor_config, condor_params
    try:
        config = condor_config.load(condor_config.locate(cell.etc("condor_config")),
                                    fallback=condor_params.default)
        path = config.get("STARTD_HISTORY")
    except ConfigError:
        path = None
    if path:
        opts.search = path
        return
    sys.stdout.write(_heading(opts))
    raise _fail("Error: No passed search file and configuration key STARTD_HISTORY is unset.", "",
                "Extra Info: The variable STARTD_HISTORY is not defined in your config file. If you want "
                "Condor to keep a history of information, you must define STARTD_HISTORY in your config file")


def main(argv, prog="condor_history"):
    from gridtools.cli.condor import formatting
    try:
        try:
            opts = parse_args(argv)
        except _ShowUsage:
            sys.stdout.write(USAGE)
            return 1
        if opts.help:
            sys.stdout.write(USAGE)
            return 0
        _check_remote(opts)
        _startd_history(opts)
        if opts.userlog is not None:
            ads = select(opts, log_ads(opts))
        else:
            from gridtools.cli.condor.historyfile import OpenError
            try:
                ads = select_scanned(opts, scan_ads(opts))
            except OpenError:
                sys.stdout.write(_heading(opts))      # HTCondor prints the heading before it opens
                raise
        if opts.view in ("long", "json", "jsonl", "xml"):
            from gridtools.cli.condor.formatting import projected
            ads = projected(ads, opts.attributes)
        if opts.view == "long":
            out = formatting.long_ads(ads)
        elif opts.view == "json":
            out = _json(ads)
        elif opts.view == "jsonl":
            out = "".join(json_line(ad) + "\n" for ad in ads)
        elif opts.view == "xml":
            out = _xml(ads)
        elif opts.view == "print":
            out = _print_table(opts, ads)
        elif opts.view == "af":
            out = formatting.autoformat(ads, opts.af_attrs, opts.af_quals)
        elif opts.view == "format":
            out = formatting.format_ads(ads, opts.formats)
        else:
            out = _default_table(opts, ads)
        sys.stdout.write(out)
        return 0
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
