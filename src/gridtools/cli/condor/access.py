"""The security level a command needs at a daemon, checked before the command looks at
any job (HTCondor dialect; the rules are ``gridtools.seclevels``).

``refused(level, subsystem)`` is None when the caller may act at ``level``
("READ", "WRITE") at the daemon ``subsystem`` ("SCHEDD", "COLLECTOR" ...),
else the caller's Identity, for the command to word the refusal as its
HTCondor namesake does (``denied_line``). It reads the configuration's
language only when the configuration could restrict the level
(``open_to_all``): the hot commands (condor_q, condor_submit, condor_rm)
pay one read of the global file, with nothing imported beyond what they
load anyway.
"""

import posix

from gridtools import cell, ospaths


def refused(level, subsystem):
    """The caller's Identity when ``level`` at ``subsystem`` does not allow it, else None."""
    if open_to_all(level):
        return None
    from gridtools import seclevels
    from gridtools.cli.condor import machineviews
    found, who = machineviews.verdict(seclevels.Level(level), subsystem)
    return None if found.allowed else who


def denied_line(who):
    """What an HTCondor tool prints when a daemon refused it."""
    from gridtools import seclevels
    return seclevels.denied_line(who)


def _restricting(level):
    """What a line of the configuration names (in lower case) when it could restrict
    ``level`` or read more files: ALLOW_<LEVEL>, DENY_<LEVEL>, their HOST and daemon
    variants, includes, LOCAL_CONFIG_FILE and LOCAL_CONFIG_DIR. (A use statement,
    which may set them too, is found by ``_uses_templates``.)"""
    low = level.lower()
    return (f"allow_{low}", f"deny_{low}", "include", "local_config")


def open_to_all(level):
    """True when the cell's configuration lets every caller act at ``level``, seen without
    reading its language: no ``_CONDOR_`` variable of the environment names a setting of
    ``_restricting(level)``, and the global file (``CONDOR_CONFIG``, else the cell's
    condor_config) names one only in comments and has no other line that is not ASCII.
    (The full check, ``seclevels.verify``, finds the same: a level without ALLOW and
    DENY lists allows everybody.) False when that cannot be seen so simply."""
    names = _restricting(level)
    variables = condor_variables()
    if any(name.upper().encode() in key for key in variables for name in names):
        return False
    lowered = _global_text()
    if lowered is None:
        return False
    settings = _global_settings(lowered)
    return settings.isascii() and not _uses_templates(settings) and not any(name in settings for name in names)


def _uses_templates(lowered):
    """True when a line of ``lowered`` (a configuration's text in lower case) starts, after
    blanks and an optional ``@``, with ``use`` and a blank: a use statement, whose
    templates may set any knob (a comment's line starts with ``#``)."""
    at = lowered.find("use")
    while at >= 0:
        start = lowered.rfind("\n", 0, at) + 1
        if lowered[start:at].strip() in ("", "@") and lowered[at + 3:at + 4] in (" ", "\t"):
            return True
        at = lowered.find("use", at + 3)
    return False


def _global_settings(lowered):
    """The lines of ``lowered``, the global configuration file's text in lower case
    (``_global_text``), that are not blank or comments, each without its leading
    blanks, joined: what the quick looks search (a fraction of the file, which is
    mostly comments). Made once for each reading of the file's text."""
    if _SETTINGS and _SETTINGS[0] is lowered:
        return _SETTINGS[1]
    settings = "\n".join(_setting_lines(lowered))
    _SETTINGS[:] = [lowered, settings]
    return settings


#: (the text _global_text gave, its setting lines joined) of the last ``_global_settings``
_SETTINGS = []


def condor_variables():
    """The names of the environment's ``_CONDOR_`` variables, in upper case."""
    if b"_CONDOR_" not in b"\0".join(posix.environ).upper():
        return []               # (the common case, seen in one pass over the names)
    return [key.upper() for key in posix.environ if key[:8].upper() == b"_CONDOR_"]


def _global_text():
    """The global configuration file's text in lower case ("" for ONLY_ENV), None when
    it cannot be read. The last text read is kept with the file's identity and times,
    and given again while they are the same (a command asks more than once)."""
    path = ospaths.getenv("CONDOR_CONFIG") or cell.etc("condor_config")
    if path == "ONLY_ENV":
        return ""
    try:
        fd = ospaths.open_plain(path)
    except OSError:
        return None
    try:
        st = posix.fstat(fd)
        key = (path, st.st_ino, st.st_dev, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
        if _LAST and _LAST[0] == key:
            return _LAST[1]
        with open(fd, "rb", buffering=0, closefd=False) as fh:
            text = fh.readall().decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        posix.close(fd)
    lowered = text.replace("\r\n", "\n").replace("\r", "\n").lower()    # lines as text mode reads them
    _LAST[:] = [key, lowered]
    return lowered


#: (file key, lowered text) of the last reading (see _global_text)
_LAST = []


def may_set(name):
    """False when the configuration surely leaves ``name`` at its default: neither the
    environment (``_CONDOR_``) nor the global file names it, nor does the file include
    others or use templates. True otherwise (the caller then reads the configuration's
    language)."""
    return bool(settable((name,)))


def settable(names):
    """The knobs of ``names`` the configuration may set (see ``may_set``), found with one
    look at it."""
    variables = condor_variables()
    lowered = _global_text()
    if lowered is None:
        return list(names)
    settings = _global_settings(lowered)
    if "include" in settings or "local_config" in settings or _uses_templates(settings):
        return list(names)
    return [name for name in names
            if any(name.upper().encode() in key for key in variables) or name.lower() in settings]


def _setting_lines(text):
    """The lines of configuration text that are not blank or comments."""
    for line in text.split("\n"):
        line = line.lstrip()
        if line and not line.startswith("#"):
            yield line
