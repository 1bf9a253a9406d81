"""Job arguments and environments in their two submit syntaxes.

Arguments: see the module ``args``, which reads and writes both syntaxes.

Environment. The old syntax is ``NAME=value;NAME=value`` (no quoting); the
new one is wrapped in double quotes and quoted like new-syntax arguments,
entries separated by white space. Either way the job's ``Environment``
attribute holds the new form, but for a value in the old syntax given by the
``env`` command (HTCondor's sign of a preference for it), without
``environment2``: then the job's ``Env`` holds the old form and ``EnvDelim``
its separator (``set_environment``).
"""

from gridtools.errors import InputError, lines
from gridtools.formats.condor.args import _check_opened, _shown, is_new_syntax, join_v2, split_new, split_v2_args


def second_form(value, what, first, allow_first):
    """The value of ``arguments2`` or ``environment2`` (``what``: the command they stand
    for; ``first``: its value, None when not given; ``allow_first``: the value of
    allow_arguments_v1 or allow_environment_v1): the new syntax only, refused in
    HTCondor's words otherwise, and only beside the command itself when allowed."""
    from gridtools.errors import InputError, lines
    from gridtools.formats.condor.jobattrs import fail, flag
    if first is not None and not flag(f"allow_{what}_v1", allow_first):
        if what == "environment":          # (HTCondor breaks this one into lines)
            raise InputError(lines("ERROR: If you wish to specify both 'environment' and",
                                   "'environment2' for maximal compatibility with different",
                                   "versions of Condor, then you must also specify", "allow_environment_v1=true."))
        raise fail("If you wish to specify both 'arguments' and 'arguments2' for maximal compatibility with "
                   "different versions of Condor, then you must also specify allow_arguments_v1=true.")
    if not is_new_syntax(value):
        raise InputError(lines("ERROR: Expecting double-quoted input string (V2 format)." if what == "arguments"
                               else "ERROR: Expecting a double-quoted environment string (V2 format).",
                               _shown(value, what)))
    return join_v2(split_new(value)) if what == "arguments" else value


# ------------------------------------------------------------ environment

def parse_environment(value):
    """An ordered dict of NAME -> value from a submit ``environment``."""
    _check_opened(value, "environment")
    if is_new_syntax(value):
        entries = split_new(value, "environment")
    else:
        entries = [e for e in value.replace("\n", ";").split(";") if e.strip()]     # (a here-text: a line each)
    env = {}
    for entry in entries:
        name, eq, val = entry.partition("=")
        if not eq or not name.strip():
            raise _bad_entry(entry, value)
        env[name.strip() if not is_new_syntax(value) else name] = val
    return env


def _bad_entry(entry, value):
    """HTCondor's refusal of an environment entry without a name or without ``=``."""
    if "=" not in entry:
        first = f"ERROR: Missing '=' after environment variable '{entry}'."
    else:
        first = f"ERROR: missing variable in '{entry}'."
    return InputError(lines(first, _shown(value, "environment")))


def render_environment(env):
    """The ``Environment`` attribute's value: entries in name order."""
    return join_v2(f"{name}={env[name]}" for name in sorted(env))


def parse_environment_v2(text):
    """NAME -> value from an ``Environment`` attribute value."""
    env = {}
    for entry in split_v2_args(text):
        name, _, val = entry.partition("=")
        env[name] = val
    return env


#: the separator of an ``Env`` attribute's entries (HTCondor's on Unix)
V1_DELIMITER = ";"


def prefers_v1(cmd):
    """True when the job's environment goes into ``Env`` (the old form): the ``env``
    command gives a value in the old syntax and ``environment2`` gives none, as
    HTCondor's condor_submit decides."""
    value = cmd("env")
    if value is None or not value.strip() or value.lstrip().startswith('"'):
        return False
    second = cmd("environment2")
    return second is None or not second.strip()


def set_environment(ad, cmd, ctx):
    """The job's environment attributes: ``Env`` and ``EnvDelim`` when the description
    prefers the old form (``prefers_v1``), else ``Environment`` (jobattrs)."""
    from gridtools.formats.condor.jobattrs import set_environment as set_v2
    if not prefers_v1(cmd):
        set_v2(ad, cmd, ctx)
        return
    from gridtools.classad.draft import DraftAd
    made = DraftAd()
    set_v2(made, cmd, ctx)
    env = parse_environment_v2(made.eval("Environment") or "")
    ad["Env"] = V1_DELIMITER.join(f"{name}={env[name]}" for name in sorted(env)
                                  if not _unsafe_v1(name) and not _unsafe_v1(env[name]))
    ad["EnvDelim"] = V1_DELIMITER


def _unsafe_v1(text):
    """True for a name or value the old form cannot hold (one HTCondor leaves out of the
    variables getenv brings into it)."""
    return V1_DELIMITER in text or "\n" in text


def environment_of(ad):
    """NAME -> value of a job's environment: its ``Environment``, else its ``Env`` split
    at its ``EnvDelim`` (``;`` when none) and at line ends, as HTCondor's starter reads
    them: blanks before a name are dropped, an entry without ``=`` is left out."""
    text = ad.eval("Environment")
    if isinstance(text, str):
        return parse_environment_v2(text) if text else {}
    text = ad.eval("Env")
    if not isinstance(text, str) or not text:
        return {}
    delim = ad.eval("EnvDelim")
    delim = delim[:1] if isinstance(delim, str) and delim else V1_DELIMITER
    env = {}
    for entry in text.replace("\n", delim).split(delim):
        name, eq, value = entry.lstrip().partition("=")
        if name and eq:
            env[name] = value
    return env
