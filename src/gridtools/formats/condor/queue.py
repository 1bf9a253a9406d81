"""The ``queue`` statement of submit descriptions and its item data.

Forms (``N`` is a ClassAd integer expression, 1 when left out)::

    queue [N]
    queue [N] [vars] in       [slice] item, item ...     or  ( items )
    queue [N] [vars] from     [slice] file               or  ( one item per line )
    queue [N] [vars] from     [slice] command |          (the lines it prints)
    queue [N] [vars] matching [files | dirs] [slice] glob ...  or  ( globs )

``vars`` are names separated by commas or blanks (``Item`` when none). For
several vars an item is split at commas and blanks: each var but the last
takes one field, the last takes the rest. A slice is ``[start:end:step]``
as in Python; ``[start]`` alone means ``[start:]``. Directories found by
``matching`` end in ``/``. ``N`` jobs are made for every item. In a list
written in the submit text, lines starting with ``#`` are comments.

``parse_queue`` reads the statement; ``QueueSpec.items(files)`` produces the
item rows, reading files and globbing through ``files`` (see fsview).
"""

from gridtools.errors import InputError
from gridtools.records import ClosedSet, Factory, record

DEFAULT_VAR = "Item"


class Mode(ClosedSet):
    COUNT = "count"
    IN = "in"
    FROM = "from"
    MATCHING = "matching"


class MatchKind(ClosedSet):
    ANY = "any"
    FILES = "files"
    DIRS = "dirs"


@record(frozen=True)
class Slice:
    start: int | None = None
    stop: int | None = None
    step: int | None = None

    def select(self, rows):
        return rows[slice(self.start, self.stop, self.step)]

    def render(self):
        parts = ["" if v is None else str(v) for v in (self.start, self.stop, self.step)]
        while len(parts) > 2 and parts[-1] == "":
            parts.pop()
        return "[" + ":".join(parts) + "]"


@record
class QueueSpec:
    """One parsed queue statement."""

    count: int = 1
    variables: list = Factory(list)
    mode: Mode = Mode.COUNT
    match_kind: MatchKind = MatchKind.ANY
    slice: Slice | None = None
    inline: list | None = None  # the items written in the submit text
    source: str = ""  # the file (from) or the globs (matching, in)

    @property
    def names(self):
        return self.variables or [DEFAULT_VAR]

    def rows(self, files=None):
        """(index, item text) of the items the slice selects; the index is
        the item's place in the whole list. COUNT has one item, None."""
        if self.mode is Mode.COUNT:
            return [(0, None)]
        rows = list(enumerate(self._all_rows(files)))
        return self.slice.select(rows) if self.slice else rows

    def _all_rows(self, files):
        if self.mode is Mode.IN:
            return split_in_items(self.inline if self.inline is not None else [self.source])
        if self.mode is Mode.FROM:
            if self.inline is not None:
                return list(self.inline)
            command = piped_command(self.source)
            if command is not None:
                return _require(files).command_lines(command)
            return _require(files).read_lines(self.source)
        patterns = split_in_items(self.inline if self.inline is not None else [self.source])
        found = []
        for pattern in patterns:
            found.extend(_require(files).glob(pattern, self.match_kind))
        return found

    def bindings(self, row):
        """Variable name -> value for one item row; a queue of a count only binds
        ``Item`` to nothing (as HTCondor does: it hides a macro of that name)."""
        if row is None:
            return {DEFAULT_VAR: ""}
        return split_item(row, self.names)

    def render(self):
        """The statement's text after ``queue`` (items inline when known)."""
        words = [] if self.count == 1 and self.mode is not Mode.COUNT else [str(self.count)]
        if self.mode is Mode.COUNT:
            return "" if self.count == 1 else str(self.count)
        words += [",".join(self.variables)] if self.variables else []
        words.append(self.mode.value)
        if self.match_kind is not MatchKind.ANY:
            words.append(self.match_kind.value)
        if self.slice:
            words.append(self.slice.render())
        if self.inline is not None:
            return " ".join(words) + " (\n" + "".join(line + "\n" for line in self.inline) + ")"
        return " ".join(words + [self.source])


def _require(files):
    if files is None:
        raise InputError("ERROR: queue items need files, but no file access was given")
    return files


def piped_command(source):
    """The command of a ``from`` source that ends in ``|`` (the ``|`` and the blanks
    before it taken off), or None for a file name."""
    text = source.rstrip()
    if not text.endswith("|"):
        return None
    return text.rstrip("| ")


def split_in_items(lines):
    import re
    return [item for line in lines for item in re.split(r"[,\s]+", line) if item]


def split_item(row, names):
    """Bind an item row to variables: all but the last take one field."""
    if len(names) == 1:
        return {names[0]: row.strip()}
    import re
    values, rest = {}, row.strip()
    for name in names[:-1]:
        m = re.match(r"([^,\s]*)[,\s]*", rest)
        values[name] = m.group(1)
        rest = rest[m.end():]
    values[names[-1]] = rest.strip()
    return values


# -------------------------------------------------------------------- parsing

#: the patterns of the keyword, of variable names and of slices
_PATTERNS = {
    "keyword": r"(?:^|\s)(in|from|matching)(?=\s|\(|\[|$)",
    "ident": r"[A-Za-z_][A-Za-z0-9_.]*$",
    "slice": r"\[\s*(-?\d*)\s*(?::\s*(-?\d*)\s*)?(?::\s*(-?\d*)\s*)?\]",
}
_COMPILED = {}


def _pattern(name):
    """A pattern of ``_PATTERNS``, compiled on first use (compiling a pattern costs a
    command as much as importing a module; ``queue`` and ``queue N`` need none)."""
    found = _COMPILED.get(name)
    if found is None:
        import re
        found = _COMPILED[name] = re.compile(_PATTERNS[name], re.IGNORECASE if name == "keyword" else 0)
    return found


def _keyword(text):
    """The match of the first keyword (in, from, matching) of ``text``, or None; a text
    without letters (a count) has none."""
    if not any(ch.isalpha() for ch in text):
        return None
    return _pattern("keyword").search(text)


def parse_queue(text, evaluate_count=None):
    """A QueueSpec from the (macro-expanded) text after ``queue``. A text
    whose list is opened with ``(`` and not closed on the same line has
    ``inline`` set to [] and ``open_list`` True: the caller adds the lines
    up to the one starting with ``)``. Raises InputError."""
    text = text.strip()
    m = _keyword(text)
    head, tail = (text, None) if m is None else (text[:m.start()], text[m.end():])
    spec = QueueSpec()
    count_text, spec.variables = _parse_head(head.strip(), m is not None)
    spec.count = _count(count_text, evaluate_count)
    if m is None:
        return spec, False
    spec.mode = Mode(m.group(1).lower())
    return spec, _parse_tail(spec, tail.strip())


def _parse_head(head, has_keyword):
    if not head:
        return "", []
    if not has_keyword:
        return head, []
    import re
    tokens = [t for t in re.split(r"[\s,]+", head) if t]
    count = ""
    if not _pattern("ident").match(tokens[0]):
        count, tokens = tokens[0], tokens[1:]
    for token in tokens:
        if not _pattern("ident").match(token):
            raise InputError("Invalid Queue count expression")
    return count, tokens


#: a queue count at or above this is out of range (HTCondor's INT_MAX; formats.condor.jobad)
INT_MAX = 2 ** 31 - 1


def _count(text, evaluate_count):
    if not text:
        return 1
    digits = text.strip()
    if digits.isascii() and (digits[1:] if digits[:1] in ("+", "-") else digits).isdigit():
        value = int(digits)     # a number as strtoll reads it: too large is out of range
        if value < 0 or value >= INT_MAX:
            raise InputError("Queue count out of range")
        return value
    from gridtools.classad import parse
    try:
        value = evaluate_count(text) if evaluate_count else parse(text).eval()
    except Exception:
        raise InputError("Invalid Queue count expression") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError("Invalid Queue count expression")
    if value < 0 or value >= INT_MAX:
        raise InputError("Queue count out of range")
    return int(value)


def _parse_tail(spec, tail):
    if spec.mode is Mode.MATCHING:
        tail = _match_kind(spec, tail)
    sm = _pattern("slice").match(tail)
    if sm:
        spec.slice = _make_slice(sm)
        tail = tail[sm.end():].strip()
    if tail.startswith("("):
        close = tail.find(")")
        if close < 0:
            spec.inline = [tail[1:]] if tail[1:].strip() else []
            return True
        spec.inline = [tail[1:close]] if spec.mode is not Mode.FROM else \
            [line for line in tail[1:close].split("\n")]
        return False
    if not tail:
        raise InputError("Invalid Queue count expression")
    spec.source = tail
    return False


def _match_kind(spec, tail):
    words = tail.split(None, 1)
    kinds = set()
    while words and words[0].lower() in ("files", "dirs"):
        kinds.add(words[0].lower())
        tail = words[1] if len(words) > 1 else ""
        words = tail.split(None, 1)
    if len(kinds) > 1:
        raise InputError("Queue keyword conflict")
    if kinds:
        spec.match_kind = MatchKind(kinds.pop())
    return tail


def _make_slice(m):
    start, stop, step = (int(g) if g not in (None, "") else None for g in m.groups())
    if step == 0:
        raise InputError("Invalid Queue slice: step may not be 0")
    return Slice(start, stop, step)
