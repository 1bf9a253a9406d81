"""condor_userprio: show or change the accountant's user priorities.

    condor_userprio [-allusers] [-priority] [-usage] [-all] [-most] [-long]
                    [-af[:jlhVr,tng] ATTR ...] [-constraint EXPR] [USER ...]
    condor_userprio -setfactor USER VALUE | -setprio USER VALUE
                    | -resetusage USER | -resetall | -delete USER
                    | -setaccum USER VALUE | -setbegin USER TIME | -setlast USER TIME

Display reads ``spool/userprio.json`` (the daemon's accountant) and needs
READ access at the NEGOTIATOR; the edits are requests to the daemon and need
ADMINISTRATOR access (by default the cell's managers). Submitters are
named ``user@UID_DOMAIN``; an edit must name one that way, as in HTCondor.
"""

import sys
import time

from gridtools.cli.condor import adformat, machineviews as views
from gridtools.errors import GridError, UsageError

USAGE = """\
usage: {prog} [options] [edit-option | display-options [usernames]]
    where [options] are
\t-help\t\t\tThis Screen
    where [edit-option] is one of
\t-resetusage <user>\tReset usage data for <user>
\t-resetall\t\tReset all usage data
\t-delete <user>\t\tRemove a user record from the accountant
\t-setprio <user> <val>\tSet priority for <user>
\t-setfactor <user> <val>\tSet priority factor for <user>
\t-setaccum <user> <val>\tSet Accumulated usage for <user>
\t-setbegin <user> <val>\tset last first date for <user>
\t-setlast <user> <val>\tset last active date for <user>
    where [display-options] are one or more of
\t-allusers\t\tDisplay data for all users
\t-priority\t\tDisplay user priority fields
\t-usage\t\t\tDisplay user/group usage fields
\t-most\t\t\tDisplay most useful prio and usage fields
\t-all\t\t\tDisplay all fields
\t-long\t\t\tVerbose output (entire classads)
\t-constraint <expr>\tDisplay users/groups that match <expr>
\t-af[:jlhVr,tng] <attr> [<attr2> [...]]
\t\t\t\tPrint attr(s) with automatic formatting
   if [usernames] is specified, output will be restricted to the given names if possible.
"""

#: edit options: (name, shortest prefix, arguments)
EDITS = (("setfactor", 4, 2), ("setprio", 4, 2), ("resetusage", 6, 1), ("resetall", 6, 0),
         ("delete", 3, 1), ("setaccum", 5, 2), ("setbegin", 5, 2), ("setlast", 5, 2))
#: display options: (name, shortest prefix)
DISPLAYS = (("allusers", 2), ("priority", 3), ("usage", 2), ("most", 2), ("all", 3), ("long", 1),
            ("help", 1))


class Options:
    def __init__(self):
        self.edit = None             # (op, [args])
        self.shown = set()
        self.formatter = adformat.Formatter()
        self.constraint = None
        self.names = []


def _matches(arg, word, shortest):
    name = arg.lstrip("-").split(":", 1)[0].lower()
    return len(name) >= shortest and word.startswith(name)


def parse_args(argv):
    opts = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            opts.names.append(arg)
            i += 1
            continue
        i = _option(opts, argv, i, arg)
    return opts


def _option(opts, argv, i, arg):
    for word, shortest, count in EDITS:
        if _matches(arg, word, shortest):
            if len(argv) - (i + 1) < count:
                raise UsageError(f"Error: Argument {arg} requires another parameter")
            opts.edit = (word, argv[i + 1:i + 1 + count])
            return i + 1 + count
    if _matches(arg, "autoformat", 5) or _matches(arg, "af", 2):
        attrs, i = [], i + 1
        while i < len(argv) and not argv[i].startswith("-"):
            attrs.append(argv[i])
            i += 1
        if not attrs:
            raise UsageError(f"Error: Argument {arg} requires at least one attribute parameter")
        opts.formatter.add_autoformat(arg.partition(":")[2], attrs)
        return i
    if _matches(arg, "constraint", 3):
        if i + 1 >= len(argv):
            raise UsageError(f"Error: Argument {arg} requires another parameter")
        opts.constraint = adformat.constraint(argv[i + 1])
        return i + 2
    bare = arg.lstrip("-").lower()
    for word, shortest in sorted(DISPLAYS, key=lambda d: d[0] != bare):     # an exact name first
        if _matches(arg, word, shortest):
            opts.shown.add(word)
            return i + 1
    raise UsageError(f"Error: unknown option {arg}")


# ---------------------------------------------------------------- edits

def _edit(opts, prog):
    from gridtools.cli.ask import ask
    op, args = opts.edit
    payload = {"op": op, "dialect": "condor"}
    if args:
        name = args[0]
        if "@" not in name:
            sys.stderr.write(f"{prog}: You must specify the full name of the submittor you wish\n"
                             f"\tto update the priority of (user@uid.domain or user@full.host.name)\n")
            return 1
        payload["name"] = name
    if len(args) > 1:
        payload["value"] = args[1]
        if not _number(args[1]):
            raise UsageError(f"Error: {args[1]} is not a number")
        if op == "setfactor" and float(args[1]) < 1:
            sys.stderr.write("Priority factors must be greater than or equal to 1.\n")
            return 1
        if op == "setprio" and float(args[1]) < 0.5:
            sys.stderr.write("Priority must be greater than or equal to 0.5.\n")
            return 1
    return ask("userprio", payload)


def _number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


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


def record_ad(row, domain, group="<none>", quotas=None):
    """The accounting ad of one row (the names condor_userprio -l shows): ``group`` is
    the accounting group of a user (a group's own name for a group), ``quotas`` a
    group's ConfigQuota, EffectiveQuota, SubtreeQuota, GroupSortKey, SurplusPolicy and
    Requested (``group_quotas``)."""
    from gridtools.classad import ClassAd
    ad = ClassAd({"Name": f"{row.name}@{domain}" if not row.is_group else row.name,
                  "Priority": row.effective, "PriorityFactor": row.factor,
                  "ResourcesUsed": int(round(row.in_use)), "WeightedResourcesUsed": row.in_use,
                  "AccumulatedUsage": row.accumulated_hours * 3600.0,
                  "WeightedAccumulatedUsage": row.accumulated_hours * 3600.0,
                  "BeginUsageTime": int(row.begin_usage), "LastUsageTime": int(row.last_usage),
                  "IsAccountingGroup": row.is_group, "AccountingGroup": row.name if row.is_group else group,
                  "RealPriority": row.real})
    for name, value in (quotas or {}).items():
        ad[name] = value
    return ad


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
    config = GroupsConfig.from_config(views.client_config())
    for spec in config.groups + (build(config).spec,):
        last = worked.get(spec.name) or {}
        found[spec.name] = {"ConfigQuota": float(spec.quota),
                            "EffectiveQuota": float(last.get("EffectiveQuota", 0.0)),
                            "SubtreeQuota": float(last.get("SubtreeQuota", 0.0)),
                            "GroupSortKey": float(last.get("GroupSortKey", 0.0)),
                            "SurplusPolicy": surplus_policy(spec),
                            "Requested": float(last.get("Requested", 0.0))}
    return found


def run(argv, out, err, prog="condor_userprio"):
    from gridtools.cli.condor import userprio_table
    opts = parse_args(argv)
    if "help" in opts.shown:
        out.write(USAGE.format(prog=prog))
        return 0
    if opts.edit is not None:
        return _edit(opts, prog)
    views.check_read(err, "NEGOTIATOR")
    acc = accountant()
    domain = views.identity().domain
    now = acc.last_update or time.time()
    names = {n.partition("@")[0] for n in opts.names} or None
    # (the long form and -af show every record, as HTCondor's tool prints every ad it is
    # sent; only the table leaves out those without usage in the last day)
    every = "allusers" in opts.shown or "long" in opts.shown or bool(opts.formatter)
    rows = acc.rows(now, all_users=every, names=names)
    if opts.constraint is not None or opts.formatter or "long" in opts.shown:
        quotas = group_quotas(acc)
        ads = adformat.selected([record_ad(r, domain, acc.settings.group_of(r.name) or "<none>",
                                           quotas.get(r.name) if r.is_group else None)
                                 for r in rows], opts.constraint)
        if opts.formatter:
            out.write(opts.formatter.render(ads, lambda ad: str(ad.eval("Name"))))
        elif "long" in opts.shown:
            out.write("".join(adformat.long_form(ad) for ad in ads))
        else:
            keep = {ad.eval("Name") for ad in ads}
            rows = [r for r in rows if (r.name if r.is_group else f"{r.name}@{domain}") in keep]
    if not opts.formatter and "long" not in opts.shown:
        out.write(userprio_table.render(rows, acc, domain, now, opts.shown))
    return 0


def main(argv, prog="condor_userprio"):
    try:
        return run(list(argv), sys.stdout, sys.stderr, prog)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        sys.stderr.write(USAGE.format(prog=prog))
        return 1
    except GridError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
