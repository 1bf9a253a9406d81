"""condor_config_val -set, -unset, -rset and -runset: settings made in the daemon's
configuration, and the configuration the daemon publishes for condor_config_val's
daemon targets.

As HTCondor's daemons do:

- a setting is honoured only when the configuration the daemon started with
  enables it: ENABLE_PERSISTENT_CONFIG (and PERSISTENT_CONFIG_DIR, where the
  settings are kept) for -set and -unset, ENABLE_RUNTIME_CONFIG for -rset and
  -runset. They are read once, at start-up (``Dynamic``), so that no setting can
  enable settings;
- a name may be set by a caller allowed at a security level whose list
  ``<SUBSYS>_SETTABLE_ATTRS_<LEVEL>`` (else ``SETTABLE_ATTRS_<LEVEL>``; entries
  may hold ``*``) names it; there is no list by default, so nobody may set
  anything. CONFIG is the level meant for it (without ALLOW_CONFIG nobody has it);
- a persistent setting is kept on disk (``spool.daemonconf``) and survives a
  restart; a runtime setting is kept in memory until the daemon stops. Neither
  changes the configuration in use before the next reading of it (condor_reconfig,
  a file that changed, a restart): then the files are read, the persistent
  settings after them and the runtime settings last (``overlay``).

The request carries the caller's text; it is checked again here whatever the
client checked (``formats.condor_setting``): a name of letters, digits, ``_``
and ``.``, one line of printable text. A refusal is answered with status 1 (the
tool prints HTCondor's "Attempt to set configuration ... failed.") and logged
with HTCondor's warning.
"""

import os

from gridtools import cell, seclevels
from gridtools.errors import ConfigError
from gridtools.formats import condor_setting

#: the default of ENABLE_PERSISTENT_CONFIG and of ENABLE_RUNTIME_CONFIG (HTCondor's)
PERSISTENT_DEFAULT = False
RUNTIME_DEFAULT = False
#: where a runtime setting is said to come from (condor_config_val -verbose)
RUNTIME_SOURCE = "<runtime>"


class Dynamic:
    """What the configuration the daemon started with says of settings: whether
    persistent and runtime ones are honoured, and where persistent ones are kept
    (None: nowhere, with ``problem`` saying why)."""

    def __init__(self, config):
        from gridtools.formats.condor_config import boolean_or
        self.persistent = boolean_or(config, "ENABLE_PERSISTENT_CONFIG", PERSISTENT_DEFAULT)
        self.runtime = boolean_or(config, "ENABLE_RUNTIME_CONFIG", RUNTIME_DEFAULT)
        folder = (config.get("PERSISTENT_CONFIG_DIR") or "").strip()
        self.folder = folder if self.persistent and folder else None
        self.problem = None
        if self.persistent and not folder:
            self.problem = ("ENABLE_PERSISTENT_CONFIG is TRUE, but PERSISTENT_CONFIG_DIR is not "
                            "specified in the configuration file")


def overlay(config, dynamic, runtime, log=None):
    """Define in ``config`` (just read from the files) the persistent settings, then the
    runtime ones (``runtime``: name -> assignment text), as ``dynamic`` allows."""
    if dynamic is None:
        return config
    if dynamic.folder is not None:
        from gridtools.spool import daemonconf
        found, problems = daemonconf.settings(dynamic.folder)
        for problem in problems:
            if log is not None:
                log(f"E|persistent configuration not read: {problem}")
        for _name, text, source in found:
            _define(config, text, source)
    if dynamic.runtime:
        for text in runtime.values():
            _define(config, text, RUNTIME_SOURCE, 0)
    return config


def _define(config, text, source, line=1):
    """One kept assignment defined in ``config`` (one not valid any more is left out)."""
    name = condor_setting.assigned_name(text)
    if name is None or not condor_setting.valid_name(name) or condor_setting.value_problem(text):
        return
    config.define(*condor_setting.split(text), source, line)


# ---------------------------------------------------------------- the request

def handle(state, dispatcher, req, now):
    """A config_set request: (0, "", "") when the setting was made, else status 1."""
    body = req.body
    mode, subsystem = body.get("mode"), (body.get("subsystem") or "MASTER").upper()
    name, text = body.get("name") or "", body.get("text") or ""
    conf = state.condor.conf
    problem = _invalid(name, text)
    if problem is None:
        problem = _disabled(conf.dynamic, mode)
    if problem is None:
        problem = _unauthorized(state, req, conf, subsystem, name)
    if problem is None:
        problem = _make(conf, mode, name, text)
    if problem is not None:
        state.log(f"W|{problem}")
        return 1, "", ""
    what = "set" if text else "unset"
    state.log(f"I|{'persistent' if mode == 'persist' else 'runtime'} configuration {what} by "
              f"{_user(req)}: {text or name} (in use from the next condor_reconfig)")
    return 0, "", ""


def _user(req):
    from gridtools.daemon.state import user_name
    return user_name(req.uid)


def _invalid(name, text):
    """Why the request's name and text are not a setting, or None."""
    if not condor_setting.valid_name(name):
        return f"Rejecting attempt to set param with invalid name ({name[:80]})"
    if text:
        problem = condor_setting.value_problem(text)
        if problem is not None:
            return f"Rejecting attempt to set {name}: {problem}"
        said = condor_setting.assigned_name(text)
        if said is None or said.lower() != name.lower():
            return f"Rejecting attempt to set {name}: the assignment sets {said or 'nothing'}"
    return None


def _disabled(dynamic, mode):
    if dynamic is None:
        return "configuration settings refused: the configuration was not read"
    if mode == "persist" and not dynamic.persistent:
        return "set_persistent_config(): ENABLE_PERSISTENT_CONFIG is false. Not setting persistent config"
    if mode == "persist" and dynamic.folder is None:
        return f"set_persistent_config(): {dynamic.problem}"
    if mode == "runtime" and not dynamic.runtime:
        return "set_runtime_config(): ENABLE_RUNTIME_CONFIG is false. Not setting runtime config"
    return None


def _unauthorized(state, req, conf, subsystem, name):
    """None when the caller may set ``name`` at ``subsystem``, else HTCondor's warning."""
    get = conf.main.get if conf.main is not None and conf.unread is None else None
    if get is not None:
        from gridtools.daemon.state import user_name
        who = seclevels.identity(user_name(req.uid), get, cell.hostname())
        defaults = seclevels.manager_defaults(state.config.managers)
        if settable(get, who, subsystem, name, defaults):
            return None
    return (f'WARNING: Someone at 127.0.0.1 ({_user(req)}) is trying to modify "{name.lower()}"; '
            "WARNING: Potential security problem, request refused")


def settable(get, who, subsystem, name, defaults):
    """True when a level that ``who`` is allowed at (at daemon ``subsystem``) has a
    settable list naming ``name`` (HTCondor's CheckConfigAttrSecurity)."""
    import fnmatch
    for level in seclevels.Level:
        listed = get(f"{subsystem}_SETTABLE_ATTRS_{level.value}") or get(f"SETTABLE_ATTRS_{level.value}")
        entries = [e for e in (listed or "").replace(",", " ").split() if e]
        if not entries or not any(fnmatch.fnmatchcase(name.lower(), e.lower()) for e in entries):
            continue
        if seclevels.verify(get, level, who, subsystem, defaults).allowed:
            return True
    return False


def _make(conf, mode, name, text):
    """Keep the setting (or forget it when ``text`` is empty); None, or why it failed."""
    if mode == "runtime":
        if text:
            conf.runtime[name.lower()] = text
        else:
            conf.runtime.pop(name.lower(), None)
        return None
    from gridtools.errors import SpoolError
    from gridtools.spool import daemonconf
    try:
        if text:
            daemonconf.save_setting(conf.dynamic.folder, name, text)
        else:
            daemonconf.remove_setting(conf.dynamic.folder, name)
    except (SpoolError, ValueError, OSError) as exc:
        return f"set_persistent_config(): {exc}"
    return None


# ---------------------------------------------------------------- what is published

#: where a definition comes from that tells no secret: HTCondor's defaults, what the
#: machine was found to have, and settings condor_config_val -rset made
OPEN_SOURCES = ("<Default>", "<Detected>", RUNTIME_SOURCE)


def public(snapshot, config):
    """What every user may read of ``snapshot`` (the configuration in use, as ``snapshot``
    makes it): the definitions made in files every user may read (the file, and the
    folders on the way to it), by defaults or by -rset, whose values draw on no other
    definition and no variable of the daemon's environment ($ENV) that are not so
    themselves. A definition made in a file only root may read, by the daemon's
    environment (_CONDOR_*), or that takes something of those, is left out."""
    from gridtools.formats.condor_config import expand
    readable = {}

    def open_source(source):
        if source not in readable:
            readable[source] = source in OPEN_SOURCES or _world_readable(source)
        return readable[source]

    defs = {d.name.lower(): d for d in config.definitions()}
    kept = []
    for entry in snapshot["definitions"]:
        d = defs.get(str(entry[0]).lower())
        if d is None or not open_source(d.source):
            continue
        named, environ = [], _Unread()

        def lookup(name, named=named):
            named.append(name.lower())
            return config.raw(name)
        try:
            expand(d.raw, lookup, environ, name=d.name)
        except Exception:  # noqa: BLE001 - a value that cannot be expanded: told as it is
            pass
        if environ.asked or not all(n not in defs or open_source(defs[n].source) for n in named):
            continue
        kept.append(entry)
    return {**snapshot, "definitions": kept}


class _Unread:
    """The environment ``public`` expands a value with: it gives nothing, and tells
    whether the value asked it for something ($ENV)."""

    def __init__(self):
        self.asked = False

    def get(self, _key, default=None):
        self.asked = True
        return default


def _world_readable(path):
    """True when ``path`` is a regular file every user may read, through folders every
    user may pass."""
    import stat
    if not isinstance(path, str) or not path.startswith("/"):
        return False
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or not st.st_mode & stat.S_IROTH:
            return False
        folder = os.path.dirname(path)
        while True:
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return False
            parent = os.path.dirname(folder)
            if parent == folder:
                return True
            folder = parent
    except OSError:
        return False


def snapshot(conf, hosts, started):
    """The mapping ``spool.daemonconf.publish`` writes of the configuration in use."""
    config = conf.main
    definitions = []
    for d in config.definitions():
        try:
            value, problem = config.get(d.name), None
        except (ConfigError, ValueError) as exc:
            value, problem = None, str(exc)
        definitions.append((d.name, d.raw, value, problem, d.source, d.line))
    from gridtools.formats.condor_params import addresses
    return {"pid": os.getpid(), "host": cell.hostname(), "hosts": list(hosts),
            "address": f"<{addresses()['IP_ADDRESS']}:0>", "started": started,
            "generation": conf.generation, "global_file": config.global_file,
            "local_files": list(config.local_files), "definitions": definitions,
            "unread": conf.unread}
