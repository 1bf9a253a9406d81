"""qrstat: show advance reservations (Grid Engine dialect).

Reads the reservation store (``spool/ars``, readable by everyone). Without
``-u`` only the caller's reservations are listed; ``-u '*'`` lists all.
``-ar ID[,ID...]`` prints the long form of each existing one (ids only, as Grid
Engine's ar_id_list; when none of them exists, it says so on stdout and ends with
status 1), ``-xml`` both as XML,
``-explain`` adds to the table why a reservation is in error (the long form
and ``-ar -xml`` always say it, after the duration, as Grid Engine does).
"""

import sys
import time

from gridtools.cli.sge import arlist
from gridtools.cli.sge.tokens import split_list
from gridtools.cli.sge.xmlout import escape, escape_attr
from gridtools.errors import GridError, UsageError

HELP = """SGE 8.1.9
usage: qrstat [options]
   [-he  y[es]|n[o]]                        enable/disable hard error handling
   [-help]                                  print this help
   [-terse]                                 tersed output, print only the job-id
   [-u user_list]                           all advance reservations of users specified in list
   [-xml]                                   display the information in XML-Format

user_list               user[,user,...]
"""

XSD = "http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qrstat/qrstat.xsd"
HEADER = ("ar-id   name       owner        state start at             end at               duration")
RULE = "-" * 90
LONG_RULE = "-" * 80


def parse_args(argv):
    opts = {"users": None, "ids": None, "xml": False, "explain": False, "terse": False}
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in ("-xml", "-explain", "-terse"):
            opts[word[1:]] = True
        elif word in ("-u", "-ar", "-he"):
            if i + 1 >= len(argv):
                raise UsageError(f'option "{word}" requires an argument')
            i += 1
            if word == "-u":
                opts["users"] = (opts["users"] or []) + split_list(argv[i])
            elif word == "-ar":
                opts["ids"] = (opts["ids"] or []) + [_ar_id(t) for t in argv[i].split(",") if t]
        else:
            raise UsageError(f'invalid option argument "{word}"')
        i += 1
    return opts


class BadId(GridError):
    """An ar_id_list item that is no unsigned number: Grid Engine's qrstat logs it as an
    error (``error: ERROR! invalid id, must be an unsigned integer``) and ends with 1."""


def _ar_id(text):
    """An item of an ar_id_list: an unsigned number (as Grid Engine reads it, a name or a
    pattern is refused)."""
    if not text.isascii() or not text.isdigit():
        raise BadId("error: ERROR! invalid id, must be an unsigned integer")
    return int(text)


def duration(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def stamp(epoch):
    return time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(epoch))


def iso(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(epoch))


def table_lines(ars, now, explain=False):
    """The table; with ``-explain`` each reservation's messages follow its row, indented."""
    if not ars:
        return []
    lines = [HEADER, RULE]
    for ar in ars:
        lines.append(f"{ar['id']:7d} {str(ar.get('name') or '')[:10]:<10} {str(ar['owner'])[:12]:<12} "
                     f"{arlist.letter(ar, now):<5} {stamp(ar['start']):<20} {stamp(ar['end']):<20} "
                     f"{duration(ar['end'] - ar['start'])}")
        if explain:
            lines += [f"       {m}" for m in arlist.messages(ar)]
    return lines


def _granted_text(ar):
    return ",".join(f"{q}@{h}={n}" for q, h, n in ar.get("granted") or ())


def _field(label, value):
    return f"{label:<30} {value}"


def long_lines(ar, now):
    """The ``-ar`` form of one reservation (its messages, if any, after the duration)."""
    out = [LONG_RULE, _field("id", ar["id"])]
    if ar.get("name"):
        out.append(_field("name", ar["name"]))
    out += [_field("owner", ar["owner"]), _field("state", arlist.letter(ar, now)),
            _field("start_time", stamp(ar["start"])), _field("end_time", stamp(ar["end"])),
            _field("duration", duration(ar["end"] - ar["start"]))]
    out += [_field("message", m) for m in arlist.messages(ar)]
    out += [_field("submission_time", stamp(ar["submit_time"])),
            _field("group", ar.get("group") or ""), _field("account", ar.get("account") or "sge")]
    if ar.get("resources"):
        out.append(_field("resource_list", ",".join(f"{k}={v}" for k, v in ar["resources"].items())))
    if ar.get("hard_error"):
        out.append(_field("error_handling", "true"))
    out.append(_field("granted_slots_list", _granted_text(ar)))
    for label, key in (("checkpoint_name", "ckpt"), ("mail_options", "mail_options")):
        if ar.get(key):
            out.append(_field(label, ar[key]))
    if ar.get("mail_list"):
        out.append(_field("mail_list", ",".join(ar["mail_list"])))
    if ar.get("pe"):
        out.append(_field("granted_parallel_environment", f"{ar['pe']} slots {arlist.pe_range_text(ar)}"))
    users = [u for u in ar.get("users") or () if not u.startswith("!")]
    xusers = [u[1:] for u in ar.get("users") or () if u.startswith("!")]
    if users:
        out.append(_field("acl_list", ",".join(users)))
    if xusers:
        out.append(_field("xacl_list", ",".join(xusers)))
    return out


def unknown_text(ids, xml):
    """Grid Engine's answer (stdout) when none of the ids given to ``-ar`` exists."""
    if xml:
        return ("<?xml version='1.0'?>\n" f'<qrstat xmlns:xsd="{XSD}">\n'
                + "".join(f"   <ar_unknown>\n      <id>{i}</id>\n   </ar_unknown>\n" for i in ids)
                + "</qrstat>\n")
    return "Following advance reservations do not exist:\n" + ", ".join(map(str, ids)) + "\n"


def xml_text(ars, now, detailed, explain):
    """The -xml form: the summary fields, the messages after the duration (always with
    ``-ar``, else with ``-explain``), then with ``-ar`` the details."""
    lines = ["<?xml version='1.0'?>", f'<qrstat xmlns:xsd="{XSD}">']
    for ar in ars:
        lines.append("   <ar_summary>")
        body = [("id", ar["id"]), ("name", ar.get("name") or ""), ("owner", ar["owner"]),
                ("state", arlist.letter(ar, now)), ("start_time", iso(ar["start"])),
                ("end_time", iso(ar["end"])), ("duration", duration(ar["end"] - ar["start"]))]
        if detailed or explain:
            body += [("message", m) for m in arlist.messages(ar)]
        if detailed:
            body += [("submission_time", iso(ar["submit_time"])), ("group", ar.get("group") or ""),
                     ("account", ar.get("account") or "sge")]
        lines += [f"      <{tag}>{escape(value)}</{tag}>" for tag, value in body]
        if detailed:
            lines += _xml_details(ar)
        lines.append("   </ar_summary>")
    lines.append("</qrstat>")
    return "\n".join(lines) + "\n"


def _xml_details(ar):
    lines = ["      <error_handling>true</error_handling>"] if ar.get("hard_error") else []
    lines.append("      <granted_slots_list>")
    lines += [f'         <granted_slots  queue_instance="{escape_attr(f"{q}@{h}")}" slots="{n}"/>'
              for q, h, n in ar.get("granted") or ()]
    lines.append("      </granted_slots_list>")
    if ar.get("pe"):
        lines += ["      <granted_parallel_environment>",
                  f"         <parallel_environment>{escape(ar['pe'])}</parallel_environment>",
                  f"         <slots>{arlist.pe_range_text(ar)}</slots>",
                  "      </granted_parallel_environment>"]
    return lines


def main(argv, prog="qrstat"):
    if "-help" in argv:
        sys.stdout.write(HELP)
        return 0
    try:
        opts = parse_args(argv)
        return show(opts)
    except UsageError as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return 1                # (Grid Engine's qrstat ends every error with status 1)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def show(opts):
    now = time.time()
    ars = arlist.load()
    if opts["ids"] is not None:
        # the existing ones, in the order of the store; the ids that do not exist are
        # named only when none does (Grid Engine's qrstat_print)
        wanted = set(opts["ids"])
        chosen = [a for i, a in sorted(ars.items()) if i in wanted]
        if not chosen:
            sys.stdout.write(unknown_text(opts["ids"], opts["xml"]))
            return 1
    else:
        users = opts["users"] if opts["users"] is not None else [arlist.me()]
        chosen = [a for _i, a in sorted(ars.items()) if arlist.owned_by(a, users)]
    if opts["xml"]:
        sys.stdout.write(xml_text(chosen, now, opts["ids"] is not None, opts["explain"]))
    elif opts["terse"]:
        sys.stdout.write("".join(f"{a['id']}\n" for a in chosen))
    elif opts["ids"] is not None:
        sys.stdout.write("".join(line + "\n" for a in chosen for line in long_lines(a, now)))
    else:
        sys.stdout.write("".join(line + "\n" for line in table_lines(chosen, now, opts["explain"])))
    return 0
