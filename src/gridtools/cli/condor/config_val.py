"""condor_config_val: print configuration values of the cell.

    condor_config_val [-v] [-raw | -expand | -default] NAME ...
    condor_config_val -config
    condor_config_val -dump [-expand] [-v] [PATTERN ...]
    condor_config_val -summary[:detected]
    condor_config_val -writeconfig FILE [NAME ...]
    condor_config_val [-subsystem NAME] [-local-name NAME] NAME ...
    condor_config_val -macro TEXT ...
    condor_config_val use CATEGORY[:TEMPLATE[(ARGS)]] ...
    condor_config_val LOCATION [-v] [-raw] [-evaluate] NAME ... | -dump [PATTERN ...]
    condor_config_val [LOCATION] -set "NAME = value" ... | -unset NAME ...
    condor_config_val [LOCATION] -rset "NAME = value" ... | -runset NAME ...

The configuration is read from CONDOR_CONFIG or the cell's etc/condor_config
and the local files it names (see condor_config(5)); a knob none of them sets
has its default (``formats.condor_params``). ``use ROLE`` lists the templates of a
category a use statement may name, ``use ROLE:Personal`` prints one, with its
arguments put in when they are given (``formats.condor_metaknobs``). Options may be
written with one or two dashes and abbreviated to any unambiguous prefix.

As in HTCondor, a name is looked up as ``LOCALNAME.NAME`` (-local-name), then
``SUBSYS.NAME`` (-subsystem, TOOL when none is given), then ``NAME``, and so are
the names its value refers to; SUBSYSTEM is the subsystem named and LOCALNAME the
local name (else the subsystem). ``-writeconfig FILE`` ("-": standard output)
writes what the configuration files and the environment set, as HTCondor's
does: by source (``# from FILE``), each value raw, one that is the knob's default
commented out with ``#``. ``-v`` names the template of a value a use statement
set (``, use ROLE:Personal+0``: its category, its name and the statement's line
in it).

A LOCATION (-master, -schedd, -startd, -collector, -negotiator, -name NAME, -pool
HOST, -address <ip:port>) asks the cell's daemon instead: its values are those it
runs with, and the edits change its settings (``cli.condor.config_remote``, which
this module loads only then).
"""

import sys

from gridtools import cell
from gridtools.errors import GridError
from gridtools.formats import condor_config, condor_params

USAGE = """\
Usage: {prog} [options] NAME ...
       {prog} -config | -dump [PATTERN ...] | -macro TEXT ...
       {prog} use CATEGORY[:TEMPLATE]
       {prog} <location> [options] NAME ...
       {prog} [<location>] <edit>

Print the values of configuration macros.

Options:
  -verbose, -v   also say where each value was defined (file and line)
  -raw           print values as written, without expanding $(...) references
  -expand        print expanded values (the default, except with -dump)
  -default       print the default values (not with -verbose)
  -config        list the configuration files in use
  -dump          print every macro whose name matches one of the PATTERNs
                 (regular expressions; all macros when none is given), raw
                 unless -expand
  -macro         expand each TEXT as the configuration language would
  -summary[:detected]
                 print every macro the configuration files (or the
                 environment) set to something other than its default, by file
  -evaluate      with a <location>: evaluate each value as a ClassAd expression
                 against the daemon's ad and print the result
  -subsystem NAME
                 look names up as daemon NAME does (NAME.KNOB first; TOOL by default)
  -local-name NAME
                 look names up as the daemon of local name NAME (NAME.KNOB first)
  -writeconfig FILE
                 write the configuration the files and the environment set to
                 FILE ("-": standard output), values that are defaults commented out
  -help          print this message
  -version       print the HTCondor version and platform

where <location> is one or more of (the values are those the running daemon
uses: what it read at its start or at the last condor_reconfig)
  -master, -schedd, -startd, -collector, -negotiator
                 the daemon to ask (-master when none is named)
  -name NAME     the daemon's machine
  -pool HOST     the central manager (with -name)
  -address <ip:port>
                 the daemon's address

where <edit> is one of (sent to the daemon, in use from the next condor_reconfig)
  -set "NAME = value" ...
                 set NAME persistently (ENABLE_PERSISTENT_CONFIG)
  -unset NAME ...
                 revert NAME's persistent setting
  -rset "NAME = value" ...
                 set NAME until the daemon stops (ENABLE_RUNTIME_CONFIG)
  -runset NAME ...
                 revert NAME's runtime setting

use CATEGORY lists the templates of a category (ROLE, POLICY, FEATURE, SECURITY);
use CATEGORY:TEMPLATE prints the statements of a template (with -expand, those
of the templates its use statements name in their place).
"""

OPTIONS = ("verbose", "raw", "expand", "default", "config", "dump", "macro", "summary", "help", "version",
           "master", "schedd", "startd", "collector", "negotiator", "name", "pool", "address",
           "set", "unset", "rset", "runset", "evaluate", "subsystem", "local-name", "writeconfig")
#: (-ve and -ver are -verbose, read before -version as HTCondor reads them; -e, -c, -m,
#: -r and -s stay what they were before the daemon targets and edits came)
ALIASES = {"v": "verbose", "ve": "verbose", "ver": "verbose", "h": "help", "?": "help",
           "e": "expand", "c": "config", "co": "config", "m": "macro", "r": "raw", "s": "summary",
           "n": "name", "addr": "address"}
#: the daemons a query or an edit may be sent to (``-master`` when only -name, -address
#: or an edit says one is)
DAEMONS = ("master", "schedd", "startd", "collector", "negotiator")
#: the options naming where the daemon is; each takes the next argument
LOCATIONS = ("name", "pool", "address")
#: the other options taking the next argument (HTCondor names local-name so when it is missing)
TAKES = {"subsystem": "subsystem", "local-name": "local_name", "writeconfig": "writeconfig"}
#: the edits: -set and -rset take assignments, -unset and -runset names
EDITS = ("set", "unset", "rset", "runset")


class _Usage(GridError):
    """A command-line mistake; the message is printed with a hint."""


class Said(GridError):
    """A failure whose message (whole lines) is printed as it is, in HTCondor's words
    (what it quotes made safe, a line at a time)."""

    def __init__(self, text, exit_code=None):
        from gridtools.errors import lines
        super().__init__(lines(*text.rstrip("\n").split("\n")), exit_code)


def _option(arg):
    """The option named by ``arg`` (``-v``, ``--raw``, ``-conf`` ...)."""
    word = arg.lstrip("-").lower()
    if word in ALIASES:
        return ALIASES[word]
    if word in OPTIONS:
        return word
    matches = [o for o in OPTIONS if word and o.startswith(word)]
    if len(matches) == 1:
        return matches[0]
    raise _Usage(f"unknown option {arg}" if not matches else f"ambiguous option {arg}")


def parse_args(argv, where=None):
    """(set of options, list of words) from the command line; ``where`` (a dict), when
    given, receives the daemon named (``daemon``), the edit (``edit``) and the
    arguments of -name, -pool and -address."""
    options, words = set(), []
    where = {} if where is None else where
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            words.extend(argv[i:])
            break
        if not (arg.startswith("-") and len(arg) > 1 and "macro" not in options):
            words.append(arg)
            continue
        name, colon, extra = arg.partition(":")
        option = _option(name)
        if option == "summary" and colon:       # (-summary:detected, as HTCondor's)
            if any(word and "detected".startswith(word.lower()) and len(word) >= 3
                   for word in extra.replace(",", ":").split(":")):
                options.add("detected")
        elif colon:
            raise _Usage(f"unknown option {arg}")
        if option in LOCATIONS or option in TAKES:
            if i >= len(argv):
                raise Said(f"-{TAKES.get(option, option)} requires an argument\n")
            where[option] = argv[i]
            i += 1
        elif option in DAEMONS:
            where["daemon"] = option
        elif option in EDITS:
            where["edit"] = option
        options.add(option)
    if "raw" in options and "expand" in options:
        raise _Usage("-raw and -expand cannot be used together")
    if "default" in options and "verbose" in options:
        raise Said("-default cannot be used with -verbose")
    return options, words


def where(definition):
    """Where a definition was made, as -v prints it (HTCondor's `` # at:`` line): a file
    and its line, or a source such as <Default> or <Environment>."""
    if definition.line:
        meta = getattr(definition, "meta", None)
        use = f", use {meta[0]}:{meta[1]}+{meta[2]}" if meta else ""
        return f" # at: {definition.source}, line {definition.line}{use}"
    return f" # at: {definition.source}"


def show_sources(config, out, err):
    """-config, as HTCondor's PrintConfigSources: the words on stderr and only the
    paths on stdout, so that the output can be piped into something like xargs."""
    _said(err, "Configuration source:\n")
    _said(out, f"\t{config.global_file or ''}\n")
    if config.local_files:
        _said(err, "Local configuration source%s:\n" % ("s" if len(config.local_files) > 1 else ""))
        for path in config.local_files:
            _said(out, f"\t{path}\n")
        _said(err, "\n")


def _said(stream, text):
    """Write and flush at once: stdout and stderr interleave as HTCondor's do."""
    stream.write(text)
    stream.flush()


def show_values(config, names, options, out, err):
    """Print each named value; an undefined one is named on stderr and the others are
    still printed (status 1 at the end, as HTCondor's condor_config_val does)."""
    status = 0
    for name in names:
        if name.startswith("^"):
            show_template(name[1:], out, err, "expand" in options, "verbose" in options)
            continue
        definition = config.definition(name)
        if "default" in options:
            definition = _default(name)
        elif definition is None and condor_params.default(name) is not None:
            definition = condor_config.Definition(name.upper(), condor_params.default(name),
                                                  condor_params.SOURCE, 0)
        if definition is None:
            out.flush()
            err.write(f"Not defined: {name}\n")
            err.flush()
            status = 1
            continue
        if "raw" in options or "default" in options:
            value = definition.raw
        elif definition.source == condor_params.SOURCE:
            value = condor_config.expand(definition.raw, config.raw, config.environ,
                                         name=definition.name)
        else:
            value = config.get(name)
        if "verbose" in options:          # HTCondor 24's layout, a blank line after each
            raw = "" if "raw" in options else f" # raw: {definition.name} = {definition.raw}\n"
            out.write(f"{definition.name} = {value}\n{where(definition)}\n{raw}\n")
        else:
            out.write(f"{value}\n")
    return status


def _default(name):
    """The definition of ``name``'s default (-default), None when it has none."""
    value = condor_params.default(name)
    if value is None:
        return None
    return condor_config.Definition(name.upper(), value, condor_params.SOURCE, 0)


def show_template(spec, out, err, expand=False, verbose=False):
    """``use CATEGORY`` (the names of its templates) or ``use CATEGORY:NAME[(ARGS)]``
    (the template's text, arguments put in), in HTCondor's words. ``expand`` (-expand):
    the use statements of the template are replaced by the statements of the templates
    they name, all the way down (``verbose``: each one kept, and each expansion between
    ``#begin-expanding#`` and ``#end-expanding#`` lines)."""
    from gridtools.formats import condor_metaknobs
    category, colon, rest = spec.partition(":")
    if not colon and "." in spec:
        category, _dot, rest = spec.partition(".")
        err.write(f"{spec} is not valid, assuming {category}:{rest} was intended\n")
    names = condor_metaknobs.names(category)
    if names is not None and not rest:
        out.write(f"use {category.upper()} accepts\n" + "".join(f"  {n}\n" for n in names))
        return
    found = condor_metaknobs.split(rest)
    template = condor_metaknobs.find(category, found[0][0]) if found else None
    if template is None:
        out.write(f"Not defined: use {(category + ':' + rest if names is not None else category).upper()}\n")
    elif expand or found[0][1]:
        text = condor_metaknobs.substitute(template[2], found[0][1])
        out.write(f"use {template[0]}:{rest} {'expands to' if expand else 'is'}\n")
        _template_lines(text, expand, verbose, out)
        out.write("\n")
    else:
        out.write(f"use {template[0]}:{template[1]} is\n{template[2]}")


def _template_lines(text, expand, verbose, out, depth=0):
    """Print a template's lines; with ``expand``, each use statement's templates after
    it, their own lines printed the same way (the statement itself only when
    ``verbose``)."""
    from gridtools.formats import condor_metaknobs
    for line in text.split("\n"):
        if not line:
            continue
        words = line.replace(":", " ").split()
        is_use = bool(words) and words[0] == "use"
        if not is_use or verbose or not expand:
            out.write(line + "\n")
        if not (is_use and expand) or depth > 20:
            continue
        category_name, _colon, rhs = line.strip()[3:].partition(":")
        category_name = category_name.strip()
        if verbose:
            out.write(f" #begin-expanding# use {category_name} : {rhs.strip()}\n")
        if condor_metaknobs.category(category_name) is None:
            out.write(f"error: {category_name} is not a valid use category\n")
        else:
            for name, args in condor_metaknobs.split(rhs):
                template = condor_metaknobs.find(category_name, name)
                if template is not None:
                    _template_lines(condor_metaknobs.substitute(template[2], args), True, verbose, out, depth + 1)
        if verbose:
            out.write(f" #end-expanding# use {category_name} : {rhs.strip()}\n")


def templates_asked(words, err):
    """The words of the command line with each ``use`` and the word after it made one
    template query (``^`` and the word), as HTCondor's condor_config_val takes them."""
    found, i = [], 0
    while i < len(words):
        if words[i].lower() != "use":
            found.append(words[i])
        elif i + 1 < len(words):
            i += 1
            found.append("^" + words[i])
        else:
            err.write("use should be followed by a category or category:option argument\n")
        i += 1
    return found


def show_dump(config, patterns, options, out):
    """-dump, as HTCondor's: a header naming the machine, then for each pattern (a
    regular expression, case ignored; none: every name) its header and the names that
    match, defined or with a default, in name order."""
    out.write(f"# Configuration from machine: {config.get('FULL_HOSTNAME') or '<unknown hostname>'}\n")
    defined = {d.name.lower(): d for d in config.definitions()}
    dump_matching(patterns, {key: d.name for key, d in defined.items()},
                  lambda key, name: _dump_one(config, defined.get(key), name, options, out), out)
    if "verbose" not in options:        # (-v names each value's file instead)
        files = [f for f in [config.global_file, *config.local_files] if f]
        out.write("# Contributing configuration file(s):\n" + "".join(f"#\t{f}\n" for f in files))
    return 0


def dump_matching(patterns, defined, show, out):
    """-dump's body: for each pattern (a regular expression, case ignored; none: every
    name; one that does not compile matches nothing) its header, then ``show(key,
    name)`` for each name it matches in name order, among the knobs with a default and
    ``defined`` (lower-case key -> name as written)."""
    import re
    names = {name.lower(): name for name in (*condor_params.DEFAULTS, *condor_params.COMPUTED,
                                             *condor_params.MACROS)}
    names.update(defined)
    for pattern in patterns or [""]:
        if pattern:
            out.write(f"\n# Parameters with names that match {pattern}:\n")
        try:
            found = re.compile(pattern, re.IGNORECASE)
        except re.error:
            continue
        for key in sorted(k for k in names if found.search(names[k])):
            show(key, names[key])


def show_summary(config, detected, out):
    """-summary, as HTCondor's: a line naming the version, then, for each file that set
    something (in the order they were read; the environment last), ``# from FILE`` and
    its macros whose raw value is not their default (``NAME = raw``, by line); with
    ``detected``, the values found on this machine first."""
    from gridtools.formats.condor.jobad import VERSION_TEXT
    groups = {}
    for definition in config.definitions():
        source = definition.source
        if source == condor_config.DEFAULT_SOURCE or (source == condor_config.DETECTED_SOURCE and not detected):
            continue
        if source != condor_config.DETECTED_SOURCE and definition.raw == condor_params.default(definition.name):
            continue
        groups.setdefault(source, []).append(definition)
    if not groups:
        return 0
    first = [condor_config.DETECTED_SOURCE] + config.sources()
    order = sorted(groups, key=lambda src: (src == condor_config.ENV_SOURCE,
                                            first.index(src) if src in first else len(first)))
    out.write(f"# condor_config_val {VERSION_TEXT.splitlines()[0]}\n")
    for source in order:
        out.write(f"\n#\n# from {source}\n#\n")
        for definition in sorted(groups[source], key=lambda d: d.line):
            out.write(f"{definition.name} = {definition.raw}\n")
    return 0


def write_config(config, path, err):
    """-writeconfig FILE, as HTCondor's: what the files and the environment set (not the
    detected values or the defaults), by source in the order they were read (the
    environment last), each under ``# from SOURCE``, by line, then by name; a value
    that is the knob's default (or empty, with an empty default) is commented out with
    ``#``; one of several lines is written ``NAME @=end`` ... ``@end``, its lines
    indented. Returns False when the file cannot be written."""
    groups = {}
    for definition in config.definitions():
        if definition.source in (condor_config.DEFAULT_SOURCE, condor_config.DETECTED_SOURCE):
            continue
        groups.setdefault(definition.source, []).append(definition)
    first = config.sources()
    order = sorted(groups, key=lambda src: (src == condor_config.ENV_SOURCE,
                                            first.index(src) if src in first else len(first)))
    text = []
    for source in order:
        text.append(f"\n#\n# from {source}\n#\n")
        for definition in sorted(groups[source], key=lambda d: (d.line, d.name.lower())):
            default = condor_params.default(definition.name)
            raw = definition.raw
            comment = "#" if raw == default else ""
            if "\n" in raw:
                indent = "#   " if comment else "   "
                body = "".join(f"\n{indent}{line}" for line in raw.split("\n"))
                text.append(f"{comment}{definition.name} @=end{body}\n@end\n")
            else:
                text.append(f"{comment}{definition.name} = {raw}\n")
    if path == "-":
        sys.stdout.write("".join(text))
        return True
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(text))
    except OSError:
        err.write(f"Failed to create configuration file {path}.\n")
        return False
    return True


def _prefixes(where):
    """The prefixes names are looked up with (-local-name's, then -subsystem's or TOOL),
    and the defaults SUBSYSTEM and LOCALNAME take from them (None: as they are)."""
    subsystem = where.get("subsystem")
    local = where.get("local-name")
    prefixes = tuple(p for p in (local, subsystem or "TOOL") if p)
    if subsystem is None and local is None:
        return prefixes, None
    defaults = condor_config.builtin_defaults()
    if subsystem is not None:
        defaults["SUBSYSTEM"] = subsystem
    defaults["LOCALNAME"] = local or defaults["SUBSYSTEM"]
    return prefixes, defaults


def _dump_one(config, definition, name, options, out):
    if "default" in options:
        out.write(f"{name} = {condor_params.default(name) or ''}\n")
        return
    raw = definition.raw if definition is not None else condor_params.default(name)
    expanded = config.get(name) if definition is not None else config.expand(raw or "")
    out.write(f"{name} = {expanded if 'expand' in options else raw}\n")
    if "verbose" in options:
        other = f" # raw: {raw}" if "expand" in options else f" # expanded: {expanded}"
        out.write((where(definition) if definition is not None else f" # at: {condor_config.DEFAULT_SOURCE}")
                  + f"\n{other}\n")
        default = condor_params.default(name)
        if default is not None and definition is not None:
            out.write(f" # default: {default}\n")


def run(argv, out, err):
    where = {}
    options, words = parse_args(argv, where)
    if "help" in options:
        out.write(USAGE.format(prog="condor_config_val"))
        return 0
    if "version" in options:
        from gridtools.formats.condor.jobad import VERSION_TEXT
        out.write(VERSION_TEXT)
        return 0
    modes = options & {"config", "dump", "macro", "summary", "writeconfig"}
    if not modes and not words:
        raise _Usage("no macro names given")
    prefixes, defaults = _prefixes(where)
    config = condor_config.load(condor_config.locate(cell.etc("condor_config")),
                                fallback=condor_params.default, defaults=defaults, prefixes=prefixes)
    for warning in config.warnings:
        err.write(warning + "\n")
    if "config" in options:
        show_sources(config, out, err)
    if where.keys() & {"daemon", "edit", "name", "address"} or "pool" in where:
        if "writeconfig" in options:
            out.write(f"-writeconfig is not currently supported with -{where.get('daemon', 'master')}\n")
            return 1
        from gridtools.cli.condor import config_remote
        return config_remote.run(options, templates_asked(words, err) if "edit" not in where else words,
                                 where, out, err)
    if "writeconfig" in options:
        if not write_config(config, where["writeconfig"], err):
            return 2
        if not words and not options & {"macro", "summary", "dump"}:
            return 0
    if "macro" in options:
        for text in words:
            out.write(config.expand(text) + "\n")
        return 0
    if "summary" in options:
        return show_summary(config, "detected" in options, out)
    if "dump" in options:
        return show_dump(config, words, options, out)
    return show_values(config, templates_asked(words, err), options, out, err)


def main(argv, prog="condor_config_val"):
    try:
        return run(list(argv), sys.stdout, sys.stderr)
    except _Usage as exc:
        sys.stderr.write(f"{prog}: {exc} (try {prog} -help)\n")
        return 1
    except Said as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    except GridError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{prog}: {exc}\n")
        return exc.exit_code
