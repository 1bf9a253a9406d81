"""The ``queue`` statement of submit descriptions and its item data.

Forms (``N`` is a ClassAd integer expression, 1 when left out)::

    queue [N]
    queue [N] [vars] in       [slice] item, item ...     or  ( items )
    queue [N] [vars] from     [slice] file               or  ( one item per line )
    queue [N] [vars] from     [slice] command |          (the lines it prints)
    queue [N] [vars] from table[(options)] [slice] ...   (a table: see below)
    queue [N] [vars] matching [files | dirs] [slice] glob ...  or  ( globs )

``vars`` are names separated by commas or blanks (``Item`` when none). For
several vars an item is split at commas and blanks: each var but the last
takes one field, the last takes the rest. A slice is ``[start:end:step]``
as in Python; ``[start]`` alone means ``[start:]``. Directories found by
``matching`` end in ``/``. ``N`` jobs are made for every item. In a list
written in the submit text, lines starting with ``#`` are comments; items
written after the ``(`` of a list that goes on over the next lines are its
first items.

``from table`` reads the rows as a table, as HTCondor 24.0 does: the first
row (the heading) names the variables, which replace those of the statement,
and is no item; a row is split at commas only, each column trimmed of blanks,
the last variable taking the rest. ``table(options)`` (no blank before the
``(``) changes that with comma-separated options: ``header=N`` (the row of
the heading, counted from 0; when N > 0, the first N-1 rows and ``skip=M``
more are dropped) or ``header=none``, ``skip=M``, ``trim=false`` (columns keep
their blanks), ``comma_sep=false`` (split at commas and blanks), ``sep=C``
(split at the character C), ``csv`` (no heading) and ``standard`` (no
heading, split as other lists are).

An empty row (blanks only, unless a table keeps its blanks) changes no variable:
its jobs have the values of the row before it (nothing before the first), as
HTCondor's condor_submit makes them.

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
    table: str | None = None  # ``from table``: its options ("" none); None: no table
    source: str = ""  # the file (from) or the globs (matching, in)

    @property
    def names(self):
        return self.variables or [DEFAULT_VAR]

    def rows(self, files=None):
        """(index, item text) of the items the slice selects; the index is
        the item's place in the whole list. COUNT has one item, None."""
        if self.mode is Mode.COUNT:
            return [(0, None)]
        rows = self._all_rows(files)
        if self.table is not None:
            rows = self._heading(rows)
        rows = list(enumerate(rows))
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
        if self.table is not None:
            options = table_options(self.table)
            values = options.split(row, len(self.names))
            empty = not (row.strip(" \t\r\n") if options.standard() or options.trim else row.rstrip("\r\n"))
        else:
            values, empty = split_item(row, self.names), not row.strip()
        if empty:       # (HTCondor's: an empty row leaves the variables as the row before set them)
            previous = getattr(self, "_previous", None)
            return dict.fromkeys(self.names, "") if previous is None else previous
        self._previous = values = dict(zip(self.names, values)) if self.table is not None else values
        return values

    def _heading(self, rows):
        """The rows of a table without its heading (and the rows skipped), the
        heading's names becoming the variables; the rows as they are when the heading
        row is past the end or names something that cannot be a variable (as
        HTCondor, which says nothing then)."""
        options = table_options(self.table)
        header = options.header
        if header < 0 or header >= len(rows):
            return rows
        names = options.split(rows[header], 0)
        from gridtools.formats.condor.macros import is_name
        if names != [""]:           # (an empty heading only goes)
            if not all(is_name(name) for name in names):
                return rows
            self.variables = names
        rows = rows[:header] + rows[header + 1:]
        skip = header - 1 + max(options.skip, 0) if header > 0 else 0
        return rows[skip:] if skip > 0 else rows

    def render(self):
        """The statement's text after ``queue`` (items inline when known)."""
        words = [] if self.count == 1 and self.mode is not Mode.COUNT else [str(self.count)]
        if self.mode is Mode.COUNT:
            return "" if self.count == 1 else str(self.count)
        words += [",".join(self.variables)] if self.variables else []
        words.append(self.mode.value)
        if self.table is not None:
            words.append(f"table({self.table})" if self.table else "table")
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


def opens_list(text):
    """Whether the text after ``queue``, its macros not yet expanded, opens a list it
    does not close: the items after its keyword (and qualifiers) start with ``(`` and
    the text does not end with ``)``."""
    m = _keyword(text)
    if m is None:
        return False
    tail, spec = text[m.end():].strip(), QueueSpec(mode=Mode(m.group(1).lower()))
    try:
        tail = _match_kind(spec, tail) if spec.mode is Mode.MATCHING else _table(spec, tail)
    except InputError:
        return False            # (said once the macros are expanded)
    sm = _pattern("slice").match(tail)
    if sm:
        tail = tail[sm.end():].strip()
    return tail.startswith("(") and not tail.endswith(")")


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
    else:
        tail = _table(spec, tail)
    sm = _pattern("slice").match(tail)
    if sm:
        spec.slice = _make_slice(sm)
        tail = tail[sm.end():].strip()
    if tail.startswith("("):
        # (as HTCondor reads it: a list closed on its line ends with ``)``; any other
        # opens a list of lines, whose first items follow the ``(``)
        if not tail.endswith(")"):
            spec.inline = [tail[1:]] if tail[1:].strip() else []
            return True
        spec.inline = [tail[1:-1]] if spec.mode is not Mode.FROM else \
            [line for line in tail[1:-1].split("\n")]
        return False
    if not tail:
        raise InputError("Invalid Queue count expression")
    spec.source = tail
    return False


#: the words that may stand after a keyword: ``files``, ``dirs`` and ``any`` after
#: ``matching``, ``table`` after ``from``
_QUALIFIERS = ("files", "dirs", "any", "table")


def _qualifier(tail):
    """The qualifier word ``tail`` starts with (followed by a blank or ``(``), or ""."""
    end = 0
    while end < len(tail) and not tail[end].isspace() and tail[end] != "(":
        end += 1
    word = tail[:end].lower()
    return word if word in _QUALIFIERS and end < len(tail) else ""


def _table(spec, tail):
    """The items part of ``tail`` (after ``in`` or ``from``) past a ``table`` qualifier
    (``from`` only) and its options, which go into ``spec``."""
    word = _qualifier(tail)
    if not word:
        return tail
    if word != "table" or spec.mode is not Mode.FROM:
        raise InputError("Queue keyword conflict")
    rest = tail[len(word):]
    spec.table = ""
    if rest.startswith("("):
        close = rest.find(")")
        if close < 0:
            raise InputError("Invalid TABLE options")
        spec.table = rest[1:close].strip()
        table_options(spec.table)
        rest = rest[close + 1:]
    return rest.strip()


class TableOptions:
    """How a table's rows are read (see the module's text): ``header`` (-1: none),
    ``skip``, ``blank_sep`` (blanks separate columns too), ``trim``, ``sep`` (the
    separator, "" none)."""

    __slots__ = ("header", "skip", "blank_sep", "trim", "sep")

    def __init__(self, header=0, skip=0, blank_sep=False, trim=True, sep=","):
        self.header, self.skip, self.blank_sep, self.trim, self.sep = header, skip, blank_sep, trim, sep

    def standard(self):
        return (self.header, self.skip, self.blank_sep, self.trim, self.sep) == (-1, 0, True, True, ",")

    def split(self, row, count):
        """The ``count`` columns of ``row`` (fewer given are padded with ""), the last
        one the rest of the row; 0: every column."""
        row = row.rstrip("\r\n")
        sep = "\x1f" if self.standard() and "\x1f" in row else self.sep
        separators = sep + (" \t" if self.blank_sep else "") if sep else ", \t"
        trim = self.standard() or self.trim
        if trim:
            row = row.strip(" \t")
        if not row:
            return [""] * count
        values = [row]
        while count == 0 or len(values) < count:
            last = values[-1]
            at = next((i for i, ch in enumerate(last) if ch in separators), -1)
            if at < 0:
                if count == 0:
                    break
                values.append("")
                continue
            values[-1], rest = last[:at], last[at + 1:]
            if trim:
                values[-1], rest = values[-1].rstrip(" \t"), rest.lstrip(" \t")
            values.append(rest)
        return values


def table_options(text):
    """The TableOptions of the options of ``from table(options)`` (HTCondor's
    defaults for a table when ``text`` is empty); unknown options are ignored, as
    HTCondor ignores them."""
    options = TableOptions()
    for word in text.split(","):
        word = word.strip()
        if word.lower() == "standard":
            options = TableOptions(-1, 0, True, True, ",")
            continue
        if word.lower() == "csv":
            options = TableOptions(-1, 0, False, True, ",")
            continue
        key, eq, value = word.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq:
            continue
        if key == "header":
            if _is_integer(value):
                options.header = min(int(value), INT_MAX)
            elif value.lower() == "none":
                options.header = -1
        elif key == "skip" and _is_integer(value):
            options.skip = min(int(value), INT_MAX)
        elif key in ("trim", "comma_sep") and value.lower() in ("true", "false"):
            if key == "trim":
                options.trim = value.lower() == "true"
            else:
                options.sep = "," if value.lower() == "true" else ""
        elif key == "sep":
            options.sep = value[:1]
    return options


def _is_integer(text):
    digits = text[1:] if text[:1] in "+-" else text
    return digits.isascii() and digits.isdigit()


def _match_kind(spec, tail):
    words = tail.split(None, 1)
    kinds = set()
    while words and words[0].lower() in ("files", "dirs", "any", "table"):
        if words[0].lower() == "table":
            raise InputError("Queue keyword conflict")
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
