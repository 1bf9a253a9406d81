"""The requests of condor_userprio's edits and of condor_reconfig.

Their callers passed the security levels already (``daemon.condorsec``:
ADMINISTRATOR, by default the cell's managers). An edit changes the
accountant (``accounting.userprio``), is written to the spool at once and
takes effect at the next pass; the answers are the lines condor_userprio
prints. condor_reconfig reads etc/ and condor_config again.
"""


#: what each edit prints: (verb of the answer, how the value is shown)
_SET = {"setfactor": ("The priority factor of {name} was set to {value:f}", float),
        "setprio": ("The priority of {name} was set to {value:f}", float),
        "setaccum": ("The Accumulated Usage of {name} was set to {value:f}", float),
        "setbegin": ("The Begin Usage Time of {name} was set to {value:d}", int),
        "setlast": ("The Last Usage Time of {name} was set to {value:d}", int)}


def _bare(name):
    """The accountant's name of a submitter named with its domain (``alice@example.org``)."""
    return name.partition("@")[0]


def _number(text, kind):
    try:
        value = kind(float(text))
    except (TypeError, ValueError):
        raise ValueError(f"{text!r} is not a number") from None
    return value


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


def userprio(state, dispatcher, req, now):
    """condor_userprio -setfactor, -setprio, -resetusage, -resetall, -delete, -set*."""
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


def reconfig(state, dispatcher, req, now):
    """condor_reconfig: the configuration is read again now."""
    state.reload_config(force=True, now=now)
    state.condor.refresh(state, force=True, now=now)
    state.log("I|configuration read again (condor_reconfig)")
    return 0, 'Sent "Reconfig" command to local master\n', ""
