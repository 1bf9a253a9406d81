"""Lines of a file read with bounded memory, forwards or backwards.

A line is never held longer than a bound the caller gives: a longer one comes
out as None (a damaged line, its text not kept), so that a file without line
ends (``/dev/zero``, a hole of NULs left by a crash, one 150 MB line) costs
the same memory as any other. ``forward`` reads a stream from where it is;
since a stream may have no end, it also stops, raising ``Unending``, after a
second, larger bound of bytes read without finding a line end. ``backward``
reads a seekable file from its end to its start (as HTCondor's
BackwardFileReader does) in fixed chunks, so that a reader that stops early
reads only what it needs; the file's size bounds it.

Only the standard library is used: qacct and condor_history import this module.
"""

# Bytes read at a time while skipping an over-long line or reading backwards.
CHUNK = 64 * 1024


class Unending(Exception):
    """No line end within ``most`` characters of the start of line ``number``."""

    def __init__(self, number, most):
        super().__init__(f"line {number} has no end within its first {most} characters")
        self.number = number
        self.most = most


def forward(stream, longest, most, errors="surrogateescape"):
    """The lines of ``stream`` (binary or text, read as UTF-8), with their line ends.

    Lines end at ``\\n`` only. A line of more than ``longest`` characters
    (its line end counted) comes out as None, read to its end in chunks and
    not kept; a last line without its end comes out as it is. ``Unending`` is
    raised once ``most`` characters of one line have been read without its end.
    """
    import io
    if isinstance(stream, io.TextIOBase):
        yield from _forward(stream.read, longest, most)
        return
    text = io.TextIOWrapper(stream, encoding="utf-8", errors=errors, newline="\n")
    try:
        yield from _forward(text.read, longest, most)
    finally:
        text.detach()       # the caller's stream stays open


def _forward(read, longest, most):
    head, held, number = [], 0, 0       # head: the start of the current line (None: too long)
    while True:
        chunk = read(CHUNK)
        if not chunk:
            break
        pieces = chunk.split("\n")
        rest = pieces.pop()
        if pieces:
            number += len(pieces)
            first = pieces[0]
            if head is None or held + len(first) >= longest:
                yield None
            else:
                yield "".join(head) + first + "\n" if head else first + "\n"
            for piece in pieces[1:]:
                yield piece + "\n" if len(piece) < longest else None
            head, held = [], 0
        held += len(rest)
        if head is not None and rest:
            head.append(rest)
            if held > longest:
                head = None
        if head is None and held > most:
            raise Unending(number + 1, most)
    if head:
        yield "".join(head)


def backward(fh, longest, errors="replace", blank=True):
    """The lines of the seekable binary file ``fh``, last first, without line ends.

    Only the bytes up to the file's size when this starts are read. A line
    of more than ``longest`` bytes comes out as None; without ``blank``, empty
    lines do not come out. The text after the last line end (a line still
    being written) comes first when there is any.
    """
    pos = fh.seek(0, 2)
    parts, held, first = [], 0, True    # parts: the line being gathered, last part first
    while pos > 0:
        start = max(0, pos - CHUNK)
        fh.seek(start)
        data = fh.read(pos - start)
        if not data:
            break           # the file shrank under us: what is left is gone
        pos = start
        pieces = data.split(b"\n")
        parts, held = _gather(parts, held, pieces.pop(), longest)
        if not pieces:
            continue
        if parts is None or held or (blank and not first):
            yield _line(parts, errors)
        first = False
        for piece in reversed(pieces[1:]):
            if len(piece) > longest:
                yield None
            elif piece or blank:
                yield _line([piece], errors)
        parts, held = _gather([], 0, pieces[0], longest)
    if parts is None or held:
        yield _line(parts, errors)


def _gather(parts, held, piece, longest):
    """Add ``piece`` before the parts of a line gathered backwards; None once too long."""
    if parts is None:
        return None, held
    held += len(piece)
    if held > longest:
        return None, held
    parts.append(piece)
    return parts, held


def _line(parts, errors):
    if parts is None:
        return None
    text = b"".join(reversed(parts)).decode("utf-8", errors)
    return text[:-1] if text.endswith("\r") else text
