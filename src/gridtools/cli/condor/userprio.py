"""condor_userprio: show or change the accountant's user priorities.

    condor_userprio [-name N] [-pool H] [-inputfile F] [-debug]
                    [-allusers] [-activefrom M D Y] [-priority] [-usage] [-quotas]
                    [-surplus] [-sortkey] [-groupid] [-order] [-most] [-all]
                    [-flat | -hierarchical | -grouporder] [-grouprollup]
                    [-collector | -negotiator] [-long [-legacy | -modular]]
                    [-af[:jlhVr,tng] ATTR ...] [-constraint EXPR] [USER ...]
    condor_userprio -getreslist USER
    condor_userprio -setfactor USER VALUE | -setprio USER VALUE
                    | -setfloor USER VALUE | -setceiling USER VALUE
                    | -resetusage USER | -resetall | -delete USER
                    | -setaccum USER VALUE | -setbegin USER TIME | -setlast USER TIME

Display reads ``spool/userprio.json`` (the daemon's accountant) and needs
READ access at the NEGOTIATOR; the edits are requests to the daemon and need
ADMINISTRATOR access (by default the cell's managers). Submitters are
named ``user@UID_DOMAIN``; an edit must name one that way, as in HTCondor.
Options are matched as HTCondor's tool matches them: any prefix of the name
(at least as long as HTCondor asks), tried in HTCondor's order. The floor and
ceiling of a submitter are kept and shown, and the negotiator acts on them.
"""

import sys
import time

from gridtools.cli.condor import adformat, machineviews as views
from gridtools.errors import GridError, UsageError

USAGE = """\
usage: {prog} [options] [edit-option | display-options [usernames]]
    where [options] are
\t-name <name>\t\tName of negotiator
\t-pool <host>\t\tUse host as the central manager to query
\t-inputfile <file>\tDisplay priorities from <file>
\t-help\t\t\tThis Screen
\t-debug[:<opts>]\t\tSend debug output to stderr, <opts> overrides TOOL_DEBUG
    where [edit-option] is one of
\t-resetusage <user>\tReset usage data for <user>
\t-resetall\t\tReset all usage data
\t-delete <user>\t\tRemove a user record from the accountant
\t-setprio <user> <val>\tSet priority for <user>
\t-setfactor <user> <val>\tSet priority factor for <user>
\t-setfloor <user> <val>\tSet floor for <user>
\t-setceiling <user> <val>\tSet ceiling for <user>
\t-setaccum <user> <val>\tSet Accumulated usage for <user>
\t-setbegin <user> <val>\tset last first date for <user>
\t-setlast <user> <val>\tset last active date for <user>
    where [display-options] are
\t-getreslist <user>\tDisplay list of resources for <user>
    or one or more of
\t-allusers\t\tDisplay data for all users
\t-activefrom <month> <day> <year> Display data for users active since this date
\t-priority\t\tDisplay user priority fields
\t-usage\t\t\tDisplay user/group usage fields
\t-quotas\t\t\tDisplay group quota fields
\t-most\t\t\tDisplay most useful prio and usage fields
\t-all\t\t\tDisplay all fields
\t-flat\t\t\tDo not display users under their groups
\t-hierarchical\t\tDisplay users under their groups
\t-grouporder\t\tDisplay groups first, then users
\t-grouprollup\t\tGroup value are the sum of user values
\t-collector\t\tForce the query to come from the collector
\t-negotiator\t\tForce the query to come from the negotiator
\t-long\t\t\tVerbose output (entire classads)
\t  -legacy\t\tCauses -long to show a single classad
\t  -modular\t\tCauses -long to show a classad per userprio record
\t-constraint <expr>\tDisplay users/groups that match <expr>
\t\t\t\twhen used with -long -modular or -autoformat
\t-autoformat[:jlhVr,tng] <attr> [<attr2> [...]]
\t-af[:jlhVr,tng] <attr> [attr2 [...]]
\t    Print attr(s) with automatic formatting
\t    the [jlhVr,tng] options modify the formatting
\t        j   display Job id
\t        l   attribute labels
\t        h   attribute column headings
\t        V   %V formatting (string values are quoted)
\t        r   %r formatting (raw/unparsed values)
\t        ,   comma after each value
\t        t   tab before each value (default is space)
\t        n   newline after each value
\t        g   newline between ClassAds, no space before values
\t    use -af:h to get tabular values with headings
\t    use -af:lrng to get -long equivalent format
   if [usernames] is specified, output will be restricted to the given names if possible.
"""

#: edit options: (name, shortest prefix, arguments), in HTCondor's order of matching
EDITS = (("setprio", 0, 2), ("setfactor", 0, 2), ("setfloor", 0, 2), ("setceiling", 0, 2),
         ("setbegin", 0, 2), ("setaccum", 0, 2), ("setlast", 0, 2), ("resetusage", 0, 1),
         ("delete", 3, 1), ("resetall", 0, 0))
#: which edit is carried out when several are given (HTCondor's order)
EDIT_ORDER = ("setprio", "setfactor", "setfloor", "setceiling", "setaccum", "setbegin", "setlast",
              "resetusage", "delete", "resetall")
#: the options without a value after the edits: (name, shortest prefix, what it sets), in
#: HTCondor's order (-constraint, -af, -debug and those with values are between them)
FLAGS_1 = (("long", 1, "long"), )
FLAGS_2 = (("legacy", 3, "legacy"), ("modular", 3, "modular"))
FLAGS_3 = (("hierarchical", 2, "hier"), ("heir", 0, "hier"), ("flat", 2, "flat"),
           ("grouprollup", 0, "grouprollup"), ("grouporder", 0, "grouporder"), ("quotas", 1, "quotas"),
           ("surplus", 0, "surplus"), ("sortkey", 2, "sortkey"), ("all", 0, "all"), ("most", 2, "most"),
           ("groupid", 0, "groupid"), ("order", 0, "order"))
FLAGS_4 = (("allusers", 0, "allusers"), ("usage", 2, "usage"), ("priority", 4, "priority"))
#: the options with one value after them, in HTCondor's order
VALUED = (("getreslist", 6), ("inputfile", 2), ("pool", 1), ("name", 0))
FLAGS_5 = (("collector", 3, "collector"), ("negotiator", 3, "negotiator"))
#: the display flags that choose columns (userprio_table.SHOWN)
COLUMN_FLAGS = ("priority", "usage", "most", "all", "quotas", "surplus", "sortkey", "groupid", "order")


class Options:
    def __init__(self):
        self.edits = {}              # op -> [args] (the last of each)
        self.shown = set()
        self.formatter = adformat.Formatter()
        self.constraint = None
        self.names = []
        self.valued = {}             # getreslist, inputfile, pool, name -> value
        self.activefrom = None       # the time -activefrom names
        self.hier = None

    @property
    def edit(self):
        """The edit carried out: (op, [args]), or None."""
        for op in EDIT_ORDER:
            if op in self.edits:
                return op, self.edits[op]
        return None


def _is(arg, word, shortest=0):
    """HTCondor's is_dash_arg_prefix: ``-x`` is a prefix of ``word`` at least ``shortest``
    long (``--x`` must be all of it)."""
    if not arg.startswith("-"):
        return False
    name = arg[1:]
    if name.startswith("-"):
        return name[1:] == word
    return bool(name) and word.startswith(name) and len(name) >= shortest


def _is_colon(arg, word, shortest=0):
    """HTCondor's is_dash_arg_colon_prefix: as ``_is``, what follows a colon aside."""
    head = arg.partition(":")[0]
    return _is(head, word, shortest)


def _usage():
    """HTCondor's usage(): the usage alone, on stderr, exit 1."""
    return UsageError("", 1)


def parse_args(argv):
    opts = Options()
    i = 0
    while i < len(argv):
        i = _option(opts, argv, i, argv[i])
    return opts


def _flag(opts, arg, table):
    for word, shortest, what in table:
        if _is(arg, word, shortest):
            if what in ("hier", "flat", "grouporder"):
                opts.hier = what == "hier"
            opts.shown.add(what)
            return True
    return False


def _option(opts, argv, i, arg):
    for word, shortest, count in EDITS:
        if _is(arg, word, shortest):
            if len(argv) - (i + 1) < count:
                raise _usage()                  # (HTCondor's edits give the usage alone)
            opts.edits[word] = argv[i + 1:i + 1 + count]
            return i + 1 + count
    if _flag(opts, arg, FLAGS_1):
        return i + 1
    if _is(arg, "constraint", 1):
        if i + 1 >= len(argv):
            raise UsageError(f"Error: Argument {arg} requires another parameter", 1)
        opts.constraint = adformat.constraint(argv[i + 1])
        return i + 2
    if _flag(opts, arg, FLAGS_2):
        return i + 1
    if _is_colon(arg, "af", 2) or _is_colon(arg, "autoformat", 5):
        attrs, i = [], i + 1
        while i < len(argv) and not argv[i].startswith("-"):
            attrs.append(argv[i])
            i += 1
        if not attrs:
            raise UsageError(f"Error: Argument {arg} requires at least one attribute parameter", 1)
        opts.formatter.add_autoformat(arg.partition(":")[2], attrs)
        return i
    if _is_colon(arg, "debug", 1):
        return i + 1                    # (the tool writes no debug log)
    if _flag(opts, arg, FLAGS_3):
        return i + 1
    if _is(arg, "activefrom"):
        if len(argv) - i <= 3:
            raise _usage()
        opts.activefrom = calc_time(*(_atoi(v) for v in argv[i + 1:i + 4]))
        opts.shown.discard("allusers")
        return i + 4
    if _flag(opts, arg, FLAGS_4):
        if "allusers" in opts.shown:
            opts.activefrom = None
        return i + 1
    for word, shortest in VALUED:
        if _is(arg, word, shortest):
            if len(argv) - i <= 1:
                raise _usage()
            opts.valued[word] = argv[i + 1]
            return i + 2
    if _flag(opts, arg, FLAGS_5):
        return i + 1
    if arg[:1].isalpha() or arg == "<none>":
        opts.names.append(arg)
        return i + 1
    raise _usage()


def _atoi(text):
    """C's atoi: the leading whole number of ``text`` (0 when there is none)."""
    import re
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


def calc_time(month, day, year):
    """-activefrom's time: midnight local time of the date (a year below 50 is 20YY,
    below 1900 is 19YY), as HTCondor's CalcTime works it out."""
    if year < 50:
        year += 100
    if year > 1900:
        year -= 1900
    try:
        return time.mktime((year + 1900, month, day, 0, 0, 0, 0, 0, -1))
    except (OverflowError, ValueError):
        return -1


# ---------------------------------------------------------------- edits

#: what the refusal of a short name says each edit updates
_WHAT = {"setaccum": "Accumulated usage", "setbegin": "begin usage time", "setlast": "last usage time"}


def _need_full(name, op, prog):
    """The refusal of a submitter named without its domain, in HTCondor's words (None: named well)."""
    if "@" in name:
        return None
    if op == "delete":
        return (f"{prog}: You must specify the full name of the record you wish\n"
                f"\tto delete (user@uid.domain or user@full.host.name)\n")
    if op in ("setfloor", "setceiling"):
        return (f"{prog}: You must specify the full name of the submittor you wish\n"
                f"\tto update the {op[3:]} of (user@uid.domain or user@full.host.name) (not {name})\n")
    return (f"{prog}: You must specify the full name of the submittor you wish\n"
            f"\tto update the {_WHAT.get(op, 'priority')} of (user@uid.domain or user@full.host.name)\n")


def _edit(opts, prog):
    from gridtools.cli.ask import ask
    op, args = opts.edit
    payload = {"op": op, "dialect": "condor"}
    if args:
        name = args[0]
        refusal = _need_full(name, op, prog)
        if refusal:
            sys.stderr.write(refusal)
            return 1
        payload["name"] = name
    if len(args) > 1:
        payload["value"] = args[1]
        if op in ("setfloor", "setceiling"):
            # (HTCondor reads the value with strtol: its leading whole number)
            value, least = _atoi(args[1]), (0 if op == "setfloor" else -1)
            if value < least:
                sys.stderr.write(f"{op[3:]} must be greater than or equal to {least}.\n")
                return 1
            payload["value"] = str(value)
            return ask("userprio", payload)
        # (HTCondor reads a time with atoi and the other values with atof: their leading
        # number, 0 when there is none)
        if op in ("setbegin", "setlast"):
            if not _is_number(args[1], int):
                payload["value"] = str(_atoi(args[1]))
            return ask("userprio", payload)
        value = _atof(args[1])
        if op == "setfactor" and value < 1:
            sys.stderr.write("Priority factors must be greater than or equal to 1.\n")
            return 1
        if op == "setaccum" and value < 0:
            sys.stderr.write("Usage must be greater than 0 seconds\n")
            return 1
        if not _is_number(args[1], float):
            payload["value"] = repr(value)
    return ask("userprio", payload)


def _is_number(text, kind):
    try:
        kind(text)
        return True
    except ValueError:
        return False


def _atof(text):
    """C's atof: the leading decimal number of ``text`` (0.0 when there is none)."""
    import re
    m = re.match(r"\s*([+-]?(?:inf(?:inity)?|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))", text, re.I)
    return float(m.group(1)) if m else 0.0


# ---------------------------------------------------------------- display

def accountant():
    """The daemon's accountant with the cell's settings (an empty one before the first)."""
    from gridtools.accounting.userprio import Accountant, Settings
    from gridtools.spool import condorstate
    data = condorstate.load(condorstate.USERPRIO)
    settings = Settings.from_config(views.client_config())
    if data is None:
        return Accountant(settings)
    try:
        return Accountant.from_data(data, settings)
    except ValueError as exc:
        raise GridError(f"Error: the user priorities cannot be read: {exc}", 1) from None


def record_ad(row, domain, group="<none>", quotas=None, last_update=None):
    """The accounting ad of one row (the names condor_userprio -l shows): ``group`` is
    the accounting group of a user, of a group its parent group (``<none>`` for a
    top-level group and for ``<none>`` itself), ``quotas`` a
    group's ConfigQuota, EffectiveQuota, SubtreeQuota, GroupSortKey, SurplusPolicy and
    Requested (``group_quotas``); ``last_update`` the accountant's LastUpdate."""
    from gridtools.classad import ClassAd
    ad = ClassAd({"Name": f"{row.name}@{domain}" if not row.is_group else row.name,
                  "Priority": row.effective, "PriorityFactor": row.factor,
                  "ResourcesUsed": int(round(row.in_use)), "WeightedResourcesUsed": row.in_use,
                  "AccumulatedUsage": row.accumulated_hours * 3600.0,
                  "WeightedAccumulatedUsage": row.accumulated_hours * 3600.0,
                  "BeginUsageTime": int(row.begin_usage), "LastUsageTime": int(row.last_usage),
                  "IsAccountingGroup": row.is_group, "AccountingGroup": group,
                  "RealPriority": row.real, "Ceiling": int(row.ceiling), "Floor": int(row.floor)})
    if last_update is not None:
        ad["LastUpdate"] = int(last_update)
    for name, value in (quotas or {}).items():
        ad[name] = value
    return ad


def _group_of_record(settings, row):
    """A record's AccountingGroup: a user's group, a group's parent group (``<none>``
    for a top-level group), as HTCondor's accountant reports them."""
    if not row.is_group:
        return settings.group_of(row.name) or "<none>"
    if row.name == "<none>" or "." not in row.name:
        return "<none>"
    return settings.group_of(row.name.rsplit(".", 1)[0] + ".x") or "<none>"


def group_quotas(acc):
    """group -> the attributes HTCondor's accountant publishes of it: ConfigQuota and
    SurplusPolicy from condor_config, EffectiveQuota, SubtreeQuota, GroupSortKey and
    Requested as the last negotiation worked them out (0.0 before one, as HTCondor's).
    The root group ``<none>`` has them too: no configured quota (0.0), the pool's rest
    as its effective quota, and surplus by quota (regroup when a group autoregroups)."""
    if not acc.settings.groups:
        return {}
    from gridtools.sched.groups import GroupsConfig, build, surplus_policy
    from gridtools.spool import status
    snap = status.read() or {}
    worked = (snap.get("negotiator") or {}).get("groups") or {}
    found = {}
    config = GroupsConfig.as_negotiator_reads(views.client_config())
    for spec in config.groups + (build(config).spec,):
        last = worked.get(spec.name) or {}
        found[spec.name] = {"ConfigQuota": float(spec.quota),
                            "EffectiveQuota": float(last.get("EffectiveQuota", 0.0)),
                            "SubtreeQuota": float(last.get("SubtreeQuota", 0.0)),
                            "GroupSortKey": float(last.get("GroupSortKey", 0.0)),
                            "SurplusPolicy": surplus_policy(spec),
                            "Requested": float(last.get("Requested", 0.0))}
    return found


def _locate(opts, prog):
    """-name and -pool must name this cell (its host): HTCondor's tool fails to locate
    any other negotiator."""
    from gridtools.cli.condor.submit_more import known_schedd
    name, pool = opts.valued.get("name"), opts.valued.get("pool")
    host = pool.rpartition(":")[0] if pool and ":" in pool else pool
    if (name is not None and not known_schedd(name)) or (pool is not None and not known_schedd(host)):
        raise GridError(f"{prog}: Can't locate negotiator in {pool if pool is not None else 'local pool'}", 1)


def _cutoff(opts):
    """The activity cut-off: users that last used resources before it are not listed
    (None: every user is)."""
    if "allusers" in opts.shown or opts.names:
        return None
    if opts.activefrom is not None:
        return opts.activefrom
    return time.time() - 86400


def _view(opts, cutoff, **more):
    from gridtools.cli.condor import userprio_table
    return userprio_table.View(hier=opts.hier, group_order="grouporder" in opts.shown,
                               dash_quota=bool({"quotas", "surplus"} & opts.shown), cutoff=cutoff, **more)


def _columns(opts):
    return {flag for flag in opts.shown if flag in COLUMN_FLAGS}


def legacy_ad(ads, last_update):
    """The one ad of -long -legacy: LastUpdate, NumSubmittors and each record's attributes
    numbered (Name1, Priority1, ...), groups first, as HTCondor's accountant reports it."""
    from gridtools.classad import ClassAd
    big = ClassAd({"LastUpdate": int(last_update or 0), "NumSubmittors": len(ads)})
    ordered = [ad for ad in ads if ad.eval("IsAccountingGroup") is True] + \
              [ad for ad in ads if ad.eval("IsAccountingGroup") is not True]
    for number, ad in enumerate(ordered, 1):
        for name in ad:
            if name != "LastUpdate":
                big[f"{name}{number}"] = ad.lookup(name)
    return big


def _long(opts, ads, last_update):
    if "legacy" in opts.shown and "modular" not in opts.shown:
        return adformat.long_form(legacy_ad(ads, last_update))
    if "modular" in opts.shown:
        return "".join("\n" + adformat.long_form(ad)[:-1] for ad in ads)
    return "".join(adformat.long_form(ad) for ad in ads)


def run(argv, out, err, prog="condor_userprio"):
    from gridtools.cli.condor import userprio_table
    opts = parse_args(argv)
    _locate(opts, prog)
    if opts.edit is not None:
        return _edit(opts, prog)
    if "getreslist" in opts.valued:
        return reslist(opts, out, err, prog)
    if "inputfile" in opts.valued:
        return from_file(opts, out, prog)
    views.check_read(err, "NEGOTIATOR")
    acc = accountant()
    domain = views.identity().domain
    now = acc.last_update or time.time()
    names = {n.partition("@")[0] for n in opts.names} or None
    cutoff = _cutoff(opts)
    # (the long form and -af show every record, as HTCondor's tool prints every ad it is
    # sent; only the table leaves out those without usage since the cut-off)
    every = "allusers" in opts.shown or "long" in opts.shown or bool(opts.formatter)
    rollup = "grouprollup" in opts.shown
    if opts.activefrom is not None and not every and names is None:
        rows = [r for r in acc.rows(now, all_users=True, rollup=rollup)
                if r.in_use > 0 or r.last_usage >= opts.activefrom]
    else:
        rows = acc.rows(now, all_users=every, names=names, rollup=rollup)
    quotas = group_quotas(acc)
    if opts.constraint is not None or opts.formatter or "long" in opts.shown:
        ads = [record_ad(r, domain, _group_of_record(acc.settings, r),
                         quotas.get(r.name) if r.is_group else None, now) for r in rows]
        if "long" in opts.shown and not opts.formatter and "legacy" in opts.shown \
                and "modular" not in opts.shown:
            out.write(_long(opts, ads, now))            # (the whole ad: no constraint)
            return 0
        ads = adformat.selected(ads, opts.constraint)
        if opts.formatter:
            out.write(opts.formatter.render(ads, lambda ad: str(ad.eval("Name"))))
        elif "long" in opts.shown:
            out.write(_long(opts, ads, now))
        else:
            keep = {ad.eval("Name") for ad in ads}
            rows = [r for r in rows if (r.name if r.is_group else f"{r.name}@{domain}") in keep]
    if not opts.formatter and "long" not in opts.shown:
        out.write(userprio_table.render(rows, acc, domain, now, _columns(opts),
                                        _view(opts, cutoff, quotas=quotas or None)))
    return 0


# ---------------------------------------------------------------- -getreslist

def reslist(opts, out, err, prog):
    """-getreslist USER: the slots the submitter holds, when each was matched and for how
    long, as HTCondor's PrintResList lays them out (or the negotiator's ad with -long)."""
    name = opts.valued["getreslist"]
    refusal = _need_full(name, "getreslist", prog)
    if refusal:
        sys.stderr.write(refusal)
        return 1
    views.check_read(err, "NEGOTIATOR")
    from gridtools.cli.condor.statusviews import natural_key
    snap = views.published_status()
    held = []
    for values, _exprs in snap.get("slots") or []:
        if values.get("State") not in ("Claimed", "Preempting"):
            continue
        who = values.get("AccountingGroup") or values.get("RemoteUser") or ""
        if who != name and who != name.partition("@")[0]:
            continue
        start = values.get("JobStart") or values.get("EnteredCurrentState") or 0
        held.append((str(values.get("Name")), int(start) if type(start) in (int, float) else 0))
    held.sort(key=lambda item: natural_key(item[0]))
    if "long" in opts.shown:
        from gridtools.classad import ClassAd
        ad = ClassAd()
        for number, (slot, start) in enumerate(held, 1):
            ad[f"Name{number}"] = slot
            ad[f"StartTime{number}"] = start
        out.write(adformat.long_form(ad))
        return 0
    now = time.time()
    line = "{:<30} {:>12} {:>12}\n"
    text = line.format("Resource Name", " Start Time", " Match Time")
    text += line.format("-------------", " ----------", " ----------")
    for slot, start in held:
        text += line.format(slot, userprio_table_date(start), _elapsed(now - start))
    text += line.format("-------------", " ------------", " ------------")
    out.write(text + f"Number of Resources Used: {len(held)}\n")
    return 0


def userprio_table_date(when):
    """HTCondor's format_date: ``M/D  HH:MM`` in local time."""
    if when < 0:
        return "    ???    "
    t = time.localtime(when)
    return f"{t.tm_mon:2d}/{t.tm_mday:<2d} {t.tm_hour:02d}:{t.tm_min:02d}"


def _elapsed(seconds):
    """HTCondor's format_time: ``DDD+HH:MM:SS``."""
    seconds = max(int(seconds), 0)
    days, rest = divmod(seconds, 86400)
    return f"{days:3d}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


# ---------------------------------------------------------------- -inputfile

def _split_legacy(ad):
    """The records of a -long -legacy ad (Name1, Priority1, ...): one ad each, and LastUpdate."""
    import re
    from gridtools.classad import ClassAd
    records = {}
    for name in ad:
        m = re.fullmatch(r"(\D.*?)(\d+)", name)
        if m and int(m.group(2)) > 0:
            records.setdefault(int(m.group(2)), ClassAd())[m.group(1)] = ad.lookup(name)
    return [records[k] for k in sorted(records)]


def _num(ad, attr, default=0.0):
    value = ad.eval(attr)
    return float(value) if type(value) in (int, float) else default


def from_file(opts, out, prog):
    """-inputfile F: the records of a saved -long output (one ad per record, or the
    -legacy ad) shown as from the accountant."""
    from gridtools.accounting.userprio import Accountant, Row, Settings
    from gridtools.cli.condor import qjobads, userprio_table
    path = opts.valued["inputfile"]
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        raise GridError(f"Can't open file of userprio ads: {path}", 1) from None
    ads = qjobads.ads_of_text(text, form="long")
    last_update = 0.0
    if len(ads) == 1 and "Name1" in ads[0]:
        last_update = _num(ads[0], "LastUpdate")
        ads = _split_legacy(ads[0])
    else:
        last_update = max([_num(ad, "LastUpdate") for ad in ads] or [0.0])
    ads = [ad for ad in ads if isinstance(ad.eval("Name"), str)]
    if opts.names:
        wanted = set(opts.names)
        ads = [ad for ad in ads if ad.eval("Name") in wanted or ad.eval("Name").partition("@")[0] in wanted]
    if opts.formatter or "long" in opts.shown:
        ads = adformat.selected(ads, opts.constraint)
        if opts.formatter:
            out.write(opts.formatter.render(ads, lambda ad: str(ad.eval("Name"))))
        else:
            out.write(_long(opts, ads, last_update))
        return 0
    cutoff = _cutoff(opts)
    rows, group_of, quotas = [], {}, {}
    for ad in ads:
        name, factor, prio = ad.eval("Name"), _num(ad, "PriorityFactor"), _num(ad, "Priority")
        last = _num(ad, "LastUsageTime")
        if cutoff is not None and (last if last > 0 else -1) < cutoff:
            continue
        is_group = ad.eval("IsAccountingGroup") is True
        used = _num(ad, "WeightedResourcesUsed", _num(ad, "ResourcesUsed"))
        rows.append(Row(name, prio, prio / factor if factor > 0 else 0.0, factor, used,
                        _num(ad, "WeightedAccumulatedUsage", _num(ad, "AccumulatedUsage")) / 3600.0,
                        _num(ad, "BeginUsageTime"), last,
                        (last_update - last) if last > 0 else None, is_group,
                        _num(ad, "Ceiling", -1.0), _num(ad, "Floor")))
        group = ad.eval("AccountingGroup")
        group_of[name] = group if isinstance(group, str) and group not in (".", "") else "<none>"
        if is_group:
            quotas[name] = {attr: ad.eval(attr) for attr in ("ConfigQuota", "EffectiveQuota", "SubtreeQuota",
                                                             "GroupSortKey", "SurplusPolicy", "Requested")
                            if ad.eval(attr) is not None and type(ad.eval(attr)) is not type(None)}
    rows.sort(key=lambda r: (r.effective, r.name))
    acc = Accountant(Settings(), last_update=last_update or time.time())
    groups = [r.name for r in rows if r.is_group and r.name != "<none>"]
    view = _view(opts, cutoff, quotas=quotas or None, groups=groups,
                 group_of=lambda r: group_of.get(r.name, "<none>"), qualify=False)
    out.write(userprio_table.render(rows, acc, "", acc.last_update, _columns(opts), view))
    return 0


def main(argv, prog="condor_userprio"):
    try:
        return run(list(argv), sys.stdout, sys.stderr, prog)
    except UsageError as exc:
        if str(exc):
            sys.stderr.write(f"{exc}\n")
        sys.stderr.write(USAGE.format(prog=prog))
        return 1
    except GridError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
