"""Reading HTCondor history files: the ads of a file, newest first or oldest first.

A history file is a run of ads, each closed by a banner line (``*** ...``).
``scan`` reads files from their end backwards, as HTCondor's condor_history
does with its BackwardFileReader, so that a reader that stops early (at
``-limit``, ``-scanlimit`` or ``-since``) reads only the ads it looks at; with
``forwards`` it reads them from their start. Memory stays bounded whatever a
file holds: a line longer than ``LONGEST_LINE`` and an ad longer than
``LONGEST_AD`` are left out (as a line that does not parse is), and reading
forwards gives up (``linereader.Unending``) after ``GIVE_UP`` characters
without a line end, which a file such as /dev/zero never has. A file that
cannot seek (a pipe) is read forwards and then turned round.
"""

from gridtools.errors import GridError, InputError
from gridtools.formats import linereader

# The longest line of an ad that is kept (characters, its line end counted).
LONGEST_LINE = 1024 * 1024
# The most text one ad may hold; a longer one is left out.
LONGEST_AD = 16 * 1024 * 1024
# Characters of one line read forwards without its end after which reading stops.
GIVE_UP = 256 * 1024 * 1024


class OpenError(GridError):
    """A history file named by -file or found by -search could not be opened."""


def banner_kind(line):
    """The kind of ad a banner line closes (HTCondor's: the word before its first
    ``name=value`` when there is one, ``JOB`` when not; None for a banner without one)."""
    head = line.lstrip("*").split("=", 1)
    if len(head) < 2:
        return None
    words = head[0].split()
    return words[0].upper() if len(words) > 1 else "JOB"


def record(block, parse_ad=None):
    """The ad of one history record's lines; a line that is no ``Name = expression`` (a
    record an older version wrote, a file edited by hand) is left out, so that one bad
    record does not keep every user from the history."""
    from gridtools.classad import ClassAd, ClassAdSyntaxError
    if parse_ad is None:
        from gridtools.classad import parse_ad
    try:
        return parse_ad("\n".join(block))
    except ClassAdSyntaxError:
        pass
    good = []
    for line in block:
        try:
            parse_ad(line)
        except ClassAdSyntaxError:
            continue
        good.append(line)
    return parse_ad("\n".join(good)) if good else ClassAd()


def _open(path, named, binary):
    try:
        if binary:
            return open(path, "rb")
        return open(path, encoding="utf-8", errors="replace", newline="\n")
    except OSError as exc:
        if named:
            raise OpenError(f"Error opening history file {path}: {exc.strerror}", 1) from None
        if isinstance(exc, FileNotFoundError):
            return None
        raise InputError(f"Error: cannot read history file {path}: {exc.strerror}") from None


def scan(paths, named=False, kind=None, forwards=False):
    """The ads of the history files ``paths`` (oldest file first), newest first (or
    oldest first with ``forwards``), read lazily; ``kind``: only those whose banner
    says that kind, or says none. The cell's files may not exist yet; a file
    ``named`` by -file or found by -search must open (HTCondor's words, exit 1)."""
    for path in (paths if forwards else reversed(paths)):
        fh = _open(path, named, not forwards)
        if fh is None:
            continue
        with fh:
            try:
                yield from _file_ads(fh, kind, forwards)
            except linereader.Unending as exc:
                raise InputError(f"Error: history file {path}: {exc}: stopped reading") from None


def _file_ads(fh, kind, forwards):
    if forwards:
        yield from _forward_ads(fh, kind)
    elif fh.seekable():
        yield from _backward_ads(fh, kind)
    else:
        yield from reversed(list(_forward_ads(_open_text(fh), kind)))


def _open_text(fh):
    import io
    return io.TextIOWrapper(fh, encoding="utf-8", errors="replace", newline="\n")


def read_ads(paths, named=False, kind=None):
    """The ads of history files as a list, oldest first (see ``scan``)."""
    return list(scan(paths, named, kind, forwards=True))


class _Block:
    """The lines of the ad being gathered, up to ``LONGEST_AD``."""

    def __init__(self):
        self.lines, self.size = [], 0

    def add(self, line):
        if line is None or self.lines is None:
            return
        if line.strip():
            self.size += len(line)
            self.lines.append(line)
            if self.size > LONGEST_AD:
                self.lines = None       # too long: the whole ad is left out

    def ad(self, banner, kind, backwards=False):
        if not self.lines or (kind is not None and banner_kind(banner) not in (None, kind)):
            return None
        return record(self.lines[::-1] if backwards else self.lines)


def _forward_ads(fh, kind):
    block = _Block()
    for line in linereader.forward(fh, LONGEST_LINE, GIVE_UP):
        if line is not None:
            line = line.rstrip("\r\n")
        if line is not None and line.startswith("*** "):
            ad = block.ad(line, kind)
            if ad is not None:
                yield ad
            block = _Block()
        else:
            block.add(line)


def _backward_ads(fh, kind):
    """Newest first: the lines after the last banner (an ad still being written) are
    skipped; each banner closes the lines above it, the first ad its lines from the
    start of the file."""
    lines = linereader.backward(fh, LONGEST_LINE, blank=False)
    banner = next((line for line in lines if line is not None and line.startswith("*** ")), None)
    if banner is None:
        return
    block = _Block()
    for line in lines:
        if line is not None and line.startswith("*** "):
            ad = block.ad(banner, kind, backwards=True)
            if ad is not None:
                yield ad
            block, banner = _Block(), line
        else:
            block.add(line)
    ad = block.ad(banner, kind, backwards=True)
    if ad is not None:
        yield ad
