"""The accounting file: one line per finished job task, as Grid Engine writes it.

The layout is accounting(5) of Son of Grid Engine 8.1.9: 45 fields separated
by colons, in the order of ``FIELDS``. A new file starts with ``HEADER``
(comment lines begin with ``#``). ``render`` turns a record dict into one
line; ``parse`` turns a line back into a typed dict (int, float or str per
field, see ``KINDS``); ``read`` iterates over the records of a file.

Grid Engine reads the fields by position and ignores what follows
ar_submission_time (later versions append fields). It writes colons inside
values unchanged, which shifts every later field for such a reader.
``render`` never does that: a colon or line break inside a string value
becomes ``_`` or a blank, so every line written here has exactly 45 fields.
``parse`` reads a longer line by position as Grid Engine does; only when the
fields from iow on then do not hold numbers where numbers belong, and giving
the surplus pieces to the category (the one free-text field that a time
request like ``h_rt=1:00:00`` puts colons in) makes them do so, is the line
read that way instead.

``read`` holds at most ``LONGEST_LINE`` bytes of a line: a longer one is a
damaged entry; see ``read``.

``category(owner, requests)`` builds the category field, Grid Engine's
summary of a job's requests (``-U arusers -u alice -l h_rt=600 -pe smp 2``).

Only the standard library is used: qacct imports this module.
"""

from gridtools.errors import SyntaxProblem

VERSION = "8.1.9"

# The text a new accounting file starts with (as sge_qmaster writes it).
HEADER = (
    f"# Version: {VERSION}\n"
    "# \n"
    "# DO NOT MODIFY THIS FILE MANUALLY!\n"
    "# \n"
)

_S, _I, _F = "str", "int", "float"

# (name, kind) in file order; kind selects the type parse returns and the
# way render prints the value (int: %d, float: %f, str: as is).
_LAYOUT = (
    ("qname", _S), ("hostname", _S), ("group", _S), ("owner", _S),
    ("job_name", _S), ("job_number", _I), ("account", _S), ("priority", _I),
    ("submission_time", _I), ("start_time", _I), ("end_time", _I),
    ("failed", _I), ("exit_status", _I), ("ru_wallclock", _I),
    ("ru_utime", _F), ("ru_stime", _F), ("ru_maxrss", _F), ("ru_ixrss", _I),
    ("ru_ismrss", _I), ("ru_idrss", _I), ("ru_isrss", _I), ("ru_minflt", _I),
    ("ru_majflt", _I), ("ru_nswap", _I), ("ru_inblock", _F),
    ("ru_oublock", _I), ("ru_msgsnd", _I), ("ru_msgrcv", _I),
    ("ru_nsignals", _I), ("ru_nvcsw", _I), ("ru_nivcsw", _I),
    ("project", _S), ("department", _S), ("granted_pe", _S), ("slots", _I),
    ("task_number", _I), ("cpu", _F), ("mem", _F), ("io", _F),
    ("category", _S), ("iow", _F), ("pe_taskid", _S), ("maxvmem", _F),
    ("arid", _I), ("ar_submission_time", _I),
)

FIELDS = tuple(name for name, _ in _LAYOUT)
KINDS = dict(_LAYOUT)

# Value written for a string field that is missing or empty: Grid Engine
# writes UNKNOWN for an unknown queue, host, job name or account, NONE else.
STRING_DEFAULTS = {"qname": "UNKNOWN", "hostname": "UNKNOWN",
                   "job_name": "UNKNOWN", "account": "UNKNOWN"}
NONE = "NONE"

# Fewest fields a line may have: Grid Engine's reader requires everything up
# to the department; later fields take their defaults when absent.
MIN_FIELDS = FIELDS.index("department") + 1

_CATEGORY = FIELDS.index("category")
# The fast way to read each field (a string field is copied as is).
_CONVERT = tuple({_I: int, _F: float, _S: str}[k] for _, k in _LAYOUT)


def default(name):
    """The value a missing field ``name`` takes (typed as parse returns it)."""
    kind = KINDS[name]
    if kind == _I:
        return 0
    if kind == _F:
        return 0.0
    return STRING_DEFAULTS.get(name, NONE)


def _render_str(name, value):
    if value is None:
        return STRING_DEFAULTS.get(name, NONE)
    text = str(value)
    if not text:
        return STRING_DEFAULTS.get(name, NONE)
    if ":" in text or "\n" in text or "\r" in text:
        text = text.replace(":", "_").replace("\r", " ").replace("\n", " ")
    return text


def _render_value(name, kind, value):
    if kind == _S:
        return _render_str(name, value)
    if value is None or value == "":
        value = 0
    try:
        if kind == _F:
            return "%f" % float(value)
        return "%d" % (value if isinstance(value, int) else int(float(value)))
    except (TypeError, ValueError, OverflowError):
        raise SyntaxProblem(f'accounting field {name}: not a number: "{value}"') from None


def render(record):
    """One accounting line (with its newline) for a dict keyed by ``FIELDS``.

    Missing fields get Grid Engine's defaults (0, 0.000000, NONE); keys that
    are not accounting fields are ignored.
    """
    get = record.get
    return ":".join(_render_value(n, k, get(n)) for n, k in _LAYOUT) + "\n"


def _fold_category(parts):
    """Give the surplus colon-separated pieces of a long line to the category."""
    extra = len(parts) - len(FIELDS)
    end = _CATEGORY + extra + 1
    return parts[:_CATEGORY] + [":".join(parts[_CATEGORY:end])] + parts[end:]


def _typed(parts):
    record = {}
    for (name, kind), raw in zip(_LAYOUT, parts):
        record[name] = raw if kind == _S else _number(kind, raw, name)
    return record


def _parse_long(parts):
    """A line with surplus fields: by position (what follows ar_submission_time
    ignored), or, when that does not read, with the surplus in the category."""
    try:
        return _typed(parts[:len(FIELDS)])
    except SyntaxProblem as err:
        try:
            return _typed(_fold_category(parts))
        except SyntaxProblem:
            raise err from None


def _number(kind, raw, name):
    try:
        return int(raw) if kind == _I else float(raw)
    except ValueError:
        pass
    if raw.strip() == "":
        return 0 if kind == _I else 0.0
    try:
        value = float(raw)
        return int(value) if kind == _I else value
    except (ValueError, OverflowError):
        raise SyntaxProblem(f'accounting field {name}: not a number: "{raw}"') from None


def _parse_slow(parts):
    count = len(parts)
    if count > len(FIELDS):
        return _parse_long(parts)
    if count < MIN_FIELDS:
        raise SyntaxProblem(
            f"accounting record has {count} fields, expected {len(FIELDS)}")
    record = _typed(parts)
    for name in FIELDS[count:]:
        record[name] = default(name)
    return record


def parse(line):
    """The typed record (dict keyed by ``FIELDS``) of one accounting line.

    Raises SyntaxProblem for a line with too few fields or a number field
    that does not hold a number.
    """
    parts = line.rstrip("\r\n").split(":")
    if len(parts) == len(FIELDS):
        try:
            return dict(zip(FIELDS, [convert(raw) for convert, raw in zip(_CONVERT, parts)]))
        except ValueError:
            pass
    return _parse_slow(parts)


def parser(fields=None):
    """A parse function that keeps only ``fields`` (all fields when None).

    Converting only the fields a caller reads makes long files quicker to
    scan; the records then hold just those keys.
    """
    if fields is None:
        return parse
    keep = set(fields)
    wanted = [(i, name, _CONVERT[i]) for i, name in enumerate(FIELDS) if name in keep]

    def parse_some(line):
        parts = line.rstrip("\r\n").split(":")
        if len(parts) == len(FIELDS):
            try:
                return {name: convert(parts[i]) for i, name, convert in wanted}
            except ValueError:
                pass
        full = _parse_slow(parts)
        return {name: full[name] for _, name, _ in wanted}

    return parse_some


# The longest line read (in characters, with its line end): a longer one is a
# damaged entry. Grid Engine reads at most 4 KB (fgets in classic qacct) or
# 20 KB (Open Cluster Scheduler) of a line; gridtools writes far less.
LONGEST_LINE = 64 * 1024
# Characters of one line read without finding its end after which reading stops
# (raising linereader.Unending): a file with no line end, such as /dev/zero,
# would otherwise be read for ever.
GIVE_UP = 256 * 1024 * 1024


def _lines(source):
    from gridtools.formats import linereader
    if hasattr(source, "readline"):
        yield from linereader.forward(source, LONGEST_LINE, GIVE_UP)
        return
    with open(source, encoding="utf-8", errors="surrogateescape", newline="\n") as stream:
        yield from linereader.forward(stream, LONGEST_LINE, GIVE_UP)


def read(source, select=None, on_error=None, fields=None):
    """Iterate over the records of an accounting file (a path or a stream).

    Comment lines (``#``) and lines of one character or less are skipped.
    ``select(parts)``, if given, sees the raw colon-split strings of a line
    and decides cheaply whether to parse it at all; ``fields`` limits the
    records to those keys (see ``parser``). A line that cannot be parsed is
    skipped; ``on_error(line_number, error)`` is called for it if given. A
    last line without its newline is a record still being written: it is
    used only when it is complete, and skipped silently otherwise.

    The file is read with bounded memory: a line longer than ``LONGEST_LINE``
    is skipped as one that cannot be parsed (read on to its end, not kept),
    and ``linereader.Unending`` is raised after ``GIVE_UP`` characters of one line
    without its end.
    """
    parse_line = parser(fields)
    number = 0
    for line in _lines(source):
        number += 1
        if line is None:
            if on_error is not None:
                on_error(number, SyntaxProblem(f"line longer than {LONGEST_LINE} bytes"))
            continue
        if line[0] == "#" or len(line.strip()) <= 1:
            continue
        complete = line.endswith("\n")
        if not complete and line.count(":") < len(FIELDS) - 1:
            continue
        if select is not None and not select(line.rstrip("\r\n").split(":")):
            continue
        try:
            record = parse_line(line)
        except SyntaxProblem as err:
            if complete and on_error is not None:
                on_error(number, err)
            continue
        yield record


# -- the category field --------------------------------------------------

def _csv(value):
    if isinstance(value, str):
        return value
    return ",".join(str(v) for v in value)


def _plain_seconds(text):
    """``1:00:00`` -> ``3600``: a time value written without colons (only ``h:m:s`` is
    one; requests are stored so since they are checked at submission)."""
    pieces = text.split(":")
    if len(pieces) != 3 or not all(p.isdigit() or p == "" for p in pieces):
        return text
    return str(int(pieces[0] or 0) * 3600 + int(pieces[1] or 0) * 60 + int(pieces[2] or 0))


def _resources(value):
    """``-l`` text from a dict, a list of ``name=value`` items or a string."""
    if isinstance(value, dict):
        items = [name if val is None or val is True else f"{name}={val}"
                 for name, val in value.items()]
    elif isinstance(value, str):
        items = [item for item in value.split(",") if item]
    else:
        items = [str(item) for item in value]
    out = []
    for item in items:
        name, sep, val = item.partition("=")
        out.append(f"{name}={_plain_seconds(val)}" if sep and ":" in val else item)
    return ",".join(out)


def _pe(value):
    if isinstance(value, str):
        return value
    name, slots = value
    if isinstance(slots, (tuple, list)):
        low, high = slots
        slots = f"{low}-{'' if high is None else high}"
    return f"{name} {slots}"


def category(owner, requests):
    """Grid Engine's category string for a job (``""`` when it has nothing).

    ``requests`` uses qsub's option names without the dash; every key is
    optional: ``U`` (access lists, a list or comma text), ``P`` (project),
    ``q`` (hard queue list), ``masterq``, ``l`` (hard resources: a dict, a
    list of ``name=value`` or comma text), ``soft_l`` (soft resources),
    ``pe`` (``(name, slots)`` where slots is an int, text like ``2-4``, or a
    ``(min, max)`` pair; or ``"name range"``), ``ckpt``, ``I`` (true for an
    interactive job) and ``ar`` (advance reservation id). The parts come in
    Grid Engine's order: -U, -P, -u, -q, -masterq, -l, -soft -l, -pe, -ckpt,
    -I, -ar. Time values like ``1:00:00`` are written in seconds so that the
    field holds no colon.
    """
    req = requests or {}
    parts = []

    def add(flag, value):
        if value not in (None, "", [], (), {}):
            parts.append(f"{flag} {value}")

    add("-U", _csv(req["U"]) if req.get("U") else None)
    add("-P", req.get("P"))
    add("-u", owner)
    add("-q", _csv(req["q"]) if req.get("q") else None)
    add("-masterq", _csv(req["masterq"]) if req.get("masterq") else None)
    add("-l", _resources(req["l"]) if req.get("l") else None)
    add("-soft -l", _resources(req["soft_l"]) if req.get("soft_l") else None)
    add("-pe", _pe(req["pe"]) if req.get("pe") else None)
    add("-ckpt", req.get("ckpt"))
    add("-I", "y" if req.get("I") else None)
    add("-ar", req.get("ar") or None)
    return " ".join(parts)
