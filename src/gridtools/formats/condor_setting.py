"""One configuration setting sent to a daemon: ``condor_config_val -set "NAME = value"``
(``-rset`` alike) and ``-unset NAME`` (``-runset`` alike), as HTCondor's tool and
daemons take them apart.

``assigned_name(text)`` is the name an assignment sets (``NAME = value`` or
``NAME : value``; None when it is neither), ``valid_name(name)`` whether a name may
be set remotely, ``value_problem(text)`` why a text cannot be kept (None when it
can). A setting is kept as one line in a file of its own named after it, so a
name is letters, digits, ``_`` and ``.`` (starting with a letter or ``_``: no
``/``, nothing a path could be made of) and a text is one line of printable
characters of at most ``MAX_TEXT`` characters. ``split(text)`` gives the name and
the value of an assignment already found valid. Pure: no files.
"""

#: the longest assignment a daemon keeps
MAX_TEXT = 8192
#: the characters of a name besides letters and digits
_NAME_EXTRA = "_."


def assigned_name(text):
    """The name an assignment sets, as written (HTCondor: the text before the first
    ``=``, or before a ``:`` that comes first, its blanks trimmed), or None when there
    is neither separator or it starts with ``use`` (a template, not set remotely)."""
    text = text.lstrip()
    if text[:4].lower() == "use ":
        return None
    cut = [at for at in (text.find("="), text.find(":")) if at >= 0]
    if not cut:
        return None
    return text[:min(cut)].rstrip()


def shown_name(text):
    """The name part HTCondor's refusal of a malformed assignment quotes: the text up
    to its first ``=`` or ``:`` (all of it when it has neither)."""
    text = text.lstrip()
    cut = [at for at in (text.find("="), text.find(":")) if at >= 0]
    return text[:min(cut)] if cut else text


def valid_name(name):
    """True when ``name`` may be set remotely (see the module docstring)."""
    if not name or not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        return False
    return all(ch.isascii() and (ch.isalnum() or ch in _NAME_EXTRA) for ch in name)


def value_problem(text):
    """Why the assignment ``text`` cannot be kept, or None: it must be one line of
    printable text (no newline could start another statement in the file it is kept
    in) of at most MAX_TEXT characters, and not end in a backslash (which would
    continue it on a next line)."""
    if len(text) > MAX_TEXT:
        return f"it is longer than {MAX_TEXT} characters"
    if not text.replace("\t", " ").isprintable():
        return "it must be one line of printable characters"
    if text.rstrip().endswith("\\"):
        return "it must not end in a backslash"
    return None


def split(text):
    """(name, value) of a valid assignment: the value after the separator, its blanks
    trimmed."""
    name = assigned_name(text)
    rest = text.lstrip()[len(name):].lstrip()
    return name, rest[1:].strip()
