"""Error classes. Each carries the exit code its command ends with.

Only ``gridtools.cli`` prints; everything below raises one of these with a
message that is ready to be shown to the user as one line.
"""


#: names of the control characters shown in messages by their escapes
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text):
    """``text`` with line breaks, control characters and undecodable bytes written as
    escapes (``\\n``, ``\\x1b``; an undecodable byte, which Python holds as a lone
    surrogate, as the byte: ``\\xff``): what a message quotes from its input can neither
    break it into several lines nor reach a terminal as a control sequence."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            code = ord(ch)
            if 0xdc80 <= code <= 0xdcff:            # a byte that did not decode
                code -= 0xdc00
            out.append(_ESCAPES.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"))
    return "".join(out)


class Lines(str):
    """A message of several lines, each made safe as ``one_line`` makes a message
    (see ``lines``): GridError keeps its line breaks."""


def lines(*parts):
    """One message of the lines ``parts`` (as the real commands print some: a sentence
    and then a hint or a usage), each escaped by ``one_line`` but for a leading tab."""
    return Lines("\n".join("\t" + one_line(part[1:]) if part.startswith("\t") else one_line(part)
                           for part in parts))


class GridError(Exception):
    """A failure a user can act on. ``str(err)`` is the line to print: one line,
    whatever the input it quotes (see ``one_line``), or the lines of a ``Lines``."""

    exit_code = 1

    def __init__(self, message, exit_code=None):
        super().__init__(message.rstrip("\n") if isinstance(message, Lines)
                         else one_line(str(message).rstrip("\n")))
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(GridError):
    """Bad command-line syntax (unknown option, missing argument)."""

    exit_code = 2


class InputError(GridError):
    """A value, file or expression that cannot be accepted."""


class NotFound(GridError):
    """A named job, queue, host or object does not exist."""


class PermissionDenied(GridError):
    """The caller may not do this."""


class ConfigError(GridError):
    """A configuration file or object is invalid."""


class SpoolError(GridError):
    """The cell's spool cannot be read or written."""


class SyntaxProblem(InputError):
    """Text in some format could not be parsed; carries a position if known."""

    def __init__(self, message, line=None, column=None):
        where = ""
        if line is not None:
            where = f"line {line}" + (f", column {column}" if column is not None else "") + ": "
        super().__init__(where + message)
        self.line = line
        self.column = column
