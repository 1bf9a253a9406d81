"""Text from users made safe to log and to print on someone else's terminal.

Job names, paths, context values and environments come from users; printed
raw, a newline forges lines of a log or of qstat's table and an escape
sequence drives the reader's terminal. ``escape`` turns every control
character (C0, DEL, C1) into visible text (``\\n``, ``\\t``, ``\\x1b``);
``for_terminal`` does the same but keeps newlines and tabs, for whole
outputs whose line structure is the program's own. A byte that was not
UTF-8 (held as a lone surrogate) is left to the stream's ``backslashreplace``
error handler, which ``SafeStream`` and the daemon's log both use, so it
shows as ``\\udcff``.
"""

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
_CONTROLS = list(range(32)) + [127] + list(range(0x80, 0xA0))

#: str.translate table of ``escape``: every control character
ESCAPE = {code: _NAMED.get(chr(code)) or "\\x%02x" % code for code in _CONTROLS}
#: str.translate table of ``for_terminal``: the same but newline and tab stay
TERMINAL = {code: text for code, text in ESCAPE.items() if code not in (10, 9)}


def escape(text):
    """``text`` on one line with every control character and undecodable byte visible."""
    return str(text).translate(ESCAPE)


def for_terminal(text):
    """``text`` with control characters other than newline and tab made visible."""
    return text.translate(TERMINAL)


class SafeStream:
    """A text stream wrapper whose ``write`` passes text through ``for_terminal`` (and
    writes what cannot be encoded as backslash escapes)."""

    def __init__(self, stream):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
        self._stream = stream

    def write(self, text):
        return self._stream.write(text.translate(TERMINAL))

    def writelines(self, lines):
        for text in lines:
            self.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)
