"""One-name-per-line lists: managers, operators, admin hosts, submit hosts.

``qconf -sm`` / ``-so`` / ``-sh`` / ``-ss`` print one name per line; the
object is a list of names in that order. Blank lines and ``#`` comments are
ignored when reading; an empty list renders as empty text.
"""

from gridtools.formats.sge.attrfile import FieldError
from gridtools.formats.sge.names import check_host_name, check_object_name

#: list kinds and whether they hold host names
LIST_KINDS = {"managers": False, "operators": False, "adminhosts": True, "submithosts": True}


def parse(text):
    """The names of a list file."""
    names = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if len(stripped.split()) != 1:
            raise FieldError(f'expected one name per line, found "{stripped}"', None, number)
        names.append(stripped)
    return names


def render(names):
    """One name per line."""
    return "".join(name + "\n" for name in names)


def validate(kind, names, known=None):
    """Raise ConfigError for malformed, reserved or repeated names."""
    hosts = LIST_KINDS[kind]
    seen = set()
    for name in names:
        if hosts:
            check_host_name(name, kind)
        else:
            check_object_name(name, "user", kind)
        key = name.lower() if hosts else name
        if key in seen:
            raise FieldError(f'"{name}" is listed twice', kind)
        seen.add(key)
