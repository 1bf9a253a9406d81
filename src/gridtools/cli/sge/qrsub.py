"""qrsub: request an advance reservation (Grid Engine dialect).

Options come, lowest precedence first, from the cell's ``etc/sge_ar_request``,
``~/.sge_ar_request`` and the command line. Names the reservation refers to
(queues, PE, checkpointing environment, resources) are checked here with
qsub's messages; the daemon decides the rest (who may reserve, which slots)
and its answer is printed as it comes. The reservation's id is allocated
here, from its own sequence.
"""

import sys

from gridtools import cell
from gridtools.cli.sge import options
from gridtools.cli.sge.tokens import read_option_file, read_user_option_file, split_list
from gridtools.errors import GridError, InputError, UsageError
from gridtools.formats.safetext import output_is_the_result

HELP = """SGE 8.1.9
usage: qrsub [options]
   [-a date_time]                           request a start time
   [-astnode node_shares_list]              add sharetree node(s)
   [-A account_string]                      account string in accounting record
   [-d time]                                duration of time window
   [-dul listname_list]                     delete userset list(s) completely
   [-e date_time]                           request an end time
   [-help]                                  print this help
   [-l resource_list]                       request the given resources
   [-M mail_list]                           notify these e-mail addresses
   [-m mail_options]                        define mail notification events
   [-masterq wc_queue_list]                 bind master task to queue(s)
   [-N name]                                specify job name
   [-now y[es]|n[o]]                        consider only interactive queues
   [-pe wc_pe_name slot_range]              request slot range for parallel jobs
   [-q wc_queue_list]                       print information on given queue
   [-u user_list]                           specify a list of users
                                            (not allowed in combination with job_task_list)
   [-explain]                               show reason for error state

account_string          account_name
date_time               [[CC]YY]MMDDhhmm[.SS]
listname_list           listname[,listname,...]
mail_address            username[@host]
mail_list               mail_address[,mail_address,...]
mail_options            `e' `b' `a' `n' (end, begin, error, no)
node_path               [/]node_name[[/.]node_name...]
node_shares_list        node_path=shares[,node_path=shares,...]
resource_list           resource[=value][,resource[=value],...]
slot_range              [n[-m]|[-]m] - n,m > 0
user_list               user[,user,...]
wc_cqueue               wildcard expression matching a cluster queue
wc_host                 wildcard expression matching a host
wc_hostgroup            wildcard expression matching a hostgroup
wc_qinstance            wc_cqueue@wc_host
wc_qdomain              wc_cqueue@wc_hostgroup
wc_queue                wc_cqueue|wc_qdomain|wc_qinstance
wc_queue_list           wc_queue[,wc_queue,...]
time                    hours:minutes:seconds | seconds
"""


def fresh():
    """A reservation request with every field at its default."""
    return {"start": None, "end": None, "duration": None, "name": "", "account": "sge",
            "resources": {}, "queues": [], "masterq": [], "pe": None, "ckpt": "", "now": False,
            "users": [], "mail_options": "", "mail_list": [], "hard_error": False, "verify": "e"}


def _time(text):
    from gridtools.formats import values
    try:
        return values.parse_time(text)
    except GridError:
        raise UsageError(f'ERROR! Wrong time format "{text}" specified to -d option') from None


def _datetime(text):
    """-a and -e: Grid Engine's qrsub names -a in the refusal of either (its parser shares
    the -a message)."""
    return options.parse_datetime(text, opt="-a")


def _mail(req, text):
    opts = text.replace(",", "")
    if any(c not in "bean" for c in opts):
        raise InputError(f'invalid mail option "{text}": use b, e, a or n')
    req["mail_options"] = "" if "n" in opts else opts


def _verify(text):
    """-w: qrsub knows e and v only; n, p, w and anything else are refused alike."""
    if text not in ("e", "v"):
        raise UsageError(f'invalid option argument "-w {text}"')
    return text


def _set(key, conv=None):
    return lambda req, args: req.__setitem__(key, conv(args[0]) if conv else args[0])


# option -> (argument words, applier)
OPTIONS = {
    "-a": (1, _set("start", _datetime)),
    "-A": (1, _set("account")),
    "-ckpt": (1, _set("ckpt")),
    "-d": (1, _set("duration", _time)),
    "-e": (1, _set("end", _datetime)),
    "-he": (1, lambda req, args: req.__setitem__("hard_error", options.parse_yes_no("-he", args[0]))),
    "-l": (1, lambda req, args: req["resources"].update(options.parse_resource_list(args[0]))),
    "-m": (1, lambda req, args: _mail(req, args[0])),
    "-M": (1, _set("mail_list", split_list)),
    "-masterq": (1, lambda req, args: req["masterq"].extend(split_list(args[0]))),
    "-N": (1, _set("name", options.parse_job_name)),     # (qsub's rules, as Grid Engine's qrsub)
    "-now": (1, lambda req, args: req.__setitem__("now", options.parse_yes_no("-now", args[0]))),
    "-pe": (2, lambda req, args: req.__setitem__("pe", options.pe_request(args[0], args[1], "advance_reservation"))),
    "-q": (1, lambda req, args: req["queues"].extend(split_list(args[0]))),
    "-u": (1, lambda req, args: req["users"].extend(split_list(args[0]))),
    "-w": (1, _set("verify", _verify)),
}


def parse(words, req):
    """Apply option words to ``req``; every word must be an option or its argument."""
    i = 0
    while i < len(words):
        word = words[i]
        entry = OPTIONS.get(word)
        if entry is None:
            raise UsageError(f'invalid option argument "{word}"')
        nargs, apply = entry
        if i + nargs > len(words) - 1:
            raise UsageError(f'option "{word}" requires an argument')
        apply(req, words[i + 1:i + 1 + nargs])
        i += 1 + nargs
    return req


def default_words():
    """Options of the cell's and the user's sge_ar_request files."""
    words = read_option_file(cell.etc("sge_ar_request"))
    return words + read_user_option_file(".sge_ar_request")


class WindowRefused(InputError):
    """A window Grid Engine's ar_validate refuses: its sentence goes to stdout, as the
    qmaster's answer does."""


def window(req, now):
    """(start, end) of the request: -a (default now, in whole seconds as Grid Engine
    keeps it, so that -e alone gives the duration between the two shown), then -e or
    -a plus -d. Whether the start is in the past is the daemon's to judge, by its
    clock."""
    start = req["start"]
    end = req["end"]
    if req["duration"] == 0:            # (Grid Engine keeps a duration of 0 as none given)
        req["duration"] = None
    if end is None and req["duration"] is None:
        raise WindowRefused('missing value for "end time or duration" in advance reservation request')
    if start is None:
        start = end - req["duration"] if end is not None and req["duration"] is not None else int(now)
    if end is None:
        end = start + req["duration"]
    elif req["duration"] is not None and end - start != req["duration"]:
        raise WindowRefused("difference between end and start time does not correspond to duration")
    if end < start and req["start"] is not None:
        raise WindowRefused("start time is later than end time")
    if end <= start and req["start"] is not None:
        raise InputError("the end time of the advance reservation must be after its start time")
    return start, end


def check_users(req):
    """Every user of -u (``!user`` too; ``@userset`` entries aside) must be known to the
    system, as Grid Engine's qrsub looks each up before it sends the request."""
    import pwd
    for entry in req["users"]:
        name = entry[1:] if entry.startswith("!") else entry
        if name.startswith("@"):
            continue
        try:
            pwd.getpwnam(name)
        except (KeyError, ValueError):
            raise InputError(f"error: {name} is not known as user") from None


def check_names(req):
    """The queues, PE, checkpointing environment and resources named must exist."""
    from gridtools.cli.sge import submit
    probe = {"queues": {"hard": req["queues"], "soft": []}, "masterq": req["masterq"],
             "pe": req["pe"], "ckpt": req["ckpt"] or None, "project": None,
             "resources": {"hard": dict(req["resources"]), "soft": {}}}
    submit.check_request(probe, what="advance_reservation")
    table = submit.complex_table()
    for name in probe["resources"]["hard"]:
        if name not in table:
            raise submit.Rejected(f'unknown resource "{name}"')
    req["resources"] = probe["resources"]["hard"]


def main(argv, prog="qrsub"):
    """Every refusal before the daemon answers ends the command with status 1, as Grid
    Engine's qrsub ends on any error of its command line or request (its qmaster's
    answer alone may give another status)."""
    if "-help" in argv:
        output_is_the_result()
        sys.stdout.write(HELP)
        return 0
    try:
        return _run(argv)
    except NoOption:
        sys.stderr.write(f"{HELP}error: no option argument\n")
    except UsageError as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
    except WindowRefused as exc:
        sys.stdout.write(f"{exc}\n")
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
    return 1


class NoOption(Exception):
    """Neither the option files nor the command line give an option: the usage, then
    "error: no option argument"."""


def _run(argv):
    import time
    defaults = default_words()
    if not defaults and not argv:
        raise NoOption()
    req = parse(defaults, fresh())
    parse(list(argv), req)
    check_users(req)
    start, end = window(req, time.time())
    from gridtools.cli import cellinit
    cellinit.ensure_cell()
    check_names(req)
    from gridtools.cli.ask import ask
    from gridtools.spool import ids
    body = {k: v for k, v in req.items() if k not in ("start", "end", "duration")}
    body.update(start=start, end=end)
    if req["start"] is None and req["end"] is None:     # -d alone: it starts when the daemon takes it
        body.update(start=None, end=None, duration=req["duration"])
    elif req["start"] is None and req["duration"] is None:  # -e alone: from the daemon's now
        body.update(start=None)
    body["id"] = ids.allocate("ar")[0] if req["verify"] != "v" else 0
    return ask("ar_submit", body)
