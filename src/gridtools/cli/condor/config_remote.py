"""condor_config_val with a daemon target: -master, -schedd, -startd, -collector,
-negotiator, -name NAME, -pool HOST (with -name), -address <ip:port>, and the edits
-set, -unset, -rset and -runset, which are always sent to a daemon (the master when
none is named).

The cell's one daemon is every HTCondor daemon of the cell. What it answers is the
configuration it runs with, as it read it at its start or at the last condor_reconfig
(or the last change of a file it reads), with the settings the edits made: the
daemon publishes it each time it reads it (``spool.daemonconf``), and this module
answers from there, in HTCondor's words: a value (``-raw``: as written), ``-verbose``
(where it was set, its raw definition, its default), ``-dump``, and ``-evaluate``,
each value evaluated as a ClassAd expression against the daemon's ad (the ads
condor_status shows). A daemon that does not run, or a name that is not one of the
cell's hosts, is "Can't find address for this master" (exit 1).

An edit checks its text as HTCondor's tool does, then sends the daemon a
``config_set`` request, which it checks again and carries out or refuses
(``daemon.confset``); the answer is HTCondor's "Successfully set configuration ..."
or "Attempt to set configuration ... failed." (exit 1).
"""

from gridtools.cli.condor.config_val import Said
from gridtools.errors import GridError
from gridtools.formats import condor_config, condor_params

PROG = "condor_config_val"


def run(options, words, where, out, err):
    daemon = where.get("daemon", "master")
    if "pool" in where and "name" not in where:
        raise Said("Error: you must specify -name with -pool\n")
    if "address" in where and not _valid_address(where["address"]):
        raise Said(f"{PROG}: invalid address {where['address']}\n"
                   "Address must be of the form \"<111.222.333.444:555>\n"
                   "   where 111.222.333.444 is the ip address and 555 is the port\n"
                   "   you wish to connect to (the punctuation is important).\n")
    if "summary" in options:
        raise Said(f"{PROG}: -summary is not supported with a daemon target; "
                   "condor_config_val -summary reads the files\n")
    if not words and "edit" not in where and "dump" not in options:
        return 0
    published = locate(daemon, where)
    target = f"{daemon} {published.get('host')} {published.get('address')}"
    if "edit" in where:
        return edit(where["edit"], daemon, words, target, out)
    _readable(daemon, published)
    if "dump" in options:
        return dump(published, words, options, daemon, out)
    ad = daemon_ad(daemon, published, err) if "evaluate" in options else None
    return values(published, words, options, ad, out, err)


def _valid_address(text):
    """A sinful string as HTCondor takes one: ``<host:port>``, parameters after ``?``."""
    inner = text[1:-1] if text.startswith("<") and text.endswith(">") else ""
    host, colon, port = inner.partition("?")[0].rpartition(":")
    return bool(host and colon and port.isdigit())


def locate(daemon, where):
    """The configuration the cell's daemon published, when it runs and ``where`` names
    it; else Said in HTCondor's words."""
    from gridtools.spool import daemonconf, daemonctl
    published = daemonconf.read() if daemonctl.running() else None
    if published is None or not _names_it(published, daemon, where):
        raise Said(f"Can't find address for this {daemon}\nPerhaps you need to query another pool.\n")
    return published


def _names_it(published, daemon, where):
    """True when -name and -pool (when given) name the daemon's machine (its full or
    short name, or, for the startd, one of the cell's execution hosts)."""
    host = str(published.get("host") or "")
    known = {host.lower(), host.lower().split(".")[0], "localhost", "127.0.0.1"}
    if daemon == "startd":
        known.update(str(h).lower() for h in published.get("hosts") or ())
    name = where.get("name")
    if name is not None and name.rpartition("@")[2].lower() not in known and \
            name.rpartition("@")[2].lower().split(".")[0] not in known:
        return False
    pool = where.get("pool")
    if pool is not None:
        machine = pool.strip("<>").partition("?")[0].rpartition(":")[0] or pool
        return machine.lower() in known or machine.lower().split(".")[0] in known
    return True


def _readable(daemon, published):
    """Refuse a caller the configuration's READ level does not let in (as the daemon
    would refuse it the query)."""
    from gridtools.cli.condor import access
    who = access.refused("READ", daemon.upper())
    if who is not None:
        raise Said(access.denied_line(who) + "\n" +
                   f"Can't receive reply from {daemon} on {published.get('host')} {published.get('address')}\n")


# ---------------------------------------------------------------- queries

class _Found:
    """A knob as the daemon has it: expanded value, raw text, where it was set, default."""

    def __init__(self, name, value, raw, source, line, default):
        self.name, self.value, self.raw = name, value, raw
        self.source, self.line, self.default = source, line, default

    def where(self):
        return f" # at: {self.source}, line {self.line}\n" if self.line else f" # at: {self.source}\n"


def _table(published):
    return {str(d[0]).lower(): d for d in published.get("definitions") or ()}


def lookup(table, name):
    """The _Found of ``name`` in the published definitions (a knob none sets: its default,
    expanded against them), or None when it is not defined."""
    default = condor_params.default(name)
    d = table.get(name.lower())
    if d is not None:
        d_name, raw, value, problem, source, line = d
        if problem:
            raise GridError(problem)
        return _Found(d_name, value, raw, source, line, default)
    if default is None:
        return None

    def raw_of(other):
        found = table.get(other.lower())
        return found[1] if found is not None else condor_params.default(other)
    value = condor_config.expand(default, raw_of, {}, name.upper())
    return _Found(name.upper(), value, default, condor_params.SOURCE, 0, default)


def values(published, names, options, ad, out, err):
    """Print each named value as the daemon has it; "Not defined: NAME" for the others
    (status 1)."""
    table, status = _table(published), 0
    verbose = "verbose" in options
    for name in names:
        if name.startswith("^"):
            raise Said(f"remote query not supported for use {name[1:]}\n")
        found = lookup(table, name)
        shown = name.upper()
        if found is None:
            out.flush()
            err.write(f"Not defined: {shown}\n")
            err.flush()
            status = 1
            continue
        value = found.raw if "raw" in options and not verbose else found.value
        if ad is not None:
            value = evaluated(value, ad, out, err)
        if not verbose:
            out.write(f"{value}\n")
            continue
        default = f" # default: {found.default}\n" if found.default is not None else ""
        out.write(f"{shown} = {value}\n{found.where()} # raw: {found.name.upper()} = {found.raw}\n{default}\n")
    return status


def dump(published, patterns, options, daemon, out):
    """-dump of the daemon's configuration, as HTCondor's tool prints a daemon's: a
    header naming it, then per pattern the names that match (defined or with a default),
    their raw values (-expand: expanded), and the files that contributed (-verbose:
    where each was set, its other value and its default instead)."""
    from gridtools.cli.condor.config_val import dump_matching
    table = _table(published)
    out.write(f"# Configuration from {daemon} on {published.get('host')} {published.get('address')}\n")
    sources = set()

    def show(key, name):
        found = lookup(table, key)
        if found is not None:
            sources.add(found.source)
            _dump_one(name, found, options, out)
    dump_matching(patterns, {key: str(d[0]) for key, d in table.items()}, show, out)
    if "verbose" not in options and sources:
        out.write("# Contributing configuration file(s):\n" + "".join(f"#\t{s}\n" for s in sorted(sources)))
    return 0


def _dump_one(name, found, options, out):
    expand = "expand" in options
    out.write(f"{name} = {found.value if expand else found.raw}\n")
    if "verbose" in options:
        other = f" # raw: {found.name.upper()} = {found.raw}" if expand else f" # expanded: {found.value}"
        default = f" # default: {found.default}\n" if found.default is not None else ""
        out.write(f"{found.where()}{other}\n{default}")


# ---------------------------------------------------------------- -evaluate

def daemon_ad(daemon, published, err):
    """The ad of the daemon, as condor_status shows it (an empty ad, with HTCondor's
    warning, when there is none)."""
    import time
    from gridtools.classad import ClassAd
    from gridtools.spool import status
    snap, now = status.read() or {}, time.time()
    host = str(published.get("host") or "")
    if daemon == "master":
        from gridtools.cli.condor.machineviews import master_ads
        ads = master_ads(snap, now)
    elif daemon == "schedd":
        from gridtools.cli.condor.submitters import schedd_ads
        ads = schedd_ads(snap, now)
    elif daemon == "startd":
        from gridtools.cli.condor.statusviews import startd_ads
        ads = startd_ads(snap, now)
    else:
        from gridtools.cli.condor import daemonads
        ads = (daemonads.collector_ads if daemon == "collector" else daemonads.negotiator_ads)(snap, now)
    for ad in ads:
        if ad.eval("Machine") == host:
            return ad
    err.write(f"Warning: Classad for {daemon} daemon '{host}' is null, will evaluate expressions "
              "against empty classad\n")
    return ClassAd({})


def evaluated(value, ad, out, err):
    """``value`` evaluated as a ClassAd expression against ``ad``, as the ClassAd language
    writes the result; ``value`` itself, with HTCondor's warning, when it is not one."""
    from gridtools.classad import ClassAdSyntaxError, parse, unparse
    try:
        expr = parse(value)
    except ClassAdSyntaxError:
        out.flush()
        err.write(f"Warning: Failed to evaluate '{value}', returning it as config value\n")
        err.flush()
        return value
    return unparse(expr.eval(ad))


# ---------------------------------------------------------------- edits

#: the edit -> (the verb of its answers, the mode of its request)
_EDITS = {"set": ("set", "persist"), "unset": ("unset", "persist"),
          "rset": ("set", "runtime"), "runset": ("unset", "runtime")}


def edit(which, daemon, words, target, out):
    """-set "NAME = value" ..., -unset NAME ... (-rset, -runset alike): each sent to the
    daemon in turn; the first refused ends the command (status 1)."""
    verb, mode = _EDITS[which]
    for text in words:
        text = text.lstrip()
        name = _edited_name(text, verb)
        code = _ask(mode, daemon, name, text if verb == "set" else "")
        if code:
            raise Said(f'Attempt to {verb} configuration "{text}" on {target} failed.\n')
        out.write(f'Successfully {verb} configuration "{text}" on {target}. '
                  "The change will take effect on the next condor_reconfig.\n")
        out.flush()
    return 0


def _edited_name(text, verb):
    """The name an edit's text sets or unsets, checked as HTCondor's tool checks it."""
    from gridtools.formats import condor_setting
    if verb == "set":
        name = condor_setting.assigned_name(text)
        if name is None:
            raise Said(f"{PROG}: Can't set configuration value (\"{condor_setting.shown_name(text)}\")\n"
                       "You must specify \"macro_name = value\" or \"expr_name : value\"\n")
    elif ":" in text or "=" in text:
        raise Said(f"{PROG}: Can't unset configuration value (\"{text}\")\n"
                   "To unset, you only specify the name of the attribute\n")
    else:
        name = text.split(" ")[0]
    if not condor_setting.valid_name(name):
        raise Said(f"{PROG}: Error: Configuration variable name ({name}) is not valid, alphanumeric and _ only\n")
    problem = condor_setting.value_problem(text) if verb == "set" else None
    if problem is not None:
        raise Said(f"{PROG}: Can't set configuration value (\"{name}\"): {problem}\n")
    return name.lower()


def _ask(mode, daemon, name, text):
    """Send one setting to the daemon; its exit code."""
    from gridtools.spool import requests, wake
    body = {"mode": mode, "subsystem": daemon.upper(), "name": name, "text": text}
    request = requests.write("config_set", body, reply=True)
    wake.poke()
    code, _out, _err = requests.wait_reply(request, 60.0)
    return int(code)
