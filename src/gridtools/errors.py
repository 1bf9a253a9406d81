"""Error classes. Each carries the exit code its command ends with.

Only ``gridtools.cli`` prints; everything below raises one of these with a
message that is ready to be shown to the user as one line.
"""


class GridError(Exception):
    """A failure a user can act on. ``str(err)`` is the line to print."""

    exit_code = 1

    def __init__(self, message, exit_code=None):
        super().__init__(message)
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
