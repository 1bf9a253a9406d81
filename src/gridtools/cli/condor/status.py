"""condor_status: the cell's slots (and submitters, schedd) as HTCondor shows them.

    condor_status [-avail | -run | -submitters | -schedd | -master | -startd | -any] [-gpus]
                  [-state | -server]
                  [-total] [-compact] [-wide[:N]] [-constraint EXPR] [-limit N] [-sort EXPR]
                  [-long | -af[:jlhVr,tng] ATTR ... | -format FMT ATTR ... | -json | -xml
                   | -print-format FILE]
                  [-attributes A,B,...] [-pool HOST] [-direct NAME] [NAME ...]

The slot ads are those the daemon publishes (``daemon.slotads``): one per
slot of every execution host, with its state and activity, its load and
the job it runs. -startd shows a StartD ad per execution host, -any every ad,
-gpus the slots with GPUs (``statusviews``). Options may be abbreviated as
HTCondor allows (``-l``, ``-af``, ``-cons``, ``-av``, ``-ru``, ``-sub``, ``-sc``, ``-t``). NAME
selects slots by Name or Machine. -state and -server choose the slot table's
columns; -limit keeps the first N ads that match, -sort orders them by its
expressions; -attributes restricts what -long, -json and -xml show; -print-format
(-pr) prints with an HTCondor print-format file (``printformat``). -compact with
-total is ignored, with HTCondor's warning, but for the slots its query selects. -pool and
-direct are accepted and ignored: the pool is the cell, whose daemon is its
collector and every startd. Reading needs READ access
(``ALLOW_READ``/``DENY_READ`` at the COLLECTOR, see condor_config(5)).
"""

import sys
import time

from gridtools.cli.condor import adformat, machineviews as views
from gridtools.errors import GridError, UsageError
from gridtools.formats.condor import c_atoi

USAGE = """\
Usage: {prog} [help-opt] [query-opt] [display-opt] [name ...]
    where [help-opt] is
        -help                   This screen
    and [query-opt] is one of
        -slots                  Display slot resource attributes (the default)
        -avail                  Print information about available resources
        -run                    Same as -claimed [deprecated]
        -claimed                Print information about claimed resources
        -submitters             Display information about request submitters
        -schedd                 Display attributes of schedds
        -master                 Display daemon master attributes
        -collector              Display collector daemon attributes
        -negotiator             Display negotiator attributes
        -startd                 Display daemon startd attributes
        -any                    Display any ads, type, target type and name
        -gpus                   Display resources that have GPUs
        -subsystem <type>       Display classads of the given type
        -defrag                 Display attributes of defrag daemons
        -state                  Display state of resources
        -server                 Display important attributes of resources
        -constraint <const>     Add constraint on classads
        -pool <host>            Accepted and ignored (the cell is the pool)
        -direct <name>          Accepted and ignored
        -statistics <set>:<n>   Accepted (the ads carry the statistics the cell keeps)
    and [display-opt] is one of
        -long                   Display entire classads
        -af[:jlhVr,tng] <attr> [<attr2> [...]]
                                Print attr(s) with automatic formatting
        -format <fmt> <attr>    Print attribute attr using format fmt
        -json                   Display entire classads in JSON format
        -xml                    Display entire classads in XML format
        -print-format <file>    Use <file> to set display attributes and formatting
        -attributes X,Y,...     Attributes to show in -xml, -json or -long
        -target <file>          Use target classad with -format or -af evaluation
        -limit <n>              Display no more than <n> classads
        -sort <expr>            Sort ClassAds by expressions. 'no' disables sorting
        -natural[:off]          Accepted (changes nothing)
        -total                  Print totals only
        -compact                Show a single line per machine
        -nocompact              Show a line per slot (the default)
        -wide[:<width>]         Don't truncate data to fit in 80 columns.
"""

#: (option, shortest prefix, what it sets)
_FLAGS = (("avail", 2, "avail"), ("claimed", 2, "run"), ("run", 1, "run"), ("submitters", 3, "submitters"),
          ("schedd", 2, "schedd"), ("master", 1, "master"), ("long", 1, "long"), ("json", 2, "json"), ("totals", 1, "total"),
          ("xml", 1, "xml"), ("help", 1, "help"), ("compact", 3, "compact"), ("startd", 4, "startd"),
          ("any", 2, "any"), ("gpus", 3, "gpus"), ("collector", 3, "collector"), ("negotiator", 3, "negotiator"))
#: what -compact with -total warns of, as HTCondor warns with any display option once it
#: has the slots (-compact with a mode of other ads is refused before it asks for them:
#: statusmodes.refuse_compact); the slots are those -compact's query selects
#: (compactviews.compact_query), shown and summed as without -compact
COMPACT_IGNORED = "Warning: ignoring -compact option because -total option is also set\n"
#: options that show only machines in a condition no gridtools slot is in (absent from
#: the collector, offline, running computing-on-demand claims), as their constraints
_ONLY = (("absent", 2, "Absent =?= true"), ("offline", 2, "Offline =?= true"), ("cod", 3, "NumCODClaims > 0"))
#: the query modes of _FLAGS
_MODES = ("avail", "run", "submitters", "schedd", "master", "startd", "any", "collector", "negotiator")


class Options:
    def __init__(self):
        self.mode = "slots"
        self.long = self.json = self.xml = self.total = self.help = self.compact = self.gpus = False
        self.version = False
        self.compact_ignored = False  # -compact with -total: its query without its folding
        self.wide = None             # -wide: True; -wide:N: N (-wide:0 is as without)
        self.formatter = adformat.Formatter()
        self.constraints = []
        self.names = []
        self.style = None            # "state" or "server": the slot table's columns
        self.limit = 0               # at most this many ads (0: all)
        self.sort = []               # sort key expressions; None: the collector's order
        self.attributes = []         # the attributes -long, -json and -xml show
        self.ads_file = None         # -ads FILE: the ads shown come from there, not the collector
        self.ads_form = "long"
        self.print_format = None     # -print-format's printmask.Mask
        self.picked = []             # (number, as typed, in full) of the mode and style options
        self.ad_type = None          # mode "other" (-subsystem TYPE): the MyType of the ads shown


def _prefix(arg, word, shortest):
    name = arg.lstrip("-").split(":", 1)[0].lower()
    return arg.startswith("-") and len(name) >= shortest and word.startswith(name)


def parse_args(argv):
    opts = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i = _one(opts, argv, i, arg)
    if len(opts.picked) > 1:         # (HTCondor refuses some of them together: statusmodes)
        from gridtools.cli.condor import statusmodes
        statusmodes.check(opts)
    if opts.compact and opts.mode in ("startd", "any", "schedd", "submitters", "master"):
        from gridtools.cli.condor import statusmodes
        statusmodes.refuse_compact(opts)
    if opts.compact and opts.total:     # (HTCondor warns of it once it has the slots: run)
        opts.compact, opts.compact_ignored = False, True
    return opts


def _one(opts, argv, i, arg):
    """Apply the option at ``argv[i]``; the index of the next one."""
    if not arg.startswith("-") or arg == "-":
        opts.names.append(arg)
        return i + 1
    if _prefix(arg, "autoformat", 5) or _prefix(arg, "af", 2):
        qualifiers, start = arg.partition(":")[2], i
        attrs = []
        i += 1
        while i < len(argv) and not argv[i].startswith("-"):
            attrs.append(argv[i])
            i += 1
        if not attrs:
            from gridtools.errors import lines
            raise GridError(lines(f"Error: Argument {arg} requires at least one attribute parameter",
                                  'Use "condor_status -help" for details'), 1)
        opts.formatter.add_autoformat(qualifiers, attrs)
        opts.picked.append((start + 1, arg, "custom"))
        return i
    if _prefix(arg, "ads", 2):
        if i + 1 >= len(argv):
            from gridtools.errors import lines
            raise GridError(lines("condor_status: -ads requires a filename argument",
                                  'Use "condor_status -help" for details'), 1)
        from gridtools.cli.condor.qjobads import form_of
        opts.ads_file = argv[i + 1]
        opts.ads_form = form_of(arg.partition(":")[2]) if ":" in arg else "long"
        return i + 2
    if _prefix(arg, "subsystem", 4):
        if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
            from gridtools.errors import lines
            raise GridError(lines("condor_status: -subsystem requires another argument",
                                  'Use "condor_status -help subsys" for details'), 1)
        _subsystem(opts, argv[i + 1], i + 1, arg)
        return i + 2
    if _prefix(arg, "defrag", 3):
        _subsystem(opts, "defrag", i + 1, arg)
        return i + 1
    if _prefix(arg, "statistics", 5):
        if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
            raise _missing("statistics requires another argument")
        return i + 2                 # (the ads carry every statistic the cell keeps)
    if _prefix(arg, "target", 4):
        if i + 1 >= len(argv):
            from gridtools.errors import lines
            raise GridError(lines("condor_status: -target requires one additional argument",
                                  'Use "condor_status -help" for details'), 1)
        opts.formatter.target = _target_ad(argv[i + 1])
        return i + 2
    if _prefix(arg, "format", 1):
        if i + 2 >= len(argv):
            raise _missing("format requires two other arguments")
        opts.formatter.add_format(argv[i + 1], argv[i + 2])
        opts.picked.append((i + 1, arg, "custom"))
        return i + 3
    if _prefix(arg, "constraint", 3):
        if i + 1 >= len(argv):
            raise _missing("constraint requires another argument")
        opts.constraints.append(adformat.constraint(argv[i + 1]))
        return i + 2
    if _prefix(arg, "limit", 2):
        if i + 1 >= len(argv):
            raise _missing("limit requires one additional argument")
        opts.limit = c_atoi(argv[i + 1])
        return i + 2
    if _prefix(arg, "sort", 2):
        if i + 1 >= len(argv):
            raise _missing("sort requires another argument")
        _add_sort(opts, argv[i + 1])
        return i + 2
    if _prefix(arg, "attributes", 2):
        if i + 1 >= len(argv):
            raise _missing("attributes requires one additional argument")
        opts.attributes += [a.strip() for a in argv[i + 1].replace(" ", ",").split(",") if a.strip()]
        return i + 2
    if _prefix(arg, "pool", 1) or _prefix(arg, "direct", 3):
        if i + 1 >= len(argv) and _prefix(arg, "pool", 1):
            from gridtools.errors import Lines
            exc = GridError(Lines("condor_status: -pool requires a hostname as an argument.\n" + wrapped(
                "Extra Info: The hostname should be the central manager of the Condor pool you wish to work "
                "with.") + 'Use "condor_status -help" for details'), 1)
            exc.stdout = "\n\n"         # (HTCondor's blank lines around the extra info go there)
            raise exc
        if i + 1 >= len(argv):
            raise _missing("direct requires another argument")
        return i + 2                 # one local pool: its collector is the cell's daemon
    if _prefix(arg, "print-format", 2):
        if i + 1 >= len(argv) or (argv[i + 1].startswith("-") and argv[i + 1] != "-"):
            raise GridError("Error: Argument -print-format requires a filename argument", 1)
        if argv[i + 1] != "!":           # (-pr ! : no user default print files, which the cell has none of)
            from gridtools.cli.condor import printformat
            opts.print_format = printformat.load(argv[i + 1], "condor_status")
            opts.picked.append((i + 1, arg, "custom"))
        return i + 2
    if _prefix(arg, "wide", 1):
        opts.wide = (c_atoi(arg.partition(":")[2]) or None) if ":" in arg else True
        return i + 1
    if _prefix(arg, "nocompact", 5):
        opts.compact = False
        return i + 1
    if _prefix(arg, "slots", 2):        # the slots' mode (the default), and not -compact's rows
        opts.mode, opts.compact = "slots", False
        opts.picked.append((i + 1, arg, "slots"))
        return i + 1
    if _prefix(arg, "natural", 3):      # (-natural[:off]: the rows keep the order the ads are published in)
        return i + 1
    if _prefix(arg, "expert", 1):     # (shorter error messages: these are short already)
        return i + 1
    if _prefix(arg, "debug", 2):      # (HTCondor's own tracing on standard error: none here)
        return i + 1
    if _prefix(arg, "version", 3):
        opts.version = True
        return i + 1
    for word, shortest, only in _ONLY:
        if _prefix(arg, word, shortest):
            opts.constraints.append(adformat.constraint(only))
            return i + 1
    for word, style in (("state", 4), ("server", 2)):
        if _prefix(arg, word, style):
            opts.style = word
            opts.picked.append((i + 1, arg, word))
            return i + 1
    for word, shortest, what in _FLAGS:
        if _prefix(arg, word, shortest):
            if what in _MODES or what in ("gpus", "long", "json", "xml"):
                opts.picked.append((i + 1, arg, word))
            if what in _MODES:
                opts.mode = what
            else:
                setattr(opts, what, True)
            return i + 1
    raise UsageError(f"Error:  Unknown option {arg}")


#: -subsystem's names of the query modes (else a type of ads: their MyType)
_SUBSYSTEMS = {"schedd": "schedd", "submitters": "submitters", "slots": "slots", "machine": "slots",
               "startd": "startd", "negotiator": "negotiator", "master": "master", "collector": "collector"}


def _subsystem(opts, word, number, arg):
    """-subsystem TYPE (and -defrag): a query mode by its name, or the ads whose MyType is
    ``TYPE`` (a defragmentation daemon, a grid, accounting or HAD ads ... which a cell
    that runs no such daemon has none of: nothing is shown)."""
    mode = _SUBSYSTEMS.get(word.lower())
    if mode is None:
        mode, opts.ad_type = "other", {"defrag": "Defrag", "grid": "Grid", "accounting": "Accounting",
                                       "had": "HAD", "generic": "Generic"}.get(word.lower(), word)
    opts.mode = mode
    opts.picked.append((number, arg, mode))


def _target_ad(path):
    """-target FILE: the first ad of the file (long form), the TARGET of -af and -format."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise GridError(f"Cannot open file {path}: errno: {exc.errno}", 1) from None
    from gridtools.cli.condor.qjobads import ads_of_text
    from gridtools.classad import ClassAd
    try:
        found = ads_of_text(text, form="long")
    except Exception:  # noqa: BLE001 - a file that holds no ad: an empty target, as HTCondor reads it
        found = []
    return adformat.full(found[0]) if found else ClassAd()


def wrapped(text, width=78):
    """HTCondor's print_wrapped_text: words and a blank each, a word that does not fit
    in ``width`` starting a new line, then a newline."""
    out, count = [], 0
    for word in text.split():
        if len(word) < width - count:
            out.append(word)
            count += len(word)
        else:
            out.append("\n" + word)
            count = len(word)
        if count < width:
            out.append(" ")
            count += 1
        else:
            out.append("\n")
            count = 0
    return "".join(out) + "\n"


def _missing(what):
    from gridtools.errors import lines
    return GridError(lines(f"condor_status: -{what}", 'Use "condor_status -help" for details'), 1)




def _add_sort(opts, text):
    if text.lower() in ("false", "0", "no", "none"):
        opts.sort = None
        return
    from gridtools.classad import parse
    try:
        expr = parse(text, old=True)      # (the old syntax: adjacent strings are refused)
    except Exception:  # noqa: BLE001 - any parse failure is the user's expression
        raise GridError(f"Error:  Parse error of: {text}", 1) from None
    if opts.sort is not None:
        opts.sort.append(expr)


def _sort_value(ad, expr):
    """A sort key: numbers before strings (without case) before anything else."""
    try:
        value = expr.eval(adformat.full(ad))
    except Exception:  # noqa: BLE001 - an expression that fails sorts as undefined
        value = None
    if type(value) in (int, float, bool):
        return (0, float(value), "")
    if isinstance(value, str):
        return (1, 0.0, value.lower())
    return (2, 0.0, "")


def _sorted(opts, ads):
    """Ads in -sort's order (the daemon publishes them by Machine, then slot number,
    HTCondor's default order)."""
    if not opts.sort:
        return ads
    return sorted(ads, key=lambda ad: [_sort_value(ad, e) for e in opts.sort])


def _wanted(ad, names):
    if not names:
        return True
    keys = {str(ad.eval(a)).lower() for a in ("Name", "Machine") if isinstance(ad.eval(a), str)}
    return any(n.lower() in keys or any(k.split(".")[0] == n.lower() for k in keys) for n in names)


def _ads(opts, snap, now):
    if opts.ads_file is not None:       # (the file's ads in place of the collector's)
        from gridtools.cli.condor.qjobads import read_ads
        ads = read_ads(opts.ads_file, form=opts.ads_form)
        if opts.mode in views.MODE_CONSTRAINTS:
            ads = [ad for ad in ads if views.in_mode(opts.mode, ad)]
    elif opts.mode == "submitters":
        from gridtools.cli.condor import submitters
        ads = submitters.submitter_ads(snap, now, views.domain())
    elif opts.mode == "schedd":
        from gridtools.cli.condor import submitters
        ads = submitters.schedd_ads(snap, now)
    elif opts.mode == "master":
        ads = views.master_ads(snap, now)
    elif opts.mode in ("collector", "negotiator"):
        from gridtools.cli.condor import daemonads
        ads = daemonads.collector_ads(snap, now) if opts.mode == "collector" else daemonads.negotiator_ads(snap, now)
    elif opts.mode in ("startd", "any", "other"):
        from gridtools.cli.condor import statusviews
        ads = statusviews.startd_ads(snap, now) if opts.mode == "startd" else \
            statusviews.any_ads(snap, now, views.domain())
        if opts.mode == "other":
            ads = [ad for ad in ads if str(ad.eval("MyType")).lower() == opts.ad_type.lower()]
        if opts.gpus and opts.mode == "startd":
            ads = statusviews.gpu_ads(ads, startd=True)
    else:
        ads = [adformat.from_plain(item) for item in snap.get("slots") or []]
        if (opts.compact or opts.compact_ignored) and not opts.gpus:
            from gridtools.cli.condor import compactviews
            ads = compactviews.compact_query(opts.mode, ads)
        elif opts.mode in views.MODE_CONSTRAINTS:
            ads = [ad for ad in ads if views.in_mode(opts.mode, ad)]
        if opts.gpus and (opts.compact or opts.compact_ignored):     # (its own slots, by machine and slot type)
            from gridtools.cli.condor import compactviews
            ads = compactviews.gpus_compact_ads(ads)
        elif opts.gpus:
            from gridtools.cli.condor import statusviews
            ads = statusviews.gpu_ads(ads)
    constraints = list(opts.constraints)
    if opts.print_format is not None and opts.print_format.where is not None:
        from gridtools.cli.condor import printformat
        constraints.append(printformat.where_expr(opts.print_format))
    for expr in constraints:
        ads = adformat.selected(ads, expr)
    ads = [ad for ad in ads if _wanted(ad, opts.names)]
    if opts.limit > 0:
        ads = ads[:opts.limit]
    return _sorted(opts, ads)


def render(opts, snap, now):
    """The text condor_status prints."""
    ads = _ads(opts, snap, now)
    if opts.long or opts.json or opts.xml:
        from gridtools.cli.condor.formatting import projected
        ads = projected([adformat.full(ad) for ad in ads], opts.attributes) if opts.attributes else ads
    if opts.long:
        return "".join(adformat.long_form(ad) for ad in ads)
    if opts.json:
        return adformat.json_form(ads)
    if opts.xml:
        return adformat.xml_form(ads, blank_after=True)
    from gridtools.cli.condor import table_width
    width = table_width(opts.wide)
    if opts.print_format is not None:
        return _custom(opts, ads, now, width)
    if opts.formatter:
        return opts.formatter.render(ads, lambda ad: str(ad.eval("Name")))
    if not ads:
        return ""
    text = _mode_table(opts, ads, now, opts.total, width)
    return text if opts.total else _fit(text, width)


def _mode_table(opts, ads, now, totals_only, width):
    """The table of the query mode and display options (its summary alone with
    ``totals_only``), before it is fitted to the display."""
    # HTCondor's wide display: -wide, or -wide:N over 100; its slot table's last column is
    # the long ActivityTime on a display of 100 columns or more
    wide = opts.wide is True or (opts.wide is not None and opts.wide > 100)
    key_min = views.WIDE_KEY if wide else views.KEY_WIDTH
    fit = width - 1 if width is not None and not wide else None     # (the Name column fitted)
    if opts.compact and opts.gpus and opts.mode == "slots":
        from gridtools.cli.condor.compactviews import gpus_compact_table
        return gpus_compact_table(ads, totals_only=totals_only, key_min=key_min)
    if opts.mode in ("collector", "negotiator"):
        from gridtools.cli.condor import daemonads
        return daemonads.table(opts.mode, ads, totals_only, width, wide)
    if opts.mode in ("startd", "any", "other") or (opts.gpus and opts.mode == "slots"):
        from gridtools.cli.condor import statusviews
        return statusviews.view("any" if opts.mode == "other" else opts.mode, opts.gpus, ads, totals_only, key_min)
    if opts.compact and opts.mode in ("slots", "avail", "run"):
        from gridtools.cli.condor.compactviews import compact_table
        return compact_table(ads, totals_only=totals_only, style=opts.style, key_min=key_min)
    if opts.style and opts.mode in ("slots", "avail", "run"):
        if opts.style == "state":
            return views.state_table(ads, now, totals_only=totals_only, key_min=key_min, fit=fit)
        return views.server_table(ads, totals_only=totals_only, key_min=key_min, fit=fit)
    return views.table(opts.mode, ads, now, totals_only=totals_only, wide=wide,
                       long_time=wide or (width is not None and width - 1 >= 100), fit=fit)


def _custom(opts, ads, now, width):
    """The text of -print-format: its table cut to the display (as HTCondor sets the
    mask's overall width), then with SUMMARY STANDARD the summary of the query mode."""
    from gridtools.cli.condor import cut, printformat
    if opts.gpus:                    # (-gpus gathers the GPUs' properties for GPUS_CAPS ...)
        from gridtools.cli.condor import printas
        printas.ingest_gpus(ads)
    table, summary = printformat.status_table(opts.print_format, ads, opts.total,
                                              lambda: _mode_table(opts, ads, now, True, width))
    return cut(table, width) + summary


def _fit(text, width):
    """The table of ``text`` (its heading, the blank line after it, its rows and the
    blank line after them) cut to ``width`` (the package's ``cut``), as HTCondor's print mask
    cuts its lines to the display's width; the summary after it is not cut."""
    from gridtools.cli.condor import cut
    if width is None:
        return text
    lines = text.split("\n")
    blanks = [i for i, line in enumerate(lines) if not line][:2]
    end = blanks[1] + 1 if len(blanks) == 2 else len(lines)
    table = "\n".join(lines[:end]) + "\n"
    return cut(table, width) + "\n".join(lines[end:]) if end < len(lines) else cut(text, width)


def run(argv, out, err):
    opts = parse_args(argv)
    if opts.help:
        out.write(USAGE.format(prog="condor_status"))
        return 0
    if opts.version:
        from gridtools.formats.condor.jobad import VERSION_TEXT
        out.write(VERSION_TEXT)
        return 0
    if opts.ads_file is None:
        views.check_read(err, "COLLECTOR")
    snap = views.published_status() if opts.ads_file is None else {}
    if opts.compact_ignored:
        err.write(COMPACT_IGNORED)
    out.write(render(opts, snap, time.time()))
    return 0


def main(argv, prog="condor_status"):
    try:
        return run(list(argv), sys.stdout, sys.stderr)
    except UsageError as exc:             # an unknown option: HTCondor then prints its usage
        sys.stderr.write(f"{exc}\n" + USAGE.format(prog=prog))
        return 1
    except GridError as exc:
        sys.stdout.write(getattr(exc, "stdout", ""))
        sys.stdout.flush()
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code

