"""The pool's file transfer plugins: the programs ``FILETRANSFER_PLUGINS`` names in a
cell's condor_config, which move the input and output files of URLs whose scheme
they support, beside the URL schemes gridtools fetches itself (``BUILT_IN``, as
HTCondor's curl and data plugins would).

``query`` asks each plugin what it supports, as HTCondor's starter does: it runs
``<plugin> -classad`` (with the daemon's identity, no input, for at most
``FILETRANSFER_PLUGIN_CLASSAD_TIMEOUT`` seconds, default 20) and reads what it
writes, a ``Name = expression`` per line (blank lines and ``#`` lines passed over).
The plugin's ``SupportedMethods`` (a list of URL schemes) is required; a plugin
that cannot be run, writes nothing or gives no methods is left out (and said in
the daemon's log). ``MultipleFileSupport = true`` says it speaks HTCondor's
multi-file protocol (``movers.run_plugin``); else it is run once per file, as
``<plugin> <source> <destination>`` (``movers.run_single``). A later plugin
takes a method from an earlier one, and from gridtools' own fetcher.

``ENABLE_URL_TRANSFERS = false`` turns URL transfers off: no plugin is asked and
the slot ads offer no methods (a job that names a URL in its transfer lists then
matches no slot); ``ENABLE_MULTIFILE_TRANSFER_PLUGINS = false`` leaves out the
plugins that speak the multi-file protocol.

The slot ads publish the methods as ``HasFileTransferPluginMethods`` (the
built-in ones and the plugins', in alphabetical order), and the attributes each
plugin's ``StartdAttrs`` names (a list of its attribute names), with their
values.

The daemon asks once for each reading of the configuration (at its start and at
each condor_reconfig), for the hosts whose jobs run on its own machine. A host
served by an execution daemon of its own (``gridtools execd``) is asked there, by
that daemon, as the host reads its condor_config, whenever a file of it changed:
what it found travels in its load report (``row``, ``from_row``) and stands for
the host's plugins, in its slot ads and in its jobs' transfers. A transfer runs
the plugin with the job owner's identity, as HTCondor runs it.
"""

import re

#: the URL schemes gridtools fetches itself (the slot ads' methods without a pool plugin)
BUILT_IN = ("data", "file", "ftp", "http", "https")
#: seconds ``<plugin> -classad`` may take (FILETRANSFER_PLUGIN_CLASSAD_TIMEOUT's default)
CLASSAD_TIMEOUT = 20
#: ENABLE_URL_TRANSFERS' and ENABLE_MULTIFILE_TRANSFER_PLUGINS' defaults
URL_TRANSFERS, MULTIFILE_PLUGINS = True, True
#: the knobs of condor_config that say what the plugins offer
KNOBS = ("FILETRANSFER_PLUGINS", "ENABLE_URL_TRANSFERS", "ENABLE_MULTIFILE_TRANSFER_PLUGINS",
         "FILETRANSFER_PLUGIN_CLASSAD_TIMEOUT")


class PoolPlugins:
    """What the pool's plugins offer: ``table`` (a method in lower case -> [the plugin's
    path, True when it speaks the multi-file protocol]: a plan's ``pool``), ``methods``
    (the names the slot ads publish, or None when URL transfers are off), ``attrs``
    (attribute -> ClassAd expression: the plugins' StartdAttrs) and ``problems`` (lines
    for the daemon's log)."""

    def __init__(self, table=None, methods=None, attrs=None, problems=None):
        self.table = table or {}
        self.methods = methods
        self.attrs = attrs or {}
        self.problems = problems or []

    def methods_text(self):
        """HasFileTransferPluginMethods, or None."""
        return None if self.methods is None else ",".join(self.methods)

    def row(self):
        """What the plugins offer as plain data (a load report's ``plugins``)."""
        return {"table": self.table, "methods": self.methods,
                "attrs": {name: expr.unparse() for name, expr in self.attrs.items()}}


def from_row(row):
    """The PoolPlugins a load report's ``plugins`` (``PoolPlugins.row``) gives, or None
    when it does not read."""
    from gridtools.classad import ClassAdSyntaxError, parse
    try:
        table = {str(method).lower(): [str(entry[0]), bool(entry[1])] for method, entry in row["table"].items()}
        methods = row["methods"]
        methods = None if methods is None else [str(method) for method in methods]
        attrs = {}
        for name, text in (row.get("attrs") or {}).items():
            try:
                attrs[str(name)] = parse(str(text))
            except (ClassAdSyntaxError, ValueError):
                continue
        return PoolPlugins(table, methods, attrs)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None


def configured(config):
    """True when ``config`` sets one of the knobs that say what the plugins offer."""
    return any((config.get(name) or "").strip() for name in KNOBS)


def for_host(condor, host, log=None):
    """What the pool's plugins offer on ``host`` (a daemon's ``condor``: its CondorConf
    is ``.conf``): what the host's execution daemon reported (``condor.remote_plugins``),
    else asked once per reading of the configuration (``query``; hosts whose
    configurations name the same plugins share the asking); what the asking found wrong
    goes to ``log``."""
    reported = (getattr(condor, "remote_plugins", None) or {}).get(host)
    if reported is not None:
        return reported
    conf = getattr(condor, "conf", condor)
    if conf is None:
        return PoolPlugins(methods=list(BUILT_IN))

    def ask():
        found = query(config)
        if log is not None:
            for line in found.problems:
                log(line)
        return found

    def of_host():
        key = tuple((name, config.get(name) if config is not None else None) for name in KNOBS)
        return conf.derived(("pool plugins", key), ask)
    config = conf.host(host)
    return conf.derived(("pool plugins of", host), of_host)


def plugin_paths(text):
    """The plugins a FILETRANSFER_PLUGINS value names (commas or blanks between them)."""
    return [path for path in re.split(r"[,\s]+", text or "") if path]


def query(config):
    """The pool's plugins as ``config`` (a host's condor_config: ``.get``) names them."""
    from gridtools.errors import ConfigError
    from gridtools.formats.condor_config import boolean, integer
    config = config if config is not None else {}
    try:
        enabled = boolean(config, "ENABLE_URL_TRANSFERS", URL_TRANSFERS)
        multi_ok = boolean(config, "ENABLE_MULTIFILE_TRANSFER_PLUGINS", MULTIFILE_PLUGINS)
        timeout = integer(config, "FILETRANSFER_PLUGIN_CLASSAD_TIMEOUT", CLASSAD_TIMEOUT, 1)
    except ConfigError as exc:
        return PoolPlugins(methods=list(BUILT_IN), problems=[f"E|{exc}"])
    if not enabled:
        return PoolPlugins()
    names = {method: method for method in BUILT_IN}
    table, attrs, problems = {}, {}, []
    for path in plugin_paths(config.get("FILETRANSFER_PLUGINS")):
        ad, why = ask(path, timeout)
        if ad is None:
            problems.append(f"W|FILETRANSFER: {why}")
            continue
        multi = ad.eval("MultipleFileSupport") is True
        if multi and not multi_ok:
            continue
        for method in plugin_paths(ad.eval("SupportedMethods")):
            names[method.lower()] = method
            table[method.lower()] = [path, multi]
        for name in plugin_paths(_text(ad.eval("StartdAttrs"))):
            value = ad.eval(name)
            if isinstance(value, (bool, int, float, str)):
                attrs[name] = ad.lookup(name)
    methods = [names[key] for key in sorted(names)]
    return PoolPlugins(table, methods, attrs, problems)


def ask(path, timeout=CLASSAD_TIMEOUT):
    """(the ad ``<path> -classad`` writes, None) or (None, why it is left out), in the
    words HTCondor's starter logs."""
    import subprocess
    from gridtools.classad import ClassAd, ClassAdSyntaxError, parse
    if not path.startswith("/"):
        return None, f"{path} is not a full path, skipping"
    try:
        done = subprocess.run([path, "-classad"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, cwd="/")
    except subprocess.TimeoutExpired:
        return None, f"No output from {path} -classad, ignoring"
    except OSError as exc:
        return None, f"Failed to execute {path} -classad: {exc.strerror or exc} skipping"
    ad = ClassAd()
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, eq, text = line.partition("=")
        name = name.strip()
        if not eq or not re.match(r"[A-Za-z_][A-Za-z0-9_.]*\Z", name):
            continue
        try:
            ad[name] = parse(text.strip())
        except (ClassAdSyntaxError, ValueError):
            continue
    if not done.stdout.strip():
        return None, f"No output from {path} -classad, ignoring"
    if not _text(ad.eval("SupportedMethods")).strip():
        return None, f"{path} -classad did not produce a valid classad, ignoring"
    return ad, None


def _text(value):
    return value if isinstance(value, str) else ""
