"""The requests of condor_userprio's edits, condor_reconfig, condor_vacate and
condor_checkpoint.

Their callers passed the security levels already (``daemon.condorsec``:
ADMINISTRATOR, by default the cell's managers). An edit changes the
accountant (``accounting.userprio``), is written to the spool at once and
takes effect at the next pass; the answers are the lines condor_userprio
prints. condor_reconfig reads etc/ and condor_config again; condor_reschedule
has the next pass run now. condor_vacate
has the startd of each host named vacate the claims of its slots (the
startd's vacate event, ``sched.startd``): their jobs are asked to leave, or
killed with -fast, and wait to run again. condor_checkpoint has it ask the
jobs running in those slots to checkpoint (``sched.startd``'s checkpoint
event): an HTCondor job that wants its checkpoint signal gets it, and goes on.
"""

from gridtools.daemon import view

#: what each edit prints: (verb of the answer, how the value is shown)
_SET = {"setfactor": ("The priority factor of {name} was set to {value:f}", float),
        "setprio": ("The priority of {name} was set to {value:f}", float),
        "setaccum": ("The Accumulated Usage of {name} was set to {value:f}", float),
        "setbegin": ("The Begin Usage Time of {name} was set to {value:d}", int),
        "setlast": ("The Last Usage Time of {name} was set to {value:d}", int),
        "setfloor": ("The floor of {name} was set to {value:d}", "count"),
        "setceiling": ("The ceiling of {name} was set to {value:d}", "count")}


def _bare(name):
    """The accountant's name of a submitter named with its domain (``alice@example.org``)."""
    return name.partition("@")[0]


#: the latest time -setbegin and -setlast take (the end of the year 9999: what a clock shows)
LATEST_TIME = 253402300799


def _number(text, kind):
    """``text`` as a finite number of ``kind`` (float; int: a time, 0 to LATEST_TIME;
    "count": a whole number of slots, -1 and up)."""
    try:
        number = float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{text!r} is not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"{text!r} is not a finite number")
    if kind is int and not 0 <= number <= LATEST_TIME:
        raise ValueError(f"{text!r} is not a time (seconds since 1970, to the year 9999)")
    if kind == "count":
        if not -1 <= number <= 2 ** 31 - 1:
            raise ValueError(f"{text!r} is not a number of slots")
        return int(number)
    return kind(number)


def _edit(acc, op, name, value, now):
    if op == "setfactor":
        acc.set_factor(name, value)
    elif op == "setprio":
        acc.set_priority(name, value)
    elif op == "setaccum":
        acc.set_accumulated(name, value * 1.0)
    elif op == "setbegin":
        acc.set_begin(name, value)
    elif op == "setlast":
        acc.set_last(name, value)
    elif op == "setfloor":
        acc.set_floor(name, value)
    elif op == "setceiling":
        acc.set_ceiling(name, value)


def userprio(state, dispatcher, req, now):
    """condor_userprio -setfactor, -setprio, -resetusage, -resetall, -delete, -set*
    (-setfloor and -setceiling are kept, shown and given to the negotiator)."""
    body = req.body
    op, shown = body["op"], body.get("name") or ""
    keeper = state.condor.priorities
    acc = keeper.accountant
    name = _bare(shown)
    if op == "resetall":
        acc.reset_all(now)
        text = "The accumulated usage was reset for all users"
    elif op == "resetusage":
        acc.reset_usage(name, now)
        text = f"The accumulated usage of {shown} was reset"
    elif op == "delete":
        acc.delete(name)
        text = f"The accountant record named {shown} was deleted"
    else:
        template, kind = _SET[op]
        try:
            value = _number(body.get("value"), kind)
            _edit(acc, op, name, value, now)
        except ValueError as exc:
            return 1, "", f"condor_userprio: {exc}\n"
        text = template.format(name=shown, value=value)
    keeper.dirty = True
    keeper.save(now, force=True)
    state.need_schedule = True
    state.need_publish = True
    state.log(f"I|{op} {shown} {body.get('value') or ''}".rstrip())
    return 0, text + "\n", ""


def vacate(state, dispatcher, req, now):
    """condor_vacate: the claims of the slots named are vacated; the answer says, as
    HTCondor's tool does, to which startd each command went, or which names no startd
    of the cell has (then nothing is vacated)."""
    fast = bool(req.body.get("fast"))
    machines = state.condor.machines
    words = ("Vacate-All-Claims-Fast", "Vacate-Claim-Fast") if fast else ("Vacate-All-Claims", "Vacate-Claim")
    code, out, err, vacated = _to_startds(state, dispatcher, req, now, words,
                                          lambda ctx, names: machines.vacate(ctx, names, fast, now))
    if vacated:
        state.need_schedule = state.need_publish = True
    if not code:
        state.log(f"I|condor_vacate{' -fast' if fast else ''}: {vacated} claims vacated")
    return code, out, err


def checkpoint(state, dispatcher, req, now):
    """condor_checkpoint: the jobs running in the slots named are asked to checkpoint;
    the answer as condor_vacate's (``vacate``)."""
    machines = state.condor.machines
    code, out, err, asked = _to_startds(state, dispatcher, req, now, ("Checkpoint-All-Jobs", "Checkpoint-Job"),
                                        lambda ctx, names: machines.checkpoint(ctx, names, now))
    if asked:
        state.need_publish = True
    if not code:
        state.log(f"I|condor_checkpoint: {asked} jobs asked to checkpoint")
    return code, out, err


def _to_startds(state, dispatcher, req, now, words, act):
    """A command to the startds a request names (``all``, a ``constraint``, or ``names``:
    hosts and slots; none: this machine's): (exit code, answer, error, what ``act``
    gave in all); ``words``: the command's names for a whole startd and for one slot;
    ``act(ctx, slot names)`` carries it out on those slots."""
    from gridtools import cell
    body = req.body
    ctx = state.condor.context(state, dispatcher, state.loads, now)
    hosts = ctx.hosts()
    machines = state.condor.machines
    word, one = words
    targets, missing = [], []                   # (line, slot names or a host)
    if body.get("all"):
        targets = [(f'Sent "{word}" command to startd {host}\n', host) for host in hosts]
    elif body.get("constraint"):
        chosen = _constraint_hosts(ctx, hosts, body["constraint"])
        if chosen is None:
            return 1, "", f"Can't find addresses for startd's for constraint '{body['constraint']}'\n" \
                          "Perhaps you need to query another pool.\n", 0
        targets = [(f'Sent "{word}" command to startd {host}\n', host) for host in chosen]
    else:
        for name in body.get("names") or [None]:
            host = _host_named(name or cell.hostname(), hosts)
            slot = name if name and "@" in name and name in machines.slots else None
            if slot is not None:
                targets.append((f'Sent "{one}" command to startd {name}\n', [slot]))
            elif host is not None and (name is None or "@" not in name):
                shown = "local startd" if name is None else f"startd {name}"
                targets.append((f'Sent "{word}" command to {shown}\n', host))
            else:
                missing.append("local startd" if name is None else f"startd {name}")
    if missing:
        return 1, "", "".join(f"Can't find address for {name}\n" for name in missing) + \
            "Perhaps you need to query another pool.\n", 0
    done = 0
    for _line, which in targets:
        names = which if isinstance(which, list) else [n for n, rec in machines.slots.items() if rec.host == which]
        done += act(ctx, names)
    return 0, "".join(line for line, _which in targets), "", done


#: (op, daemon, how) -> the command HTCondor's tool names; daemon None: all but the master
_COMMANDS = {("off", None): {"graceful": "Kill-All-Daemons", "fast": "Kill-All-Daemons-Fast",
                             "peaceful": "Kill-All-Daemons-Peacefully"},
             ("off", "startd"): {"graceful": "Kill-Daemon", "fast": "Kill-Daemon-Fast",
                                 "peaceful": "Kill-Daemon-Peacefully"},
             ("on", None): {"graceful": "Spawn-All-Daemons"}, ("on", "startd"): {"graceful": "Spawn-Daemon"},
             ("restart", None): {"graceful": "Restart", "fast": "Restart-Fast", "peaceful": "Restart-Peaceful"}}


def daemon_ctl(state, dispatcher, req, now):
    """condor_off, condor_on, condor_restart (see cli.condor.onoff): the startd of each
    host named off (its jobs put back to wait, or left to finish with -peaceful) or on
    again; the cell's daemon started again."""
    from gridtools import cell
    from gridtools.daemon import hostreq
    body = req.body
    op, how, daemon = body["op"], body.get("how") or "graceful", body.get("daemon")
    daemon = None if op == "restart" and daemon == "master" else daemon
    commands = _COMMANDS.get((op, daemon))
    if commands is None:
        return 1, "", (f"ERROR: one daemon is every HTCondor daemon of the cell: its {daemon} cannot be turned "
                       f"{op} or restarted on its own (gridtools daemon stop and start do it for all)\n")
    word = commands.get(how, commands["graceful"])
    hosts = view.exec_hosts(state.config)
    if body.get("all"):
        targets = [(f"master {host}", host) for host in hosts]
    else:
        targets, missing = [], []
        for name in body.get("names") or [None]:
            host = _host_named(name or cell.hostname(), hosts)
            shown = "local master" if name is None else f"master {name}"
            if host is None and op != "restart":
                missing.append(shown)
            targets.append((shown, host))
        if missing:
            return 1, "", "".join(f"Can't find address for {name}\n" for name in missing) + \
                "Perhaps you need to query another pool.\n"
    how_said = f' for "{daemon}"' if daemon else ""
    lines = "".join(f'Sent "{word}" command{how_said} to {shown}\n' for shown, _host in targets)
    if op == "restart":
        state.restart_requested = True
        state.log("I|the daemon starts again (condor_restart)")
        return 0, lines, ""
    host_op = "resume" if op == "on" else "drain" if how == "peaceful" else "flush"
    for _shown, host in targets:
        hostreq.apply_op(state, dispatcher, host, host_op)
        state.log(f"I|the startd of {host} turned {op} ({'condor_on' if op == 'on' else 'condor_off -' + how})")
    state.need_schedule = state.need_publish = True
    return 0, lines, ""


def _host_named(name, hosts):
    """The execution host ``name`` names (its full or short name), or None."""
    low = name.lower()
    for host in hosts:
        if host.lower() == low or host.lower().split(".")[0] == low:
            return host
    return None


def _constraint_hosts(ctx, hosts, text):
    """The hosts with a slot ad ``text`` is true for (None when there is none)."""
    from gridtools.classad import ClassAdSyntaxError, parse
    try:
        expr = parse(text)
    except ClassAdSyntaxError:
        return None
    chosen = [host for host in hosts if any(expr.eval(ad) is True for ad in ctx.host_ads(host).values())]
    return chosen or None


def reschedule(state, dispatcher, req, now):
    """condor_reschedule: a pass now (a negotiation cycle when the negotiator decides),
    for the cell's one schedd however many hosts are named."""
    from gridtools import cell
    state.need_schedule = True
    names = req.body.get("names") or []
    hosts = view.exec_hosts(state.config) + [cell.hostname()]
    missing = [name for name in names if _host_named(name, hosts) is None]
    if missing:
        return 1, "", "".join(f"Can't find address for schedd {name}\n" for name in missing) + \
            "Perhaps you need to query another pool.\n"
    if req.body.get("all"):
        targets = [f"schedd {cell.hostname()}"]
    else:
        targets = [f"schedd {name}" for name in names] or ["local schedd"]
    return 0, "".join(f'Sent "Reschedule" command to {target}\n' for target in targets), ""


def preen(state, dispatcher, req, now):
    """condor_preen: the stale files of the cell (``daemon.preen``), removed with
    ``remove``. The answer holds the report, a line per file indented by two blanks,
    after the listing of ``verbose`` (lines not indented)."""
    import time
    from gridtools.daemon import preen as preening
    lines, listing = preening.run(state, dispatcher, time.time(), bool(req.body.get("remove")),
                                  bool(req.body.get("verbose")))
    for line in lines:
        state.log(f"I|condor_preen: {line}")
    state.log(f"I|condor_preen: Results: {preening.results(lines)}")
    return 0, listing + "".join(f"  {line}\n" for line in lines), ""


def reconfig(state, dispatcher, req, now):
    """condor_reconfig: the configuration is read again now."""
    state.reload_config(force=True, now=now)
    state.condor.refresh(state, force=True, now=now)
    state.log("I|configuration read again (condor_reconfig)")
    return 0, 'Sent "Reconfig" command to local master\n', ""
