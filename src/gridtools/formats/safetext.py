"""Text from users made safe to log and to print on someone else's terminal.

Job names, paths, context values and environments come from users; printed
raw, a newline forges lines of a log or of qstat's table and an escape
sequence drives the reader's terminal. ``escape`` turns every control
character (C0, DEL, C1) into visible text (``\\n``, ``\\t``, ``\\x1b``);
``for_terminal`` does the same but keeps newlines and tabs, for whole
outputs whose line structure is the program's own. A byte that was not
UTF-8 (held as a lone surrogate) is left to the stream's ``backslashreplace``
error handler of the daemon's log, so it shows there as ``\\udcff``; a
command's output (``SafeStream``) writes such bytes back as they came, as
Grid Engine's programs do, except those that would be C1 control
characters (0x80-0x9f), which it shows as ``\\x9b``; ``unicode_only`` makes
them U+FFFD for documents a parser reads whole (JSON, XML).
"""

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_CONTROLS = (*range(32), 127, *range(0x80, 0xA0))

_TABLES = {}


def _table(name):
    """A str.translate table, built on first use (a command whose output and input are
    plain text never needs one): ``escape``, every control character; ``terminal``, the
    same but newline and tab stay, and bytes that were not UTF-8 and would be C1 controls
    (held as surrogates) are made visible."""
    if not _TABLES:
        escape = {code: _NAMED.get(chr(code)) or "\\x%02x" % code for code in _CONTROLS}
        terminal = {code: text for code, text in escape.items() if code not in (10, 9)}
        terminal.update({0xDC00 + code: "\\x%02x" % code for code in range(0x80, 0xA0)})
        lone = {code: "\\u%04x" % code for code in (*range(0xD800, 0xDC80), *range(0xDD00, 0xE000))}
        escape.update(lone)                     # (surrogates no undecodable byte stands for)
        terminal.update(lone)
        _TABLES.update(escape=escape, terminal=terminal)
    return _TABLES[name]


def escape(text):
    """``text`` on one line with every control character and undecodable byte visible."""
    return str(text).translate(_table("escape"))


#: the ASCII characters ``for_terminal`` changes (looked for one by one: a search for
#: one character is far faster over a long output than any check of each character)
_ASCII_CONTROLS = tuple(chr(code) for code in _CONTROLS if code < 128 and code not in (9, 10))


def for_terminal(text):
    """``text`` with control characters other than newline and tab made visible."""
    if text.isascii() and not any(ch in text for ch in _ASCII_CONTROLS):
        return text
    return text.translate(_table("terminal"))


def unicode_only(text):
    """``text`` with every byte that was not UTF-8 (held as a surrogate) as U+FFFD, the
    replacement character: for documents a parser must read whole (JSON, XML), where
    such bytes cannot be written back as they came."""
    if text.isascii() or not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


class SafeStream:
    """A text stream wrapper whose ``write`` passes text through ``for_terminal`` (and
    writes bytes that were not UTF-8 back as they came).

    When the stream cannot be written (a full disk, a closed pipe, a file system gone),
    its descriptor is pointed at /dev/null, so that what is still buffered and whatever
    comes after goes nowhere without another error (the interpreter's own last flush
    included), and the first error is kept in ``lost``. With ``keep_going`` the error
    stops there (a command whose work is done, a submission say, is not undone by its
    report going astray); else it is raised, once."""

    def __init__(self, stream, keep_going=False):
        try:
            stream.reconfigure(errors="surrogateescape")
        except (AttributeError, ValueError):
            pass
        self._stream, self.keep_going, self.lost = stream, keep_going, None

    def write(self, text):
        try:
            return self._stream.write(for_terminal(text))
        except OSError as exc:
            self._failed(exc)
            return len(text)

    def writelines(self, lines):
        for text in lines:
            self.write(text)

    def flush(self):
        try:
            self._stream.flush()
        except OSError as exc:
            self._failed(exc)

    def _failed(self, exc):
        first = self.lost is None
        if first:
            self.lost = exc
            import posix
            try:
                null = posix.open("/dev/null", posix.O_WRONLY)
                posix.dup2(null, self._stream.fileno())
                posix.close(null)
                self._stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        if first and not self.keep_going:
            raise exc

    def __getattr__(self, name):
        return getattr(self._stream, name)


def output_is_the_result():
    """Say that what the command writes from now on to standard output is all it does (its
    -help, a dry run's ads): a ``SafeStream`` there that kept going after a failed write
    (a submitting command) raises it instead, and the command fails as any other would."""
    import sys
    if isinstance(sys.stdout, SafeStream):
        sys.stdout.keep_going = False
