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

As HTCondor's reader does, a reader that wants only some jobs (by cluster,
cluster.proc or owner) may look at each record's banner before its ad is
parsed: the banner names the job (``*** ProcId = 0 ClusterId = 23 Owner =
"alice" CompletionDate = ...``, an epoch's ``*** EPOCH ClusterId=23 ...``),
and a record whose banner (``banner_fields``) shows it is not wanted comes
out as ``Skipped``, its lines not parsed (read backwards they are not even
kept, the banner coming first). A banner without those fields (a file an
older version wrote) leaves its ad to be parsed and judged. ``parses``
counts the ads parsed.
"""

import re

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


# The ads parsed so far (what a banner spares a reader shows here).
parses = 0

_FIELD = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*=\s*("(?:[^"\\]|\\.)*"|\S+)')
_NUMBER = re.compile(r"-?[0-9]+")
_KNOWN = {"clusterid": "ClusterId", "procid": "ProcId", "owner": "Owner",
          "completiondate": "CompletionDate", "currenttime": "CurrentTime",
          "runinstanceid": "RunInstanceId"}
# The least value of a field HTCondor takes (a job id's numbers).
_LEAST = {"ClusterId": 1, "ProcId": 0, "RunInstanceId": 0}


class Skipped:
    """A record its banner showed the reader does not want: ``fields`` is what the
    banner says of it (``banner_fields``); its ad was not parsed."""

    __slots__ = ("fields",)

    def __init__(self, fields):
        self.fields = fields


def banner_fields(line):
    """What a banner line says of its record, as HTCondor's parseBanner reads it:
    ClusterId (above 0), ProcId and RunInstanceId (0 or more), CompletionDate and
    CurrentTime (whole numbers) and Owner (a string, not empty), by those names; a
    field the banner does not have, or has in another form, is left out."""
    fields = {}
    head = line.lstrip("*")
    for name, value in _FIELD.findall(head):
        name = _KNOWN.get(name.lower())
        if name is None or name in fields:
            continue
        if value.startswith('"'):
            if name == "Owner" and len(value) > 2:
                fields[name] = re.sub(r"\\(.)", r"\1", value[1:-1])
            continue
        if name == "Owner" or not _NUMBER.fullmatch(value):
            continue
        number = int(value)
        if number >= _LEAST.get(name, number):
            fields[name] = number
    return fields


def record(block, parse_ad=None):
    """The ad of one history record's lines; a line that is no ``Name = expression`` (a
    record an older version wrote, a file edited by hand) is left out, so that one bad
    record does not keep every user from the history."""
    from gridtools.classad import ClassAd, ClassAdSyntaxError
    global parses
    parses += 1
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
    for _fields, ad in records(paths, named, kind, forwards):
        yield ad


def records(paths, named=False, kind=None, forwards=False, want=None):
    """(banner fields, ad) of the records of the history files ``paths`` (see
    ``scan``). ``want``: a test of a record's ``banner_fields``; a record it is false
    for comes as ``Skipped``, unparsed, in place of its ad. Without ``want`` the
    banners are not read (the fields are None)."""
    for path in (paths if forwards else reversed(paths)):
        fh = _open(path, named, not forwards)
        if fh is None:
            continue
        with fh:
            try:
                yield from _file_ads(fh, kind, forwards, want)
            except linereader.Unending as exc:
                raise InputError(f"Error: history file {path}: {exc}: stopped reading") from None


def _file_ads(fh, kind, forwards, want):
    if forwards:
        yield from _forward_ads(fh, kind, want)
    elif fh.seekable():
        yield from _backward_ads(fh, kind, want)
    else:
        yield from reversed(list(_forward_ads(_open_text(fh), kind, want)))


def _open_text(fh):
    import io
    return io.TextIOWrapper(fh, encoding="utf-8", errors="replace", newline="\n")


def read_ads(paths, named=False, kind=None):
    """The ads of history files as a list, oldest first (see ``scan``)."""
    return list(scan(paths, named, kind, forwards=True))


def _kind_of(banner, kind):
    """Whether the record ``banner`` closes is of the kind read (``kind`` None: any)."""
    return kind is None or banner_kind(banner) in (None, kind)


def _wanted(banner, kind, want):
    """(whether the record ``banner`` closes is parsed, its banner fields or None):
    not when it is of another kind (it is left out) or ``want`` is false of it."""
    if not _kind_of(banner, kind):
        return False, None
    if want is None:
        return True, None
    fields = banner_fields(banner)
    return bool(want(fields)), fields


class _Block:
    """The lines of the ad being gathered, up to ``LONGEST_AD``; without ``keep`` only
    their size is counted (the ad will not be parsed)."""

    def __init__(self, keep=True):
        self.lines, self.size, self.keep, self.seen = [], 0, keep, False

    def add(self, line):
        if line is None or self.lines is None:
            return
        if line.strip():
            self.size += len(line)
            if self.keep:
                self.lines.append(line)
            else:
                self.seen = True
            if self.size > LONGEST_AD:
                self.lines = None       # too long: the whole ad is left out

    def ad(self, banner, kind, backwards=False, fields=None):
        """The ad of the lines gathered (None: left out), or ``Skipped`` when they
        were not kept."""
        if self.lines is None or not (self.lines or self.seen) or not _kind_of(banner, kind):
            return None
        if not self.keep:
            return Skipped(fields)
        return record(self.lines[::-1] if backwards else self.lines)


def _forward_ads(fh, kind, want=None):
    block = _Block()
    for line in linereader.forward(fh, LONGEST_LINE, GIVE_UP):
        if line is not None:
            line = line.rstrip("\r\n")
        if line is not None and line.startswith("*** "):
            keep, fields = _wanted(line, kind, want)
            if not keep and block.lines:
                block.keep, block.seen, block.lines = False, True, []
            ad = block.ad(line, kind, fields=fields)
            if ad is not None:
                yield fields, ad
            block = _Block()
        else:
            block.add(line)


def _backward_ads(fh, kind, want=None):
    """Newest first: the lines after the last banner (an ad still being written) are
    skipped; each banner closes the lines above it, the first ad its lines from the
    start of the file. The banner comes before its lines: those of a record that is
    not parsed are not kept."""
    lines = linereader.backward(fh, LONGEST_LINE, blank=False)
    banner = next((line for line in lines if line is not None and line.startswith("*** ")), None)
    if banner is None:
        return
    keep, fields = _wanted(banner, kind, want)
    block = _Block(keep)
    for line in lines:
        if line is not None and line.startswith("*** "):
            ad = block.ad(banner, kind, backwards=True, fields=fields)
            if ad is not None:
                yield fields, ad
            banner = line
            keep, fields = _wanted(banner, kind, want)
            block = _Block(keep)
        else:
            block.add(line)
    ad = block.ad(banner, kind, backwards=True, fields=fields)
    if ad is not None:
        yield fields, ad
