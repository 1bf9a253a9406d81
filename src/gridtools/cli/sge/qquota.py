"""qquota: the resource quota limits in use, and the static ones.

For every enabled rule of the cell's resource quota sets that applies to
the names asked for (the calling user unless ``-u`` says otherwise), one
line per counter in use (``slots=2/100``) and one per limit that counts
nothing (``arch=lx-amd64``), with the rule's effective filter. What is in
use comes from the tasks the dispatcher last published as running, counted
by the same code the scheduler uses (``sched.rqs``).
"""

import sys

from gridtools.errors import GridError, UsageError

USAGE = """usage: qquota [options]
   [-help]                    print this help
   [-h wc_host|wc_hostgroup]  display only selected host
   [-l resource_attributes]   request the given resources
   [-u wc_user]               display only selected users
   [-pe wc_pe_name]           display only selected parallel environment
   [-P wc_project]            display only selected projects
   [-q wc_cqueue]             display only selected queues
   [-xml]                     display the information in XML-Format
"""
HEADER = "resource quota rule limit                filter\n" + "-" * 80 + "\n"
#: option -> the filter it adds to
_OPTIONS = {"-h": "hosts", "-u": "users", "-pe": "pes", "-P": "projects", "-q": "queues", "-l": "resources"}


def parse_args(argv):
    opts = {"hosts": [], "users": [], "pes": [], "projects": [], "queues": [], "resources": [], "xml": False}
    words = list(argv)
    while words:
        word = words.pop(0)
        if word == "-help":
            sys.stdout.write(USAGE)
            raise SystemExit(0)
        if word == "-xml":
            opts["xml"] = True
        elif word in _OPTIONS:
            if not words:
                raise UsageError(f"error: no argument given for option {word}")
            names = [n.strip() for n in words.pop(0).split(",")]
            if not all(names):
                raise UsageError(f"error: invalid argument for option {word}")
            opts[_OPTIONS[word]] += [n.partition("=")[0] if word == "-l" else n for n in names]
        else:
            raise UsageError(f'error: ERROR! invalid option argument "{word}"')
    return opts


def _rows(opts):
    from gridtools.cli.sge import jobsel, qstatus, verify
    from gridtools.sched import inputs, rqs
    from gridtools.spool import config
    conf = config.load()
    snap = verify.cell_snapshot(conf, running=verify.occupation(qstatus.load()), quotas=True)
    users = opts["users"] or [jobsel.me()]
    lists = {u: inputs.userlists_of(conf, u, "") for u in users if u != "*"}
    resources = None
    if opts["resources"]:
        table = snap.complexes
        unknown = [r for r in opts["resources"] if r not in table]
        if unknown:
            raise GridError(f'error: unknown resource "{unknown[0]}"')
        resources = set(opts["resources"])
    return rqs.quota_rows(snap, users=users, projects=opts["projects"] or ("*",),
                          pes=opts["pes"] or ("*",), queues=opts["queues"] or ("*",),
                          hosts=opts["hosts"] or ("*",), resources=resources, userlists=lists)


def text(rows):
    return HEADER + "".join(f"{r.rule:<18} {r.limit_text:<20} {r.filter_text}\n" for r in rows)


def _attr(value):
    from xml.sax.saxutils import escape
    return "'" + escape(str(value), {"'": "&apos;"}) + "'"


def xml(rows):
    from xml.sax.saxutils import escape
    out = ["<?xml version='1.0'?>",
           '<qquota_result xmlns="http://arc.liv.ac.uk/repos/darcs/sge/source/source/dist/util/'
           'resources/schemas/qquota/qquota.xsd">']
    for row in rows:
        out.append(f" <qquota_rule name={_attr(row.rule)}>")
        for word, value in row.filters:
            out.append(f"   <{word}>{escape(value)}</{word}>")
        if row.used is None:
            out.append(f"   <limit resource={_attr(row.resource)} limit={_attr(row.limit)}/>")
        else:
            used, limit = row.limit_text.split("=", 1)[1].split("/")
            out.append(f"   <limit resource={_attr(row.resource)} limit={_attr(limit)} "
                       f"value={_attr(used)}/>")
        out.append(" </qquota_rule>")
    out.append("</qquota_result>")
    return "\n".join(out) + "\n"


def main(argv, prog="qquota"):
    try:
        opts = parse_args(argv)
        rows = _rows(opts)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n{USAGE}")
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    sys.stdout.write(xml(rows) if opts["xml"] else text(rows))
    return 0
