"""condor_qedit and condor_prio: changing attributes of queued jobs (HTCondor dialect).

    condor_qedit [-name SCHEDD] {cluster | cluster.proc | owner | -constraint EXPR}
                 ATTR VALUE [ATTR VALUE ...]
    condor_prio  {+N | -N | -p N} [-n SCHEDD] [-a] {cluster | cluster.proc | owner} ...

Both send the request ``condor_qedit`` (daemon.condorreq): the daemon sets
the attributes in the jobs' ads and brings what the scheduler reads (slots,
requests, JobPrio) in line. VALUE is a ClassAd expression (a string needs
its quotes: ``'"text"'``). condor_prio sets JobPrio, which orders one
owner's jobs among themselves; priorities run from -20 to 20. As condor_rm's,
a caller the WRITE level at the SCHEDD does not allow is refused before any
job is selected.
"""

import re
import sys

from gridtools import cell
from gridtools.cli.condor import queue as Q
from gridtools.cli.condor.act import check_write, pool_host, schedd_named
from gridtools.errors import GridError, UsageError, lines

#: the range of JobPrio condor_prio sets
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z", re.ASCII)       # (HTCondor's IsValidAttrName)

#: HTCondor's condor_qedit usage (qedit.cpp), but for -edits (a file of edits), which
#: gridtools's condor_qedit does not take
QEDIT_USAGE = """\
Usage: condor_qedit [help-opts] [general-opts] <restriction-list> <edit-list>

    [help-opts] are:
\t-help\t\t   Display this screen
\t-debug\t\t   Display debugging info to console
\t-dry-run\t   Display whether edit is allowed

    [general-opts] are:
\t-name <name>\t   Name of Scheduler
\t-pool <pool>\t   Use host as the central manager to query
\t-forward\t   Forward changes to shadow/gridmanager

    <restriction-list> is one or more of:
\t<cluster>\t   Edit jobs in a specific cluster
\t<cluster>.<proc>   Edit a specific job
\t<owner>\t\t   Edit jobs owned by <owner>
\t-jobids <id-list>  Edit jobs in <id-list>
\t-owner <owner>     Edit jobs owned by <owner>
\t-constraint <expr> Edit jobs that match <expr>

    <edit-list> is a set of <attr> and <value> pairs, in one of two forms
\t<attr> <value>\t   Two argument form, alternate <attr> and <value>
\t<attr>=<value>\t   Single argument form, = separates <attr> and <value>

At least one restriction and one edit must be specified, restrictions must be
first. The restriction-list should be: a list of job and/or cluster ids, a
single owner name, or one or more of -owner, -jobids, -constraint arguments.
If both owner and jobids are specified, only jobs that match both will be
edited. If a -constraint argument is also provided, only jobs that also match
the constraint will be edited.
If only a -constraint argument is provided, jobs not owned by the current user
will be ignored unless the current user is a queue superuser.

Once a restriction has been specified, all remaining arguments that do not
start with a - are part of the <edit-list>.  An argument that contains = will
be treated as an <attr>=<value> pair, otherwise arguments should alternate
between <attr> and <value>
"""
PRIO_USAGE = """\
Usage: condor_prio [{+|-}priority ] [-p priority] [ -a ] [-n schedd_name] [ -pool pool_name ] [user | cluster | cluster.proc | -a] ...
"""


def _targets(procs, clusters=()):
    """The request's targets: the procs by cluster, each of ``clusters`` (named whole)
    marked so (an edit reaches the procs of a cluster materialized late not made yet)."""
    by_cluster = {}
    for p in procs:
        by_cluster.setdefault(p.cluster, set()).add(p.number)
    from gridtools.spool.rows import ranges
    found = [{"id": c, "tasks": ranges(sorted(n))} for c, n in sorted(by_cluster.items())]
    for target in found:
        if target["id"] in clusters:
            target["cluster"] = True
    return found


def _send(procs, attrs, clusters=()):
    from gridtools.cli.ask import outcomes
    if not procs:
        return []
    return outcomes("condor_qedit", {"targets": _targets(procs, clusters), "attrs": attrs})


def _select(sel, user, every=False):
    """The queued procs the selection names (``every``: every proc in the queue, whoever
    owns it, as condor_prio -a takes them)."""
    from gridtools.cli.status import load
    snap = load()
    procs = [p for p in Q.procs(snap) if p.status not in (Q.COMPLETED, Q.REMOVED)
             and (every or (sel.by_name(p)
                            and (sel.named or sel.constraints or p.owner == user or user == "root")))]
    if sel.constraints:
        exprs = Q.compile_constraints(sel.constraints)
        source = Q.AdSource(snap, user)
        procs = [p for p in procs if Q.matches_all(source.ad(p), exprs)]
    return procs


def _acted(answers):
    count = 0
    for a in answers:
        count += sum(len(range(f, l + 1, s)) for f, l, s in a.get("done") or ())
    return count


# ---------------------------------------------------------------- condor_qedit

def parse_qedit(argv):
    """(selection, attributes, schedd, dry run) of condor_qedit's words, as qedit.cpp
    reads them: options (by their prefixes), then the first bare word names the jobs
    (job ids, and the words after it that start with a digit, or an owner), and the
    bare words after it are ``attr value`` pairs or ``attr=value`` words."""
    sel, attrs, args, schedd, dry = Q.Selection(), {}, list(argv), None, False
    pool = None
    chosen = False
    while args:
        arg = args.pop(0)
        if arg.startswith("-") and len(arg) > 1:
            word = arg.lstrip("-").partition(":")[0]
            if word in ("help", "h"):
                raise _Help(QEDIT_USAGE)
            if _prefix(word, "name", 1):
                schedd = _named(args, arg, "requires a SCHEDD name as an argument")
            elif _prefix(word, "pool", 1):
                pool = _named(args, arg, "requires a HTCondor collector name or address as an argument")
            elif _prefix(word, "debug", 1) or _prefix(word, "diagnostic", 4) or _prefix(word, "forward", 3):
                pass
            elif _prefix(word, "dry-run", 3):
                dry = True
            elif _prefix(word, "constraint", 1):
                if not args:
                    raise UsageError(f"condor_qedit: {arg} requires a ClassAd expression an argument", 1)
                sel.constraints.append(args.pop(0))
                chosen = True
            elif _prefix(word, "owner", 1):
                sel.users.append(_named(args, arg, "requires a owner name argument"))
                chosen = True
            elif _prefix(word, "jobids", 1):
                for jid in _named(args, arg, "requires a list of job ids as an argument").replace(",", " ").split():
                    sel.add_word(jid)
                chosen = True
            else:
                raise _BadOption(f"condor_qedit: {arg} is not a valid option")
        elif not chosen:
            chosen = True
            if arg[:1].isdigit():
                sel.add_word(arg)
                while args and args[0][:1].isdigit():
                    sel.add_word(args.pop(0))
            else:
                sel.users.append(arg)
        else:
            name, equal, value = arg.partition("=")
            if equal:
                name, value = name.strip(), value.strip()
            elif not args:
                raise UsageError(f"condor_qedit : expression required after attribute {arg}", 1)
            else:
                value = args.pop(0)
            if not _NAME.match(name):
                raise UsageError(f'Update aborted, illegal attribute-name specified for attribute "{name}".', 1)
            _check_value(name, value)
            attrs[name] = value
    if not chosen:
        raise UsageError(lines("condor_qedit : Error - there were no jobs specified.",
                               "\tuse -constraint, jobid or owner argument to indicate which "
                               "jobs to edit"), 1)
    if not attrs:
        raise UsageError("condor_qedit : Error - no attributes specifed.", 1)
    return sel, attrs, schedd, pool, dry


def _prefix(word, name, least):
    """True when ``word`` is ``name`` or its prefix of at least ``least`` letters."""
    return len(word) >= least and name.startswith(word)


def _named(args, arg, missing):
    """The option's value (one that starts with a dash is none)."""
    if not args or args[0].startswith("-"):
        raise UsageError(f"condor_qedit: {arg} {missing}", 1)
    return args.pop(0)


def _check_value(name, value):
    from gridtools.classad import parse
    try:
        parse(value, old=True)            # (as HTCondor's: adjacent strings are refused)
    except Exception:  # noqa: BLE001 - any syntax error
        raise UsageError(f"Update aborted, illegal value for : {name}", 1) from None


class _Help(Exception):
    pass


class _BadOption(GridError):
    """An option condor_qedit does not know: the line, then the usage (with its tabs)."""


def _take(args, arg, missing=None):
    if not args:
        raise UsageError(missing or f"{arg} requires an argument", 1)
    return args.pop(0)


def qedit_main(argv, prog="condor_qedit"):
    try:
        sel, attrs, schedd, pool, dry = parse_qedit(argv)
        _check_schedd(schedd, pool, prog)
        check_write()
        _check_protected(attrs)
        procs = _select(sel, Q.me())
        first = sorted(attrs)[0]
        by_id = not (sel.clusters or sel.users or sel.constraints)
        if by_id:
            found = {(p.cluster, p.proc) for p in procs}
            missing = sorted(sel.ids - found)
            if missing:
                return _failed(first, missing[0])
        elif not procs:
            return _failed(first, None, sel)
        if dry:                 # (the schedd's QueryOnly: what would be set, nothing set)
            for name in attrs:
                sys.stdout.write(f'Can Set attribute "{name}" for {len(procs)} matching jobs.\n')
            return 0
        answers = _send(procs, attrs, sel.clusters)
        count = _acted(answers)
        if not count:
            done = {(a["id"], n) for a in answers for f, l, s in a.get("done") or () for n in range(f, l + 1, s)}
            left = sorted((p.cluster, p.proc) for p in procs if (p.cluster, p.number) not in done)
            return _failed(first, left[0] if by_id and left else None, sel)
        for name in attrs:
            sys.stdout.write(f'Set attribute "{name}" for {count} matching jobs.\n')
        return 0
    except _Help as usage:
        sys.stdout.write(str(usage))
        return 0
    except _BadOption as exc:
        sys.stderr.write(f"{exc}\n{QEDIT_USAGE}")
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def _check_protected(attrs):
    """HTCondor refuses an edit of an immutable or protected attribute before it looks
    at the queue (the daemon refuses it too), and of one the configuration makes
    immutable (IMMUTABLE_JOB_ATTRS); one it makes protected (PROTECTED_JOB_ATTRS) is
    left to the daemon, which lets queue super users change it."""
    from gridtools.cli.condor import access
    from gridtools.daemon.condorreq import IMMUTABLE_KNOBS, configured, edit_refusal
    immutable = frozenset()
    if access.settable(IMMUTABLE_KNOBS):
        from gridtools.cli.condor.machineviews import client_config
        immutable = configured(client_config().get, IMMUTABLE_KNOBS)
    said = [edit_refusal(name, immutable, frozenset()) for name in attrs]
    if any(said):
        sys.stderr.write("".join(line for line in said if line))
        raise GridError("Transaction failed.  No attributes were set.", 1)


def _failed(attr, job, sel=None):
    """HTCondor's two lines when the schedd refuses the first attribute: for a job named
    by its id, or for the constraint the selection makes."""
    if job is not None:
        sys.stderr.write(f'Failed to set attribute "{attr}" for job {job[0]}.{job[1]}.\n')
    else:
        sys.stderr.write(f'Failed to set attribute "{attr}" by constraint: {_constraint_text(sel)}\n')
    sys.stderr.write("Queue transaction failed.  No attributes were set.\n")
    return 1


def _constraint_text(sel):
    """The constraint HTCondor's condor_qedit builds from its arguments: owners and
    -constraint expressions ANDed, job ids as ClusterId/ProcId tests."""
    parts = [f'Owner=="{user}"' for user in sel.users] + list(sel.constraints)
    clusters = {c: set() for c in sel.clusters}
    for c, p in sorted(sel.ids):
        if c not in sel.clusters:
            clusters.setdefault(c, set()).add(p)
    ids = []
    for c, procs in sorted(clusters.items()):
        if not procs:
            ids.append(f"ClusterId == {c} ")
        elif len(procs) == 1:
            ids.append(f"( ClusterId == {c} && ProcId == {min(procs)} )")
        else:
            ids.append(f"( ClusterId == {c} && (" + " || ".join(f"ProcId == {p} " for p in sorted(procs)) + "))")
    if ids:
        parts.append("|| ".join(ids))
    return "(" + " && ".join(f" ({p})" for p in parts).replace(" &&  (", " && (") + " )"


def _check_schedd(name, pool, prog):
    """Locate the schedd as HTCondor's condor_qedit and condor_prio do: without -name
    the local one (a -pool alone changes nothing); -name looked up in the local pool or
    in the one -pool names, which must be this cell's (its host, with or without a
    port), whose only schedd is named by its host."""
    if not name:
        return
    if not schedd_named(name) or (pool is not None and not cell.is_this_host(pool_host(pool))):
        where = "local pool" if pool is None else f"pool {pool}" if prog == "condor_prio" else f"{pool} pool"
        raise GridError(f"{prog}: No such schedd named {name} in {where}", 1)


# ---------------------------------------------------------------- condor_prio

def parse_prio(argv):
    """(selection, -p priority, adjustment, schedd, warnings) of condor_prio's words, as
    prio.cpp reads them: -p's number as C's atoi (none is 0); a job word is C or C.P
    whole, a user name starts with a letter, a word that starts with ``-a`` is every job
    in the queue (``sel.allusers``); anything else is skipped with a warning."""
    from gridtools.formats.condor import c_atoi
    sel, args, warnings = Q.Selection(), list(argv), []
    absolute = adjust = schedd = pool = None
    while args:
        arg = args.pop(0)
        if arg[:1] in "+-" and arg[1:2].isdigit():
            adjust = c_atoi(arg[1:]) * (-1 if arg[0] == "-" else 1)
        elif arg == "-p":
            absolute = c_atoi(_take(args, arg))
        elif arg in ("-n", "-name"):
            schedd = _take(args, arg, f"condor_prio: {arg} requires another argument")
        elif arg == "-pool":
            pool = _take(args, arg, "condor_prio: -pool requires another argument")
        elif arg[:2] == "-a":
            sel.allusers = True
        elif arg[:1].isdigit():
            head, dot, tail = arg.partition(".")
            if not head.isdigit() or (dot and not tail.isdigit()):
                warnings.append(f'Warning: unrecognized "{arg}" skipped')
            elif int(head) <= 0:
                warnings.append(f"Invalid cluster # from {arg}")
            else:
                sel.add_word(arg)
        elif arg[:1].isalpha():
            sel.users.append(arg)
        else:
            warnings.append(f'Warning: unrecognized "{arg}" skipped')
    return sel, absolute, adjust, schedd, pool, warnings


def prio_main(argv, prog="condor_prio"):
    try:
        if not argv:
            raise UsageError(PRIO_USAGE.rstrip(), 1)
        sel, absolute, adjust, schedd, pool, warnings = parse_prio(argv)
        if pool is not None and not schedd:
            raise GridError(f"{prog}: -pool also requires -n to be specified", 1)
        _check_schedd(schedd, pool, prog)
        if absolute is None and adjust is None:
            raise UsageError(lines("You must specify a new priority or priority adjustment.",
                                   *PRIO_USAGE.rstrip().splitlines()), 1)
        check_write()
        for line in warnings:
            sys.stderr.write(line + "\n")
        return _set_prio(sel, absolute, adjust)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def _set_prio(sel, absolute, adjust):
    """Set the priorities; 0 whatever it found (a job named that is not there is said, a
    cluster or user with no jobs is not), as HTCondor's condor_prio once connected.
    With -a every job in the queue is asked for: the daemon changes those the caller
    may edit (all of them for a queue super user) and each other one is said."""
    procs = _select(sel, Q.me(), every=sel.allusers) if sel.named or sel.allusers else []
    found = {(p.cluster, p.proc) for p in procs}
    for cluster, proc in sorted(sel.ids - found):
        sys.stderr.write(f"Couldn't retrieve current priority for {cluster}.{proc}.\n")
    groups = {}
    for p in procs:
        # (HTCondor's condor_prio adds in a C int: the sum wraps to 32 bits)
        new = absolute if absolute is not None else _int32(p.prio + adjust)
        groups.setdefault(new, []).append(p)
    for new, members in sorted(groups.items()):
        answers = _send(members, {"JobPrio": str(new)})
        done = {(a["id"], n) for a in answers for f, l, s in a.get("done") or () for n in range(f, l + 1, s)}
        for p in members:
            if (p.cluster, p.number) not in done:
                sys.stderr.write(f"Couldn't set new priority for {p.id}.\n")
    return 0


def _int32(number):
    """``number`` wrapped to a 32-bit int, as C's int arithmetic leaves it."""
    return (number + 2 ** 31) % 2 ** 32 - 2 ** 31


def main(argv, prog="condor_qedit"):
    return prio_main(argv, prog) if prog == "condor_prio" else qedit_main(argv, prog)
