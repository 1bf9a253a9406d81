"""The HTCondor configuration language (``condor_config`` files).

A configuration is a sequence of files read in order: the global file (from
``CONDOR_CONFIG`` or the cell's ``etc/condor_config``), then each file named
by ``LOCAL_CONFIG_FILE`` (comma- or space-separated), then the files of
``LOCAL_CONFIG_DIR``; later definitions replace earlier ones. Environment
variables ``_CONDOR_<NAME>`` override every file.

Syntax, per line:
  ``NAME = value``        names are case-insensitive, values case-sensitive
  ``NAME @=TAG`` ... ``@TAG``   a value spanning several lines
  ``# comment``           only at the start of a line
  ``include : FILE`` / ``include ifexist : FILE``
  ``if COND`` / ``elif COND`` / ``else`` / ``endif``   nestable blocks
  ``use CATEGORY : NAME(args), NAME ...``   HTCondor's templates (metaknobs)
  ``error : text`` / ``warning : text``   stop reading / note a warning
  a line ending in ``\\`` continues on the next one (also in comments); the
  continuation's leading blanks are dropped.

A condition is one of HTCondor's few forms (``formats.condor_conditions``, loaded
at a text's first ``if``); the lines of a branch not taken are not read at all
(includes, templates and errors included).

``use`` reads the text of each template named (``formats.condor_metaknobs``),
arguments substituted, as if it stood in place of the statement; what a template
defines is said to come from the use statement's file and line. ``error`` raises
ConfigError with the expanded text; ``warning`` adds the same line to the
Config's ``warnings``.

Values are stored raw and expanded when used: ``$(NAME)`` is replaced by
NAME's (expanded) value, so a later redefinition of NAME wins;
``$(NAME:default)`` uses ``default`` when NAME is undefined; ``$ENV(VAR)``
is an environment variable; ``$INT(NAME[,fmt])`` and ``$REAL(NAME[,fmt])`` are
NAME's value (or the text itself) evaluated as a ClassAd expression, as a number;
``$STRING``, ``$EVAL``, ``$SUBSTR``, ``$CHOICE``, ``$BASENAME``, ``$DIRNAME``,
``$F<letters>`` (parts of a file name: ``$Fn``, ``$Fx``, ``$Fp``, ``$Fd`` ...),
``$RANDOM_CHOICE`` and ``$RANDOM_INTEGER`` work as in submit descriptions (a random
one draws again at each expansion), as HTCondor's configuration reads them:
``$ENV(VAR)`` of a variable not set is ``UNDEFINED``, ``$SUBSTR`` of a name no
macro has is empty, ``$RANDOM_INTEGER`` names its bad argument in HTCondor's words;
``$$(...)`` is left alone (it belongs to match-time expansion in submit files). A definition that refers to itself,
``A = $(A),def``, appends to A's previous value. Macros that refer to each
other in a cycle are an error, reported when used.

``expand`` is independent of configuration files and serves any macro
language with the same syntax (submit description files).
"""

import os
import re

from gridtools import ospaths
from gridtools.errors import ConfigError

DEFAULT_SOURCE = "<Default>"
#: where HTCondor says a macro it finds out about the host comes from (``builtin_defaults``)
DETECTED_SOURCE = "<Detected>"
#: the predefined macros HTCondor detects (the others, such as DOLLAR, are defaults)
DETECTED = frozenset({"HOSTNAME", "FULL_HOSTNAME", "DETECTED_CPUS", "DETECTED_CORES", "DETECTED_MEMORY",
                      "OPSYS", "ARCH", "SUBSYSTEM", "USERNAME", "CondorIsAdmin"})
ENV_SOURCE = "<Environment>"
ENV_PREFIX = "_CONDOR_"
MAX_EXPANSION = 1 << 20  # characters; a longer expansion is treated as runaway
MAX_INCLUDE_DEPTH = 20
# Files of LOCAL_CONFIG_DIR that are skipped (editor backups, package leftovers).
DEFAULT_DIR_EXCLUDE = r"^((\..*)|(.*~)|(#.*)|(.*\.rpmsave)|(.*\.rpmnew)|(.*\.dpkg-.*))$"


#: the statements that open, divide and close conditional blocks (``condor_conditions``)
_BLOCK_WORDS = ("if", "elif", "else", "endif")


class ConfigSyntaxError(ConfigError):
    """A line of a configuration file that cannot be read."""

    def __init__(self, message, source=None, line=None):
        where = f"{source}, line {line}: " if source else ""
        super().__init__(where + message)
        self.source, self.line, self.reason = source, line, message


class MacroError(ConfigError):
    """A macro whose expansion refers back to itself."""

    def __init__(self, chain):
        names = " -> ".join(chain)
        super().__init__(f'macro "{chain[-1]}" is defined in terms of itself ({names})')
        self.chain = chain


# ------------------------------------------------------------------ expansion

_REFERENCE = re.compile(r"\$(\$?)([A-Za-z_]*)\(")


def _closing_paren(text, start):
    """Index of the ``)`` matching the ``(`` at ``start - 1``, or -1."""
    depth = 1
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


class _Expander:
    """One expansion: the lookup, the environment, and a memo of names
    already expanded (so shared macros are expanded once)."""

    def __init__(self, lookup, environ):
        self.lookup = lookup
        self.environ = os.environ if environ is None else environ
        self.memo = {}

    def text(self, text, stack):
        out, i = [], 0
        while True:
            j = text.find("$", i)
            if j < 0:
                out.append(text[i:])
                break
            out.append(text[i:j])
            i = self.reference(text, j, out, stack)
            if len(out) > 64 and sum(len(part) for part in out) > MAX_EXPANSION:
                raise ConfigError("macro expansion is too long (runaway definitions?)")
        result = "".join(out)
        if len(result) > MAX_EXPANSION:
            raise ConfigError("macro expansion is too long (runaway definitions?)")
        return result

    def reference(self, text, j, out, stack):
        """Expand the reference starting at ``text[j] == '$'``; return the
        index after it."""
        m = _REFERENCE.match(text, j)
        end = _closing_paren(text, m.end()) if m else -1
        if end < 0:
            out.append("$")
            return j + 1
        body = text[m.end():end]
        if m.group(1):  # $$(...): match-time expansion, not ours
            out.append(text[j:end + 1])
        elif m.group(2).upper() == "ENV":
            out.append(self.function("ENV", body, stack))
        elif m.group(2)[:1] == "F" and set(m.group(2)[1:].upper()) <= _FILE_LETTERS:
            out.append(self.filename(m.group(2).upper(), body, stack))
        elif m.group(2).upper() in FUNCTIONS:
            out.append(self.function(m.group(2).upper(), body, stack))
        elif m.group(2):  # another $FUNCTION(...): left as written
            out.append(text[j:end + 1])
        else:
            out.append(self.macro(self.text(body, stack), stack))
        return end + 1

    def function(self, function, body, stack):
        """``$ENV(...)``, ``$INT(...)``, ``$RANDOM_INTEGER(...)`` ... (``FUNCTIONS``),
        by the code of submit descriptions (``condor.macrofuncs``)."""
        from gridtools.formats.condor.macrofuncs import FUNCTIONS
        from gridtools.formats.condor.macros import MacroProblem
        try:
            return FUNCTIONS[function](_Functions(self, stack), function, body, 0)
        except MacroProblem as exc:
            raise ConfigError(str(exc)) from None

    def filename(self, function, body, stack):
        """``$F<letters>(name)``: parts of the file name macro ``name`` holds (or of the
        text itself when no macro has that name), as submit descriptions read them."""
        from gridtools.formats.condor.macros import _file_function
        return _file_function(_Functions(self, stack), function, body, 0)

    def macro(self, body, stack):
        name, colon, default = body.partition(":")
        name = name.strip()
        key = name.lower()
        if key in self.memo:
            return self.memo[key]
        if key in (k.lower() for k in stack):
            raise MacroError(list(stack) + [name])
        raw = self.lookup(name)
        if raw is None:
            return default if colon else ""
        value = self.text(raw, stack + (name,))
        self.memo[key] = value
        return value


#: the letters of a ``$F`` filename macro after its F (HTCondor's: any of them, any case)
_FILE_LETTERS = frozenset("PNXDQABFWU")


#: the function forms of ``$NAME(...)`` a configuration expands (``condor.macrofuncs``);
#: another is left as written
FUNCTIONS = ("INT", "REAL", "STRING", "EVAL", "SUBSTR", "CHOICE", "BASENAME", "DIRNAME",
             "RANDOM_CHOICE", "RANDOM_INTEGER")


class _Functions:
    """An expansion as the functions of submit descriptions (``condor.macrofuncs``)
    see one. ``names_only``: ``$SUBSTR`` of a name no macro has is empty, as
    HTCondor's configuration reads it."""

    names_only = True

    def __init__(self, expander, stack):
        import random
        self.expander, self.stack, self.environ = expander, stack, expander.environ
        self.lookup, self.rng = expander.lookup, random.Random

    def expand(self, text, _depth=0):
        return self.expander.text(text, self.stack)

    def value_of(self, arg, _depth=0):
        """The expanded value of macro ``arg``, or ``arg`` expanded when it names none."""
        if self.expander.lookup(arg) is None:
            return self.expand(arg)
        return self.expander.macro(arg, self.stack)


def expand(text, lookup, environ=None, name=None):
    """Expand the macro references in ``text``. ``lookup(name)`` returns a
    name's raw (unexpanded) value or None when undefined; ``environ`` serves
    ``$ENV()`` (default os.environ); ``name`` is the macro being expanded,
    if any, for cycle detection. Raises MacroError on a cycle."""
    stack = (name,) if name else ()
    return _Expander(lookup, environ).text(text, stack)


def substitute_self(raw, name, previous):
    """``raw`` with its references to ``name`` itself (``$(name)``, ``$( NAME :default)``,
    any case) replaced by the previous raw value (or the reference's default, or
    nothing). Read by hand: a pattern compiled per name costs more than reading a
    whole configuration."""
    key, out, start = name.lower(), [], 0
    while True:
        at = raw.find("$(", start)
        if at < 0:
            return "".join(out) + raw[start:]
        found = _self_reference(raw, at + 2, key)
        if found is None:
            out.append(raw[start:at + 1])
            start = at + 1
            continue
        end, default = found
        out.append(raw[start:at])
        out.append(previous if previous is not None else default)
        start = end


def _self_reference(raw, at, key):
    """(end, default) of a reference to ``key`` whose name starts at or after blanks at
    ``at`` (just after ``$(``); None when there is none."""
    size = len(raw)
    while at < size and raw[at].isspace():
        at += 1
    if raw[at:at + len(key)].lower() != key:
        return None
    at += len(key)
    while at < size and raw[at].isspace():
        at += 1
    if at < size and raw[at] == ")":
        return at + 1, ""
    if at >= size or raw[at] != ":":
        return None
    end = at + 1
    while end < size and raw[end] not in "()":
        end += 1
    if end < size and raw[end] == ")":
        return end + 1, raw[at + 1:end]
    return None


# ------------------------------------------------------------ configuration

class Definition:
    """A macro's raw value and where it was defined (``line`` 0: nowhere); ``meta``, for
    one a use statement's template made: (category, template, the statement's line in
    the template counted from 0 among its lines that are not empty), as HTCondor names
    them (``, use ROLE:Personal+0``)."""

    __slots__ = ("name", "raw", "source", "line", "meta")

    def __init__(self, name, raw, source, line, meta=None):
        self.name, self.raw, self.source, self.line, self.meta = name, raw, source, line, meta

    def __repr__(self):
        return f"Definition({self.name!r}, {self.raw!r}, {self.source!r}, {self.line})"


class Config:
    """Macros read from configuration text, in definition order."""

    def __init__(self, defaults=None, environ=None, fallback=None):
        self._defs = {}
        self.environ = os.environ if environ is None else environ
        #: ``fallback(name)``: the raw value of a name no definition sets (a knob's
        #: default), or None; seen by expansion, not listed by ``definitions``
        self.fallback = fallback
        #: the prefixes a name is looked up with first, in order (HTCondor's local name
        #: and subsystem: ``LOCALNAME.NAME``, ``SUBSYS.NAME``, then ``NAME``)
        self.prefixes = ()
        self.global_file = None
        self.local_files = []
        #: the ``warning`` statements read, each as HTCondor words it
        self.warnings = []
        for name, value in (defaults or {}).items():
            self.define(name, value, DETECTED_SOURCE if name in DETECTED else DEFAULT_SOURCE, 0)

    def define(self, name, raw, source="<string>", line=0, meta=None):
        """Set ``name`` to the raw text ``raw``; self-references append."""
        key = name.lower()
        old = self._defs.get(key)
        raw = substitute_self(raw, name, old.raw if old else self.raw(name))
        self._defs.pop(key, None)
        self._defs[key] = Definition(name, raw, source, line, meta)

    def definition(self, name):
        """The Definition of ``name`` (under the first of ``prefixes`` that has one, else
        itself), or None."""
        key = name.lower()
        for prefix in self.prefixes:
            found = self._defs.get(prefix.lower() + "." + key)
            if found is not None:
                return found
        return self._defs.get(key)

    def raw(self, name):
        """The unexpanded value of ``name`` (its fallback when no definition sets it), or
        None when undefined."""
        d = self.definition(name) if self.prefixes else self._defs.get(name.lower())
        if d is None:
            return self.fallback(name) if self.fallback else None
        return d.raw

    def get(self, name, default=None):
        """The expanded value of ``name``, or ``default`` when undefined."""
        d = self.definition(name) if self.prefixes else self._defs.get(name.lower())
        if d is None:
            return default
        return expand(d.raw, self.raw, self.environ, name=d.name)

    def expand(self, text):
        """Expand macro references in arbitrary text."""
        return expand(text, self.raw, self.environ)

    def __contains__(self, name):
        return name.lower() in self._defs

    def definitions(self):
        """All definitions, in the order they were (last) made."""
        return list(self._defs.values())

    def sources(self):
        return [f for f in [self.global_file] + self.local_files if f]

    def read_text(self, text, source="<string>", depth=0, at=None, meta=None):
        """Read configuration text; ``source`` names it in messages. ``at`` is the line
        of the use statement when the text is a template's: its definitions and errors
        are said to come from there; ``meta`` is then [category, template] (see
        Definition), emptied, as in HTCondor, once a use statement of the template is
        read."""
        blocks = None           # (condor_conditions.Blocks, from the text's first if on)
        offsets = _line_offsets(text) if meta else None
        for kind, name, value, line in parse_lines(text, source):
            where = (meta[0], meta[1], offsets[line - 1]) if meta and meta[0] else None
            line = at or line
            if kind in _BLOCK_WORDS:
                if blocks is None:
                    from gridtools.formats.condor_conditions import Blocks
                    blocks = Blocks(self, source)
                blocks.step(kind, value, line)
            elif blocks is not None and not blocks.reading:
                continue
            elif kind == "define":
                self.define(name, value, source, line, where)
            elif kind == "include":
                self._include(value, name == "ifexist", source, line, depth)
            elif kind == "use":
                self._use(name, value, source, line, depth)
                if meta:
                    meta[0] = None
            else:
                self._message(kind, value, source, line)
        if blocks is not None:
            blocks.close()

    def read_file(self, path, depth=0):
        """Read a configuration file: a plain file (a link to one is followed); anything
        else, a FIFO say, is refused at once, never waited on."""
        try:
            with open(ospaths.open_plain(path), encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError as exc:
            raise ConfigError(f"cannot read configuration file {path}: {exc.strerror}") from None
        self.read_text(text, path, depth)

    def _include(self, target, optional, source, line, depth):
        path = self.expand(target).strip()
        if depth >= MAX_INCLUDE_DEPTH:
            raise ConfigSyntaxError("includes nested too deeply", source, line)
        if not os.path.isabs(path) and source and not source.startswith("<"):
            path = os.path.join(os.path.dirname(source), path)
        if optional and not os.path.exists(path):
            return
        self.read_file(path, depth + 1)

    def _use(self, category, names, source, line, depth):
        """Read the templates of a ``use category : names`` statement."""
        from gridtools.formats import condor_metaknobs
        category = self.expand(category).strip()
        if not category:
            raise ConfigSyntaxError(f"use needs a keyword before : {names}", source, line)
        for name, args in condor_metaknobs.split(names):
            found = condor_metaknobs.find(category, name)
            if found is None:
                raise ConfigSyntaxError(f"use {category}: does not recognise {name}", source, line)
            if depth >= MAX_INCLUDE_DEPTH:
                raise ConfigSyntaxError(f"use {category}: {name} nesting too deep", source, line)
            text = condor_metaknobs.substitute(found[2], args)
            try:
                self.read_text(text, source, depth + 1, at=line, meta=[found[0], found[1]])
            except ConfigSyntaxError as exc:
                if (exc.source, exc.line) == (source, line):
                    raise
                raise ConfigSyntaxError(f"use {category}: {name} is invalid ({exc.reason})",
                                        source, line) from None

    def _message(self, kind, text, source, line):
        """An ``error`` (raised) or ``warning`` (kept) statement, in HTCondor's words."""
        said = f'{kind.capitalize()} "{source}", Line {line}: {self.expand(text).strip()}'
        if kind == "error":
            raise ConfigError(said)
        self.warnings.append(said)


def _line_offsets(text):
    """For each line of a template (by index), how many lines before it are not empty
    (HTCondor counts a template's lines so, from 0)."""
    offsets, count = [], 0
    for line in text.split("\n"):
        offsets.append(count)
        count += bool(line)
    return offsets


# -------------------------------------------------------------------- lexing

_DEFINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*)\s*=(.*)$", re.DOTALL)
_HEREDOC = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*)\s*@=\s*(\S+)\s*$")
_INCLUDE = re.compile(r"@?include\s*(ifexist)?\s*:\s*(.+)$", re.IGNORECASE)
_USE = re.compile(r"@?use(?:\s+([^=:]*?))?\s*:(.*)$", re.IGNORECASE | re.DOTALL)
_MESSAGE = re.compile(r"@?(error|warning)(?:\s[^=:]*)?:(.*)$", re.IGNORECASE | re.DOTALL)
#: the one-line statements, in the order they are tried: (pattern, its kind, its name);
#: the second group of each pattern is the statement's value
_ONE_LINE = ((_INCLUDE, lambda m: "include", lambda m: (m.group(1) or "").lower()),
             (_DEFINE, lambda m: "define", lambda m: m.group(1)),
             (_USE, lambda m: "use", lambda m: (m.group(1) or "").strip()),
             (_MESSAGE, lambda m: m.group(1).lower(), lambda m: ""))


def logical_lines(text):
    """(first line number, text) for each logical line: ``\\`` at the end of
    a line joins the next one, whose leading blanks are dropped."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        start, parts = i + 1, []
        line = lines[i]
        while line.rstrip().endswith("\\") and i + 1 < len(lines):
            parts.append(line.rstrip()[:-1])
            i += 1
            line = lines[i].lstrip()
        parts.append(line.rstrip()[:-1] if line.rstrip().endswith("\\") else line)
        i += 1
        yield start, "".join(parts)


def parse_lines(text, source="<string>"):
    """Yield (kind, name, value, line) for each statement of configuration text:
    ("define", name, raw value), ("include", "ifexist" or "", path), ("use",
    category, template names and arguments), ("error" or "warning", "", text), and
    ("if" or "elif", "", condition) / ("else" or "endif", "", ""). An ``@=`` value is
    one statement wherever it stands."""
    pending = None  # (name, tag, first line, collected lines) of an @= value
    for number, line in logical_lines(text):
        if pending is not None:
            if line.strip() == "@" + pending[1]:
                yield "define", pending[0], "\n".join(pending[3]), pending[2]
                pending = None
            else:
                pending[3].append(line)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        pending = yield from _statement(stripped, source, number)
    if pending is not None:
        raise ConfigSyntaxError(f"no closing @{pending[1]} for {pending[0]}", source, pending[2])


def _statement(stripped, source, number):
    """Yield the statement on one line; return the start of an @= value."""
    if stripped[0] in "eEiI":
        word, *rest = stripped.split(None, 1)
        word = word.lower()
        if word in _BLOCK_WORDS:
            yield word, "", rest[0] if rest and word in ("if", "elif") else "", number
            return None
    m = _HEREDOC.match(stripped)
    if m:
        return (m.group(1), m.group(2), number, [])
    for pattern, kind, name in _ONE_LINE:
        m = pattern.match(stripped)
        if m:
            yield kind(m), name(m), m.group(2).strip(), number
            return None
    raise ConfigSyntaxError(f"expected NAME = value, found {stripped[:40]!r}", source, number)


def render(config, expanded=False):
    """Configuration text defining every macro of ``config`` (``@=`` for
    values with newlines); reading it back gives the same raw values."""
    out = []
    for d in config.definitions():
        value = config.get(d.name) if expanded else d.raw
        if "\n" in value or value.rstrip().endswith("\\"):
            out.append(f"{d.name} @=end\n{value}\n@end")
        else:
            out.append(f"{d.name} = {value}")
    return "\n".join(out) + ("\n" if out else "")


# ------------------------------------------------------------------ loading

def integer(config, name, default, minimum=None):
    """Knob ``name`` of ``config`` as an integer, as HTCondor's param_integer reads one:
    ``default`` when it is undefined or empty; a whole number, else a ClassAd expression
    whose value is one (a real is cut to its whole part, a boolean is 0 or 1). Raises
    ConfigError in HTCondor's words when it is neither, or below ``minimum``."""
    text = config.get(name)
    if text is None or not text.strip():
        return default
    text = text.strip()
    lowest = "-9223372036854775808" if minimum is None else str(minimum)
    wanted = f"Please set it to an integer expression in the range {lowest} to 9223372036854775807 " \
             f"(default {default})."
    try:
        value = int(text, 10)
    except ValueError:
        from gridtools.classad import parse
        from gridtools.classad.parser import ClassAdSyntaxError
        try:
            value = parse(text).eval()
        except ClassAdSyntaxError:
            raise ConfigError(f"Invalid expression for {name} ({text}) in condor configuration.  "
                              + wanted) from None
        if type(value) is float and value == value and abs(value) != float("inf"):
            value = int(value)
        elif type(value) is bool:
            value = int(value)
        elif type(value) is not int:
            raise ConfigError(f"Invalid result (not an integer) for {name} ({text}) in condor "
                              "configuration.  " + wanted)
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} in the condor configuration is too low ({text}).  " + wanted)
    return value


def boolean(config, name, default):
    """Knob ``name`` of ``config`` as a boolean, as HTCondor's param_boolean reads one:
    ``default`` when it is undefined or empty; ``true`` or ``false`` in any case, else
    a ClassAd expression whose value is a boolean or a number (true unless 0). Raises
    ConfigError when it is none of these."""
    text = config.get(name)
    if text is None or not text.strip():
        return default
    text = text.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    from gridtools.classad import parse
    from gridtools.classad.parser import ClassAdSyntaxError
    try:
        value = parse(text).eval()
    except ClassAdSyntaxError:
        value = None
    if type(value) in (bool, int, float) and value == value:
        return bool(value)
    raise ConfigError(f"{name} in the condor configuration is not a boolean ({text}).  "
                      f"Please set it to True or False (default is {default}).")


def boolean_or(config, name, default):
    """``boolean``, but ``default`` for a value that is no boolean: for what a bad knob
    must not stop (a job's start, a map's reading)."""
    try:
        return boolean(config, name, default)
    except ConfigError:
        return default


def builtin_defaults():
    """Macros every configuration starts with (HTCondor's predefined ones)."""
    host = os.uname().nodename
    cpus = os.cpu_count() or 1
    return {
        "DOLLAR": "$",
        "HOSTNAME": host.split(".")[0],
        "FULL_HOSTNAME": host,
        "DETECTED_CPUS": str(cpus),
        "DETECTED_CORES": str(cpus),
        "DETECTED_MEMORY": str(_memory_mb()),
        "OPSYS": "LINUX" if os.uname().sysname == "Linux" else os.uname().sysname.upper(),
        "ARCH": os.uname().machine.upper(),
        "SUBSYSTEM": "TOOL",
        "USERNAME": _user_name(),
        "CondorIsAdmin": "true" if os.geteuid() == 0 else "false",
    }


def _user_name():
    """The name of the user this process runs as (HTCondor's USERNAME)."""
    import pwd
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def _memory_mb():
    """This machine's physical memory in megabytes (HTCondor's DETECTED_MEMORY)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError):
        return 0


def locate(default_path, environ=None):
    """The global configuration file: ``CONDOR_CONFIG`` when set, else
    ``default_path`` (the cell's ``etc/condor_config``)."""
    environ = os.environ if environ is None else environ
    return environ.get("CONDOR_CONFIG") or default_path


def load(global_path, environ=None, defaults=None, fallback=None, prefixes=()):
    """Read the global file, the local files it names and the environment
    overrides; return the Config (``fallback`` as Config takes it; the knobs'
    defaults, ``condor_params.default``, stand behind it, so a reference such as
    ``$(ETC)`` means for every command what condor_config_val prints; ``prefixes``:
    see Config). Raises ConfigError on any problem."""
    environ = os.environ if environ is None else environ
    config = Config(builtin_defaults() if defaults is None else defaults, environ, _with_macros(fallback))
    config.prefixes = tuple(prefixes)
    if global_path != "ONLY_ENV":
        config.global_file = global_path
        config.read_file(global_path)
    overrides = _env_overrides(environ)
    for path in _local_files(config, overrides):
        config.local_files.append(path)
        config.read_file(path)
    for name, value in overrides:
        config.define(name, value, ENV_SOURCE, 0)
    return config


def _with_macros(fallback):
    """``fallback``, then the knobs' defaults (``condor_params.default``: the cell's
    folders ETC, SPOOL ..., and the macros every HTCondor configuration has, MINUTE ...)."""
    from gridtools.formats.condor_params import default

    def lookup(name):
        found = fallback(name) if fallback is not None else None
        return default(name) if found is None else found
    return lookup


def _env_overrides(environ):
    return [(key[len(ENV_PREFIX):], value) for key, value in environ.items()
            if key.upper().startswith(ENV_PREFIX) and len(key) > len(ENV_PREFIX)]


def _local_files(config, overrides):
    """LOCAL_CONFIG_FILE's files in order, then LOCAL_CONFIG_DIR's; missing
    files are an error unless REQUIRE_LOCAL_CONFIG_FILE is false."""
    override = {name.lower(): value for name, value in overrides}

    def lookup(name):
        return override.get(name.lower(), config.raw(name))

    def value(name, default=""):
        raw = lookup(name)
        return default if raw is None else expand(raw, lookup, config.environ, name)

    files = [f for f in re.split(r"[,\s]+", value("LOCAL_CONFIG_FILE")) if f]
    if value("REQUIRE_LOCAL_CONFIG_FILE", "true").strip().lower() in ("false", "no", "0"):
        files = [f for f in files if os.path.exists(f)]
    directory = value("LOCAL_CONFIG_DIR").strip()
    if directory and os.path.isdir(directory):
        pattern = value("LOCAL_CONFIG_DIR_EXCLUDE_REGEXP", DEFAULT_DIR_EXCLUDE)
        try:
            exclude = re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"LOCAL_CONFIG_DIR_EXCLUDE_REGEXP: bad expression: {exc}") from None
        for entry in sorted(os.listdir(directory)):
            path = os.path.join(directory, entry)
            if os.path.isfile(path) and not exclude.match(entry):
                files.append(path)
    return files
