"""The "name value" layout that qconf uses for most configuration objects.

One attribute per line: the name, padded to a per-object column width, one
blank, then the value. A line ending in a backslash continues on the next
line. Lines starting with ``#`` and blank lines are ignored when reading.

Writing follows qconf byte for byte, including how it breaks long lines:
a line longer than ``MAX_LINE`` characters is broken at the last blank or
comma that keeps the piece within the limit, the piece ends in `` \\`` and
the next line is indented to the column where the value started. With
``SGE_SINGLE_LINE`` in the environment (any value, even empty) lines are
never broken, as qconf's flat file writer then leaves them whole.

A ``Schema`` is the ordered list of ``Field`` objects of one object kind; it
reads text into a dict (field order, typed values), writes a dict back and
checks a dict built in code. Errors are ``FieldError`` (a ``ConfigError``)
carrying the attribute name and, when known, the line number.
"""

import os

from gridtools.errors import ConfigError
from gridtools.formats.sge.codecs import ValueProblem

#: lines longer than this are broken with " \" continuations, as qconf does
MAX_LINE = 80


class FieldError(ConfigError):
    """A configuration error tied to one attribute (``field``) and maybe a line."""

    def __init__(self, message, field=None, line=None):
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.field = field
        self.line = line


class Refusal(FieldError):
    """A refusal in Grid Engine's own words, shown as it is (no "error:" before it)."""


def problem_line(exc):
    """The line qconf shows for a ConfigError: a Refusal as it is, others after "error: "."""
    return str(exc) if isinstance(exc, Refusal) else f"error: {exc}"


def copy_value(value):
    """A copy of a default so templates never share mutable values."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


class Field:
    """One attribute: its name, codec, template default, and whether it may be absent."""

    __slots__ = ("name", "codec", "default", "optional")

    def __init__(self, name, codec, default=None, optional=False):
        self.name = name
        self.codec = codec
        self.default = default
        self.optional = optional


def logical_lines(text, skip_comments=True):
    """``(line number, text)`` of each logical line, continuations joined.

    A backslash at the end of a line joins it with the next; the break is
    replaced by one blank, or by nothing after a comma (so that a list broken
    after a comma reads back unchanged).
    """
    result, pending, start = [], None, 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if pending is not None:
            piece = line.strip()
            pending = pending + ("" if pending.endswith(",") or not piece else " ") + piece
        elif not line.strip() or (skip_comments and line.lstrip().startswith("#")):
            continue
        else:
            pending, start = line, number
        if pending.endswith("\\"):
            pending = pending[:-1].rstrip()
            continue
        if pending.strip():
            result.append((start, pending))
        pending = None
    if pending is not None and pending.strip():
        result.append((start, pending))
    return result


def split_attr(line):
    """``(name, value text)`` of one logical line."""
    parts = line.split(None, 1)
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def _value_column(line):
    """Index where the second word starts (after the first blank or '=' run)."""
    i = 0
    while i < len(line) and not line[i].isspace() and line[i] != "=":
        i += 1
    while i < len(line) and (line[i].isspace() or line[i] == "="):
        i += 1
    return i


def _break_point(text, start, stop):
    """``(index, keep)`` of the last blank or comma in ``text[stop+1..start]``.

    A comma exactly at ``start`` does not count (no room for its " \\");
    if none is found, the first blank or comma after ``start`` is used.
    """
    for idx in range(start, stop, -1):
        if text[idx].isspace():
            return idx, idx
        if idx < start and text[idx] == ",":
            return idx, idx + 1
    for idx in range(start, len(text)):
        if text[idx].isspace():
            return idx, idx
        if text[idx] == ",":
            return idx, idx + 1
    return None


def wrap_line(line, limit=MAX_LINE):
    """Break one long line the way qconf does (see the module docstring)."""
    if len(line) <= limit or single_line():
        return line
    indent = _value_column(line)
    if indent >= limit - 2:
        return line                     # a name too long to leave room for a value
    pieces, rest, first = [], line, True
    while True:
        room = limit if first else limit - indent
        if not first:
            rest = rest.lstrip()
        if len(rest) <= room:
            pieces.append(rest)
            break
        cut = _break_point(rest, room - 2, indent if first else 0)
        if cut is None:
            pieces.append(rest)
            break
        idx, keep = cut
        pieces.append(rest[:keep])
        rest, first = rest[idx + 1:], False
    return (" \\\n" + " " * indent).join(pieces)


def single_line():
    """True when ``SGE_SINGLE_LINE`` is set: qconf then breaks no long line."""
    return "SGE_SINGLE_LINE" in os.environ


def as_shown(text):
    """``text`` (stored, with qconf's line breaks) as qconf shows it now: unchanged, or with
    ``SGE_SINGLE_LINE`` set every continuation joined again (a break after a comma
    left the comma at the end of the piece, a break at a blank dropped the blank)."""
    if not single_line() or "\\\n" not in text:
        return text
    import re
    return re.sub(r"(,?) \\\n[ \t]*", lambda m: m.group(1) or " ", text)


def format_attr(name, value_text, width):
    """One attribute line, name padded to ``width``, long values broken."""
    return wrap_line(f"{name:<{width}} {value_text}")


class Schema:
    """The fields of one object kind, in the order qconf writes them.

    ``width`` is the padding of the name column. With ``open_codec`` set,
    attributes not in the schema are accepted (kept in file order, after the
    known ones) and read with that codec; otherwise they are refused.
    """

    def __init__(self, fields, width, open_codec=None):
        self.fields = tuple(fields)
        self.width = width
        self.open_codec = open_codec
        self.by_name = {f.name: f for f in self.fields}

    def codec_for(self, name):
        field = self.by_name.get(name)
        return field.codec if field is not None else self.open_codec

    def parse(self, text):
        """Typed dict from text; raises FieldError."""
        return self.parse_lines(logical_lines(text))

    def parse_lines(self, lines):
        found = {}
        for number, line in lines:
            name, value_text = split_attr(line)
            codec = self.codec_for(name)
            if codec is None:
                raise FieldError(f'unknown attribute "{name}"', name, number)
            if name in found:
                raise FieldError(f'attribute "{name}" is given twice', name, number)
            if not value_text:
                raise FieldError(f'missing value for attribute "{name}"', name, number)
            try:
                found[name] = codec.parse(value_text)
            except ValueProblem as err:
                shown = value_text if len(value_text) <= 80 else value_text[:60] + "..."
                raise FieldError(f'invalid value "{shown}" for attribute "{name}": {err}',
                                 name, number) from None
        return self._ordered(found)

    def _ordered(self, found):
        result = {}
        for field in self.fields:
            if field.name in found:
                result[field.name] = found.pop(field.name)
            elif not field.optional:
                raise FieldError(f'missing attribute "{field.name}"', field.name)
        result.update(found)
        return result

    def value_text(self, obj, name):
        """The text of one attribute of ``obj``; raises FieldError if it is invalid."""
        codec = self.codec_for(name)
        if codec is None:
            raise FieldError(f'unknown attribute "{name}"', name)
        try:
            text = codec.check(obj[name])
        except ValueProblem as err:
            raise FieldError(f'invalid value "{_shown(obj[name])}" for attribute "{name}": {err}',
                             name) from None
        if text.endswith("\\"):       # it would join the next line when read back
            raise FieldError(f'invalid value "{_shown(obj[name])}" for attribute "{name}": '
                             "a value may not end in a backslash", name)
        return text

    def names_in(self, obj):
        """Attribute names of ``obj`` to write: schema order, then extras."""
        for field in self.fields:
            if field.name not in obj and not field.optional:
                raise FieldError(f'missing attribute "{field.name}"', field.name)
        known = [f.name for f in self.fields if f.name in obj]
        return known + [name for name in obj if name not in self.by_name]

    def render(self, obj):
        """Text as qconf shows it (each line ends with a newline)."""
        return "".join(format_attr(name, self.value_text(obj, name), self.width) + "\n"
                       for name in self.names_in(obj))

    def check(self, obj):
        """Raise FieldError unless every attribute of ``obj`` is present and valid."""
        if not isinstance(obj, dict):
            raise ConfigError("a configuration object must be a dict of attributes")
        for name in self.names_in(obj):
            self.value_text(obj, name)

    def template(self, **values):
        """A new object from the field defaults, with ``values`` replacing some."""
        obj = {f.name: copy_value(f.default) for f in self.fields if not f.optional}
        obj.update(values)
        return obj


def _shown(value):
    """A value as it appears in an error message."""
    overrides = getattr(value, "overrides", None)
    if overrides is not None:
        return ",".join([_shown(value.default), *(f"[{k}={_shown(v)}]" for k, v in overrides.items())])
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)
