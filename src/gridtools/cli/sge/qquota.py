"""qquota: the resource quota limits in use, and the static ones.

For every enabled rule of the cell's resource quota sets that applies to
the names asked for (the calling user unless ``-u`` says otherwise), one
line per counter in use (``slots=2/100``) and one per limit that counts
nothing (``arch=lx-amd64``), with the rule's effective filter. What is in
use comes from the tasks the dispatcher last published as running, counted
by the same code the scheduler uses (``sched.rqs``).
"""

import sys

from gridtools.cli.sge.tokens import split_list
from gridtools.errors import GridError, UsageError

#: the text of ``qquota -help`` (stdout, exit 0), and of a bad option (stderr, before the
#: error line, exit 1), as Grid Engine 8.1.9 prints it
USAGE = "\n".join((
    "SGE 8.1.9",
    "usage: qquota [options]",
    "  [-help]                              print this help",
    "  [-h wc_host_list|wc_hostgroup_list]  display only selected hosts",
    "  [-l resource_attributes]             request the given resources",
    "  [-u user_list]                       display only selected users",
    "  [-pe wc_pe_list]                     display only selected parallel environments",
    "  [-P wc_project_list]                 display only selected projects",
    "  [-q wc_cqueue_list]                  display only selected queues",
    "  [-xml]                               display the information in XML format",
    "",
    "resource_attributes     resource_name,resource_name,...",
    "wc_cqueue               wildcard expression matching a cluster queue",
    "wc_cqueue_list          wc_cqueue[,wc_cqueue,...]",
    "wc_host                 wildcard expression matching a host",
    "wc_host_list            wc_host[,wc_host,...]",
    "wc_hostgroup            wildcard expression matching a hostgroup",
    "wc_hostgroup_list       wc_hostgroup[,wc_hostgroup,...]",
    "wc_pe                   wildcard expression matching a parallel environment",
    "wc_pe_list              wc_pe[,wc_pe,...]",
    "wc_project              wildcard expression matching a project",
    "wc_project_list         wc_project[,wc_project,...]",
    "user_list               user[,user,...]",
)) + "\n"
HEADER = "resource quota rule limit                filter\n" + "-" * 80 + "\n"
#: option -> the filter it adds to
_OPTIONS = {"-h": "hosts", "-u": "users", "-pe": "pes", "-P": "projects", "-q": "queues", "-l": "resources"}


def fresh():
    return {"hosts": [], "users": [], "pes": [], "projects": [], "queues": [], "resources": [], "xml": False}


def parse_args(argv, opts=None):
    """The options of ``argv`` added to ``opts`` (lists grow, as Grid Engine adds each
    -u, -q ... list to the ones already read)."""
    if opts is None:
        opts = fresh()
    words = list(argv)
    while words:
        word = words.pop(0)
        if word == "-help":
            opts["help"] = True
        elif word == "-xml":
            opts["xml"] = True
        elif word in _OPTIONS:
            if not words:
                raise UsageError(f"no argument given for option {word}")
            # a list: the next word, then every further word up to the next option, each
            # comma- or blank-separated, as Grid Engine's string lists are read
            given = [words.pop(0)]
            while words and not words[0].startswith("-"):
                given.append(words.pop(0))
            names = split_list(",".join(given))
            if not names or any(not part.strip() for g in given for part in g.split(",")):
                raise UsageError(f"invalid argument for option {word}")
            opts[_OPTIONS[word]] += [n.partition("=")[0] if word == "-l" else n for n in names]
        else:
            raise UsageError(f'invalid option argument "{word}"')
    return opts


def default_options():
    """The options of the cell's ``sge_qquota`` file, then of ``~/.sge_qquota`` (the
    password database's home), each file read on its own: a list option's words end
    with its file."""
    from gridtools import cell
    from gridtools.cli.sge.tokens import read_option_file, read_user_option_file
    opts = parse_args(read_option_file(cell.etc("sge_qquota")))
    return parse_args(read_user_option_file(".sge_qquota"), opts)


def _rows(opts):
    from gridtools.cli.sge import jobsel, qstatus, verify
    from gridtools.sched import inputs, rqs
    from gridtools.spool import config
    conf = config.load()
    snap = verify.cell_snapshot(conf, running=verify.occupation(qstatus.load()), quotas=True)
    users = opts["users"] or [jobsel.me()]
    lists = {u: inputs.userlists_of(conf, u, "") for u in users if u != "*"}
    # -l names the limits to show (by name or shortcut); a name no limit has shows nothing
    resources = set(opts["resources"]) if opts["resources"] else None
    return rqs.quota_rows(snap, users=users, projects=opts["projects"] or ("*",),
                          pes=opts["pes"] or ("*",), queues=opts["queues"] or ("*",),
                          hosts=opts["hosts"] or ("*",), resources=resources, userlists=lists)


def _amount(row, value, limit=False):
    """A used amount or limit in the complex's form (``2.000G``, ``4``); a limit worked out
    per host is a whole number."""
    from gridtools.cli.sge import loadvalues
    if limit and row.dynamic:
        return str(int(value))
    return loadvalues.typed_value(row.kind, value)


def limit_text(row):
    """``slots=5/20``, ``memc=2.000G/3.000G`` (``arch=lx-amd64`` for a limit that counts nothing)."""
    if row.used is None:
        return f"{row.resource}={row.limit}"
    return f"{row.resource}={_amount(row, row.used)}/{_amount(row, row.limit, True)}"


def _written(flt):
    """A filter as written in the rule: ``*``, ``{*}``, ``!p1``, ``{@linux,!h3}``."""
    text = ",".join([*flt.include, *("!" + n for n in flt.exclude)])
    return "{" + text + "}" if flt.expand else text


def filter_text(row):
    """The filter column: each filter of the rule (the name counted for an expanded one),
    "-" for a rule without filters."""
    return " ".join(f"{word} {value if isinstance(value, str) else _written(value)}"
                    for word, value in row.filters) or "-"


def text(rows):
    """The table; its header comes with the first row (nothing at all without rows)."""
    if not rows:
        return ""
    return HEADER + "".join(f"{r.rule:<18} {limit_text(r)[:20]:<20} {filter_text(r)}\n" for r in rows)


def _attr(value):
    from xml.sax.saxutils import escape
    return "'" + escape(str(value), {"'": "&apos;"}) + "'"


def _xml_filters(row):
    from xml.sax.saxutils import escape
    out = []
    for word, value in row.filters:
        if isinstance(value, str):
            out.append(f"   <{word}>{escape(value)}</{word}>")
            continue
        out += [f"   <{word}>{escape(name)}</{word}>" for name in value.include]
        out += [f"   <x{word}>{escape(name)}</x{word}>" for name in value.exclude]
    return out


def xml(rows):
    out = ["<?xml version='1.0'?>",
           '<qquota_result xmlns="http://arc.liv.ac.uk/repos/darcs/sge/source/source/dist/util/'
           'resources/schemas/qquota/qquota.xsd">']
    for row in rows:
        out.append(f" <qquota_rule name={_attr(row.rule)}>")
        out += _xml_filters(row)
        if row.used is None:
            out.append(f"   <limit resource={_attr(row.resource)} limit={_attr(row.limit)}/>")
        else:
            out.append(f"   <limit resource={_attr(row.resource)} limit={_attr(_amount(row, row.limit, True))} "
                       f"value={_attr(_amount(row, row.used))}/>")
        out.append(" </qquota_rule>")
    out.append("</qquota_result>")
    return "\n".join(out) + "\n"


def main(argv, prog="qquota"):
    try:
        opts = parse_args(argv, default_options())
        if opts.get("help"):
            # -help, wherever it is, once every option is known good
            sys.stdout.write(USAGE)
            return 0
        rows = _rows(opts)
    except UsageError as exc:
        sys.stderr.write(f"{USAGE}error: {exc}\n")
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    sys.stdout.write(xml(rows) if opts["xml"] else text(rows))
    return 0
