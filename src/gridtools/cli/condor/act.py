"""condor_rm, condor_hold, condor_release and condor_vacate_job: acting on jobs
(HTCondor dialect).

    condor_rm         [-forcex] [-reason TEXT] [-constraint EXPR] [-all] [-name SCHEDD]
                      {cluster | cluster.proc | user} ...
    condor_hold       [-reason TEXT] [-subcode N] ...
    condor_release    [-reason TEXT] ...
    condor_vacate_job [-fast] ...

Jobs are named as condor_q names them; a Grid Engine job is a cluster too.
A word that is neither ``cluster`` nor ``cluster.proc`` (digits, one dot
between digits) names a user, as HTCondor's tools read it.
The daemon does the work (request kinds condor_rm, condor_hold and
condor_vacate_job, see daemon.condorreq) and answers what it did to each proc; the messages are
HTCondor's: one line per ``cluster.proc`` named, one sentence for each
other kind of selection (``All jobs in cluster 23 have been marked for
removal``). The ids' lines come in the order the ids were given, after an
empty line on stderr when none was acted on. The exit code is 1 when something
named could not be acted on. -name and -pool find the schedd as HTCondor's tool
does (``locate``): only the cell's host names a schedd or a collector.
A caller the WRITE level at the SCHEDD does not allow is refused before any
job is selected (``check_write``), whatever the selection.
"""

import sys
from dataclasses import dataclass

from gridtools import cell
from gridtools.cli.condor import access, queue as Q
from gridtools.errors import GridError, UsageError, lines


@dataclass(frozen=True)
class Action:
    """The words and the request of one command."""
    verb: str                 # "remove", "hold", "release"
    past: str                 # what "Job C.P ..." says when done
    kind: str                 # request kind
    already: str = ""         # "Job C.P ..." when it was done already
    bad: str = ""             # "Job C.P ..." when the state does not allow it
    deny: str = ""            # "Permission denied to ... job C.P" (the verb when not given)


REMOVE = Action("remove", "marked for removal", "condor_rm", "already marked for removal")
FORCEX = Action("remove", "removed locally (remote state unknown)", "condor_rm",
                bad="not in `X' state to be forcibly removed", deny="force removal of")
HOLD = Action("hold", "held", "condor_hold", "already held")
RELEASE = Action("release", "released", "condor_hold", bad="not held to be released")
VACATE = Action("vacate", "vacated", "condor_vacate_job", bad="not running to be vacated")
VACATE_FAST = Action("fast-vacate", "fast-vacated", "condor_vacate_job", bad="not running to be fast-vacated")
ACTIONS = {"condor_rm": REMOVE, "condor_hold": HOLD, "condor_release": RELEASE, "condor_vacate_job": VACATE}

USAGE = """\
Usage: {prog} [options] [constraints]
 where [options] is zero or more of:
  -help               Display this message and exit
  -version            Display version information and exit
  -long               Display full result classad
  -totals             Display success/failure totals
  -debug              Display debugging information while running
  -name schedd_name   Connect to the given schedd
  -pool hostname      Use the given central manager to find daemons
  -addr <ip:port>     Connect directly to the given "sinful string"
{extra} and where [constraints] is one of:
  cluster.proc        {verb} the given job
  cluster             {verb} the given cluster of jobs
  user                {verb} all jobs owned by user
  -constraint expr    {verb} all jobs matching the boolean expression
  -all                {verb} all jobs (cannot be used with other constraints)
"""

#: each tool's own lines of its usage
_EXTRA = {
    "condor_rm": "  -reason reason      Use the given RemoveReason\n"
                 "  -forcex             Force the immediate local removal of jobs in the X state\n"
                 "                      (only affects jobs already being removed)\n",
    "condor_hold": "  -reason reason      Use the given HoldReason\n"
                   "  -subcode number     Set HoldReasonSubCode\n",
    "condor_release": "  -reason reason      Use the given ReleaseReason\n",
    "condor_vacate_job": "  -fast               Use a fast vacate (hardkill)\n",
}


class Options:
    def __init__(self):
        self.selection = Q.Selection()
        self.words = []            # what was named, in order, for the messages
        self.all = False
        self.forcex = False
        self.fast = False          # condor_vacate_job -fast
        self.reason = None
        self.subcode = None
        self.schedd = None
        self.pool = None
        self.addr = False          # -addr given: the schedd is the one it reaches
        self.help = False
        self.version = False
        self.totals = False
        self.long = False          # -long: the result ad
        self.bad_words = False     # an argument refused with its own line (cluster 0)


def _is(arg, word, least=1):
    name = arg[1:]
    return arg.startswith("-") and least <= len(name) <= len(word) and word.startswith(name)


def parse_args(argv, prog):
    opts = Options()
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("-"):
            job = _job_word(arg)
            if job and _cluster_zero(arg):
                sys.stderr.write(f"Invalid cluster # from {arg}.\n")
                opts.bad_words = True
                continue
            opts.selection.add_word(arg, owners=not job)     # (any other word: a user name)
            opts.words.append(arg)
        elif arg.partition(":")[0] != "-" and _is(arg.partition(":")[0], "debug"):
            continue                       # (-debug[:categories]: there is no debugging log to show)
        elif _is(arg, "long"):
            opts.long = True
        elif _is(arg, "totals", 3):
            opts.totals = True
        elif _is(arg, "help"):
            opts.help = True
            break                          # (HTCondor's stops at -help)
        elif _is(arg, "all"):
            opts.all = True
        elif _is(arg, "forcex", 1 if prog == "condor_rm" else 2):
            if prog != "condor_rm":
                raise UsageError(lines("-forcex is only valid with condor_rm", *usage(prog).splitlines()), 1)
            opts.forcex = True
        elif _is(arg, "fast", 1 if prog == "condor_vacate_job" else 2):
            if prog != "condor_vacate_job":
                raise UsageError(lines("-fast is only valid with condor_vacate_job", *usage(prog).splitlines()), 1)
            opts.fast = True
        elif _is(arg, "constraint"):
            opts.selection.constraints.append(_value(args, arg, prog))
        elif _is(arg, "reason"):
            opts.reason = _value(args, arg, prog, dash_ok=True)
        elif _is(arg, "subcode"):          # (read by every mode, as HTCondor's; only a hold sets it)
            opts.subcode = _subcode(_value(args, arg, prog, dash_ok=True))
        elif _is(arg, "name"):
            opts.schedd = _value(args, arg, prog, dash_ok=True)
            if "@" not in opts.schedd and not cell.is_this_host(opts.schedd):
                raise GridError(f"{prog}: unknown host {opts.schedd}", 1)
        elif _is(arg, "pool"):
            opts.pool = _value(args, arg, prog, dash_ok=True)
            host = pool_host(opts.pool)
            if not (cell.is_this_host(host) or cell.is_ip_address(host)):
                raise GridError(f"{prog}: unknown host {host}", 1)
        elif _is(arg, "addr", 2):
            _address(_value(args, arg, prog), prog)
            opts.addr = True
        elif _is(arg, "version"):
            opts.version = True
            break                          # (HTCondor's stops at -version)
        else:
            raise UsageError(lines(f"Unrecognized option: {arg}", *usage(prog).splitlines()), 1)
    if opts.all and (opts.words or opts.selection.constraints):
        raise UsageError(f"{prog}: can't mix -all with other constraints", 1)
    return opts


def _usercluster(words):
    """The words that name clusters and users, in their order (a ``cluster.proc`` is
    acted on by its id, not by a constraint)."""
    return [w for w in words if not (_job_word(w) and "." in w)]


def _ordered_ids(words):
    """The ``cluster.proc`` words as (cluster, proc), in the order they were given."""
    ids = []
    for word in words:
        if _job_word(word) and "." in word:
            head, _dot, tail = word.partition(".")
            ids.append((int(head), int(tail)))
    return ids


# ---------------------------------------------------------------- -name and -pool

def pool_host(text):
    """The host a -pool value names: ``host``, ``host:port`` or ``<host:port?...>``."""
    inner = text.strip()
    if inner.startswith("<"):
        inner = inner[1:].partition(">")[0]
    inner = inner.partition("?")[0]
    if inner.startswith("["):                  # ([v6]:port)
        return inner[1:].partition("]")[0]
    head, colon, port = inner.rpartition(":")
    return head if colon and port.isdigit() and head.count(":") == 0 else inner


def schedd_named(name):
    """True when the collector knows a schedd named ``name``: the cell's schedd is
    named by its host (``condor_status -schedd``), and a name without ``@`` is a host
    name, resolved to the host's full name; one with ``@`` is compared whole, and so
    names no schedd of the cell."""
    return "@" not in name and cell.is_this_host(name)


def locate(opts, prog):
    """Find the schedd as HTCondor's tool does once its arguments are read: -addr
    reaches it directly; -name is looked up in the collector (the cell's schedd only);
    -pool alone leaves the local schedd."""
    if opts.addr or not opts.schedd:
        return
    if opts.pool is not None:
        if not (cell.is_this_host(pool_host(opts.pool)) and schedd_named(opts.schedd)):
            raise GridError(f"{prog}: Can't find address for schedd {opts.schedd}", 1)
    elif not schedd_named(opts.schedd):
        host = opts.schedd.rpartition("@")[2]
        raise GridError(f"Error: cannot get address of schedd {host}", 1)


def _digits(text):
    return all(c in "0123456789" for c in text)


def _job_word(word):
    """True when ``word`` is a job id: digits, or digits, a dot and digits (HTCondor's
    str_isint and strict str_isreal); any other word names a user."""
    head, dot, tail = word.partition(".")
    return _digits(head) and (not dot or (head != "" and tail != "" and _digits(tail)))


def _cluster_zero(word):
    """``0`` or ``0.N``: HTCondor numbers clusters from 1 and refuses the argument."""
    head = word.partition(".")[0]
    return not head or int(head) == 0


def _value(args, arg, prog, dash_ok=False):
    if not args or (args[0].startswith("-") and not dash_ok):
        raise UsageError(f"{prog}: {arg} requires another argument", 1)
    return args.pop(0)


def _address(text, prog):
    """-addr's value: a sinful string (``<host:port>``, as HTCondor's checks it); the one
    schedd of the cell is the one any address reaches."""
    inner = text[1:-1] if text.startswith("<") and text.endswith(">") else ""
    host, colon, port = inner.partition("?")[0].rpartition(":")
    if not (host and colon and port.isdigit()):
        raise UsageError(lines(f'{prog}: "{text}" is not a valid address',
                               "Should be of the form <ip.address.here:port>",
                               "For example: <123.456.789.123:6789>"), 1)


def _subcode(text):
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"Invalid -subcode {text}!", 1) from None


def usage(prog):
    return USAGE.format(prog=prog, verb=ACTIONS[prog].verb, extra=_EXTRA[prog])


# ---------------------------------------------------------------- main

def main(argv, prog="condor_rm"):
    try:
        opts = parse_args(argv, prog)
        if opts.version:
            from gridtools.formats.condor.jobad import VERSION_TEXT
            sys.stdout.write(VERSION_TEXT)
            return 0
        if opts.help or not (opts.words or opts.all or opts.selection.constraints):
            if not opts.help:
                sys.stderr.write("You did not specify any jobs\n")
            sys.stderr.write(usage(prog))           # (HTCondor's usage goes to stderr, -help's too)
            return 0 if opts.help else 1
        action = FORCEX if opts.forcex and prog == "condor_rm" else \
            VACATE_FAST if opts.fast and prog == "condor_vacate_job" else ACTIONS[prog]
        return run(opts, prog, action)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def _ranges(numbers):
    from gridtools.spool.rows import ranges
    return ranges(sorted(numbers))


def _expand(runs):
    return {n for first, last, step in runs or () for n in range(first, last + 1, step)}


def run(opts, prog, action):
    """Act on the ids named (a line for each, in their order), then on the clusters,
    users and constraints as one constraint; 1 when something named could not be
    acted on or a word was refused."""
    from gridtools.cli.status import load
    locate(opts, prog)
    check_write()
    snap = load()
    user = Q.me()
    code = opts.bad_words
    none_acted = False             # (HTCondor's tool's had_error: a word refused, no id acted on)
    sel = opts.selection
    if sel.ids:
        if sel.constraints:
            sys.stderr.write("Warning, -constraint is ignored for fully qualified job ids\n")
        failed, none_acted = _by_ids(snap, _ordered_ids(opts.words), action, opts, user, code)
        code |= failed
    if sel.clusters or sel.users or sel.constraints or opts.all:
        code |= _by_constraint(snap, opts, action, user, prog, code or none_acted)
    return int(code)


def check_write():
    """Refuse a caller the WRITE level at the SCHEDD does not allow, before any job is
    looked at (as the schedd refuses the connection): whatever the selection, the
    refusal is the one a request the daemon refused is answered with."""
    who = access.refused("WRITE", "SCHEDD")
    if who is not None:
        raise GridError(access.denied_line(who), 1)


def _payload(action, opts, targets):
    body = {"targets": targets}
    if action.kind == "condor_vacate_job":
        body["fast"] = action is VACATE_FAST
        return body                            # (a vacate has no reason)
    if action.kind == "condor_rm":
        body["force"] = action is FORCEX
    else:
        body["on"] = action is HOLD
        if opts.subcode is not None and action is HOLD:
            body["subcode"] = opts.subcode
    if opts.reason is not None:
        body["reason"] = opts.reason
    return body


def _send(action, opts, targets):
    if not targets:
        return []
    from gridtools.cli.ask import outcomes
    return outcomes(action.kind, _payload(action, opts, targets))


#: the most tasks a job may have (the task numbers a request may name)
_MOST_TASKS = 2 ** 31 - 1


def _by_ids(snap, ids, action, opts, user, failed=False):
    """``cluster.proc`` arguments: a line for each, in the order given (a job named
    twice has two). (any not acted on, none acted on): when none was, or a word was
    refused before, an empty line on stderr leads the lines (HTCondor's tool prints
    its error stack, which has nothing in it)."""
    known = snap.get("jobs") or {}
    wanted = {}
    for cluster, proc in ids:
        # (a larger proc is no proc: not found); -forcex asks also for a job that has just
        # left the queue, which the daemon may still count as removed (X)
        if (cluster in known or action is FORCEX) and proc < _MOST_TASKS:
            wanted.setdefault(cluster, set()).add(proc + 1)
    targets = [{"id": c, "tasks": _ranges(n)} for c, n in sorted(wanted.items())]
    answers = {a["id"]: a for a in _send(action, opts, targets)} if targets else {}
    results, counts = {}, dict.fromkeys(_TOTALS, 0)
    for cluster, proc in dict.fromkeys(ids):     # (the schedd answers each job once)
        if _beyond(known.get(cluster), proc):   # (no such proc: not found, whatever the action)
            line, kind = f"Job {cluster}.{proc} not found", "missing"
        else:
            line, kind = _id_line(answers.get(cluster), cluster, proc, action)
        results[(cluster, proc)] = (line, kind)
        counts[kind] += 1
    acted = counts["ok"] > 0
    if opts.long:                              # (the ad of results per job, as the schedd answers a list)
        codes = {key: _RESULT_CODES[kind] for key, (_line, kind) in results.items()}
        sys.stdout.write(_result_ad(codes, action, acted, snap, user))
    elif opts.totals:
        sys.stdout.write(_totals_line(counts))
    if failed or not acted:
        sys.stderr.write("\n")
    for key in ids:
        line, kind = results[key]
        (sys.stdout if kind == "ok" else sys.stderr).write(line + "\n")
    return counts["ok"] < len(results), not acted


#: the outcomes -totals counts, in the order of its line (and "limit", which it leaves out)
_TOTALS = ("ok", "failed", "missing", "bad", "already", "denied", "limit")


#: HTCondor's action_result_t number of each outcome (AR_ERROR, AR_SUCCESS, AR_NOT_FOUND,
#: AR_BAD_STATUS, AR_ALREADY_DONE, AR_PERMISSION_DENIED, AR_LIMIT_EXCEEDED)
_RESULT_CODES = {"failed": 0, "ok": 1, "missing": 2, "bad": 3, "already": 4, "denied": 5, "limit": 6}
#: the line of a release SYSTEM_MAX_RELEASES refuses (AR_LIMIT_EXCEEDED)
LIMIT_LINE = "Job {jid} cannot be released again, has reached SYSTEM_PERIODIC_RELEASES limit"
#: HTCondor's JobAction number of each action
_JOB_ACTIONS = {"hold": 1, "release": 2, "remove": 3, "vacate": 5, "fast-vacate": 6}


def _result_ad(codes, action, acted, snap, user, totals=None):
    """-long: the ad the schedd answers an action with, in long form and a blank line:
    ``job_C_P`` = the result of each job (or, for -totals of a constraint,
    ``result_total_N`` = how many had result N), then ActionResultType (1: per job,
    2: totals), JobAction, ActionResult (1 when any job was acted on), TotalJobAds (the
    jobs in the queue) and IsQueueSuperUser."""
    if totals is None:
        body = [f"job_{c}_{p} = {code}" for (c, p), code in sorted(codes.items())]
    else:
        body = [f"result_total_{code} = {totals.get(kind, 0)}"
                for kind, code in sorted(_RESULT_CODES.items(), key=lambda item: item[1])]
    number = 4 if action is FORCEX else _JOB_ACTIONS[action.verb]
    superuser = "true" if user == "root" or _is_operator(user) else "false"
    body += [f"ActionResultType = {1 if totals is None else 2}", f"JobAction = {number}",
             f"ActionResult = {1 if acted else 0}", f"TotalJobAds = {len(Q.procs(snap))}",
             f"IsQueueSuperUser = {superuser}"]
    return "".join(line + "\n" for line in body) + "\n"


def _totals_line(counts):
    """HTCondor's -totals line (rm.cpp: the schedd's JobActionResults)."""
    return ("{ok} Succeeded, {failed} Failed, {missing} Not Found, {bad} Bad Status, "
            "{already} Already Done, {denied} Permission Denied\n").format(**counts)


def _beyond(job, proc):
    """True when ``job`` (its published facts) has no proc ``proc``: its task range does
    not hold the task."""
    if not job:
        return False
    tasks = job.get("tasks")
    if tasks is None and not job.get("array"):
        tasks = [1, 1, 1]                       # (a job that is no array: proc 0 alone)
    if not (isinstance(tasks, list) and len(tasks) == 3 and all(type(n) is int for n in tasks)):
        return False
    first, last, step = tasks
    return not (first <= proc + 1 <= last and (proc + 1 - first) % max(step, 1) == 0)


def _id_line(answer, cluster, proc, action):
    """The line for one ``cluster.proc`` and what happened (one of ``_TOTALS``)."""
    jid, number = f"{cluster}.{proc}", proc + 1
    if answer is None or answer.get("missing") or number in _expand(answer.get("gone")):
        return f"Job {jid} not found", "missing"
    if answer.get("denied"):
        return f"Permission denied to {action.deny or action.verb} job {jid}", "denied"
    if number in _expand(answer.get("done")):
        return f"Job {jid} {action.past}", "ok"
    if number in _expand(answer.get("already")):
        return f"Job {jid} {action.already}", "already"
    if number in _expand(answer.get("limit")):
        return LIMIT_LINE.format(jid=jid), "limit"
    return f"Job {jid} {action.bad or 'not found'}", "missing" if not action.bad else "bad"


def _describe(opts, sel):
    """The words of a constraint sentence: "" (all jobs), " in cluster 23", ...: the
    clusters and users in the order they were named, after the -constraint
    expressions, as HTCondor's tool builds its constraint."""
    if opts.all:
        return ""
    words = _usercluster(opts.words)
    named = " || ".join(f'Owner == "{w}"' if not _job_word(w) else f"ClusterId == {int(w)}" for w in words)
    text = ""
    for n, extra in enumerate(sel.constraints):
        text = extra if n == 0 else f"({text}) && ({extra})" if n == 1 else f"{text} && ({extra})"
    if not text and len(words) == 1:
        return f' of user "{words[0]}"' if not _job_word(words[0]) else f" in cluster {int(words[0])}"
    if named:
        text = named if not text else f"({text}) && ({named})" if len(sel.constraints) == 1 \
            else f"{text} && ({named})"
    return f" matching constraint ({text})"


def _chosen(snap, opts, user):
    """The targets of a constraint selection: whole clusters, or the procs that match."""
    sel = opts.selection
    everyone = Q.procs(snap)
    operator = user == "root" or _is_operator(user)
    pool = [p for p in everyone if (opts.all and (operator or p.owner == user))
            or (not opts.all and (p.cluster in sel.clusters or p.owner in sel.users
                                  or not (sel.clusters or sel.users)))]
    if not opts.all and not (sel.clusters or sel.users):
        pool = [p for p in pool if operator or p.owner == user]
    if sel.constraints:
        exprs = Q.compile_constraints(sel.constraints)
        source = Q.AdSource(snap, user)
        pool = [p for p in pool if Q.matches_all(source.ad(p), exprs)]
        by_cluster = {}
        for p in pool:
            by_cluster.setdefault(p.cluster, set()).add(p.number)
        return [{"id": c, "tasks": _ranges(n)} for c, n in sorted(by_cluster.items())]
    return [{"id": c, "tasks": None} for c in sorted({p.cluster for p in pool})]


def _constraint_results(snap, targets, answers):
    """What happened to each job a constraint selection matched: (cluster, proc) -> one
    of ``_TOTALS``."""
    procs = {}
    for p in Q.procs(snap):
        procs.setdefault(p.cluster, set()).add(p.number)
    asked = {t["id"]: _expand(t["tasks"]) if t.get("tasks") else procs.get(t["id"], set()) for t in targets}
    found = {}
    for a in answers:
        cluster = a["id"]
        if a.get("missing") or a.get("denied"):
            for number in asked.get(cluster) or ():
                found[(cluster, number - 1)] = "missing" if a.get("missing") else "denied"
            continue
        matched = asked.get(cluster) or set()
        for key, kind in (("done", "ok"), ("already", "already"), ("bad", "bad"), ("limit", "limit"),
                          ("gone", "missing")):
            for number in _expand(a.get(key)):
                if number in matched or key != "gone":     # (a proc that had left is no match)
                    found[(cluster, number - 1)] = kind
    return found


def _constraint_counts(results):
    """-totals of a constraint selection: each job it matched, by what happened to it."""
    counts = dict.fromkeys(_TOTALS, 0)
    for kind in results.values():
        counts[kind] += 1
    return counts


def _is_operator(user):
    for kind in ("managers", "operators"):
        try:
            with open(cell.etc(kind), encoding="utf-8") as fh:
                if user in {line.strip() for line in fh}:
                    return True
        except OSError:
            continue
    return False


def _by_constraint(snap, opts, action, user, prog, failed=False):
    """The clusters, users and constraints, as one constraint: its sentence; True when
    it matched jobs but acted on none. ``failed``: something before failed, which
    HTCondor's tool names again here when this acts on nothing too."""
    targets = _chosen(snap, opts, user)
    answers = _send(action, opts, targets)
    acted = any(_expand(a.get("done")) for a in answers)
    if opts.long or opts.totals:
        results = _constraint_results(snap, targets, answers)
        if opts.long:
            totals = _constraint_counts(results) if opts.totals else None
            sys.stdout.write(_result_ad({k: _RESULT_CODES[v] for k, v in results.items()}, action, acted,
                                        snap, user, totals))
        else:
            sys.stdout.write(_totals_line(_constraint_counts(results)))
    words = _describe(opts, opts.selection)
    past = "marked for removal" if action is REMOVE else action.past
    if acted:
        sys.stdout.write(f"All jobs{words} have been {past}\n")
        return False
    # (HTCondor's tool prints its error stack first: the schedd's message, subsystem:code:
    # text, when the queue is empty, which is no error; else an empty line)
    empty = not Q.procs(snap)
    sys.stderr.write(f"{prog}:0:There are no jobs in the queue\n" if empty else "\n")
    if failed or not empty:
        sys.stderr.write(f"Couldn't find/{action.verb} all jobs{words}\n")
    return not empty
