"""Host load values and complex values as qstat and qhost print them.

The snapshot carries load values as the execution side reports them
(numbers as numbers, memory as text with a unit). Grid Engine prints them
differently per place: ``qstat -F`` keeps integers whole and memory with
three decimals, ``qhost -F`` shows every number as a double, the qhost
table rounds memory to one decimal. The functions here do those renderings.
"""

from gridtools.formats import values

#: load values in the order an execution host reports them (qstat -F, qhost -F)
LOAD_ORDER = ("arch", "num_proc", "mem_total", "swap_total", "virtual_total", "m_topology",
              "m_socket", "m_core", "m_thread", "load_avg", "load_short", "load_medium",
              "load_long", "mem_free", "swap_free", "virtual_free", "mem_used", "swap_used",
              "virtual_used", "cpu", "m_topology_inuse", "np_load_avg", "np_load_short",
              "np_load_medium", "np_load_long")

#: complex types used when the complex table does not know a load value
_FALLBACK_TYPES = {"arch": "STRING", "m_topology": "STRING", "m_topology_inuse": "STRING",
                   "num_proc": "INT", "m_socket": "INT", "m_core": "INT", "m_thread": "INT"}

_UNITS = (("G", 1024 ** 3), ("M", 1024 ** 2), ("K", 1024))


def ctype(name, complexes):
    """The complex type of ``name`` (INT, DOUBLE, MEMORY, TIME, BOOL, STRING ...)."""
    row = complexes.get(name) if complexes else None
    if row:
        return row[1]
    if name in _FALLBACK_TYPES:
        return _FALLBACK_TYPES[name]
    if name.startswith(("mem_", "swap_", "virtual_")):
        return "MEMORY"
    return "DOUBLE"


def check_requests(requests, complexes):
    """The -l ``requests`` of qstat, qhost or qselect with full names; refuses names that
    are no complex attribute and values of the wrong type, with Grid Engine's "unknown
    resource" and "is not a ... value". (The names of -F are not checked: as Grid
    Engine's, qstat and qhost show the values of those they know and skip the others.)
    Nothing is checked when the snapshot carries no complex table."""
    if not complexes:
        return requests
    from gridtools.errors import GridError, InputError
    short = {row[0]: name for name, row in complexes.items()}
    checked = {}
    for name, wanted in requests.items():
        full = name if name in complexes else short.get(name)
        if full is None:
            raise GridError(f'unknown resource "{name}"')
        try:
            values.parse_typed(complexes[full][1], wanted)
        except InputError:
            raise GridError(values.not_a_value(full, complexes[full][1])) from None
        checked[full] = wanted
    return checked


def to_number(value):
    """A load or complex value as a float (memory text in bytes); None if not numeric."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if text.upper() in ("TRUE", "FALSE"):
        return 1.0 if text.upper() == "TRUE" else 0.0
    try:
        return float(values.parse_memory(text))
    except Exception:  # noqa: BLE001 - any text that is no number
        pass
    try:
        return float(values.parse_time(text))
    except Exception:  # noqa: BLE001
        return None


def request_amount(name, row, hard):
    """The amount of consumable ``name`` (complex table ``row``) a job holds per slot (or
    per job): what its hard requests ``hard`` ask for, else the complex's default."""
    value = hard.get(name, row[5] if row and len(row) > 5 else 0)
    return to_number(value) or 0.0


def memory(nbytes, decimals=3):
    """Memory the way Grid Engine prints load values: ``23.541G``, ``312.383M``, ``0.000``."""
    if nbytes == values.INFINITY:
        return "infinity"
    for unit, factor in _UNITS:
        if nbytes >= factor:
            return f"{nbytes / factor:.{decimals}f}{unit}"
    return f"{nbytes:.{decimals}f}"


def _is_infinite(value):
    return str(value).strip().upper() == "INFINITY"


def time_text(seconds):
    """A TIME value as Grid Engine prints one: ``00:50:00``, ``2:01:00:00`` (days first,
    when there are any), ``infinity``; whole seconds, the fraction cut off."""
    if seconds == values.INFINITY or seconds != seconds:
        return "infinity"
    whole = int(seconds)
    sign, whole = ("-", -whole) if whole < 0 else ("", whole)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    if days:
        return f"{sign}{days}:{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return f"{sign}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


def qstat_value(name, value, complexes):
    """A value as ``qstat -F`` shows it (``num_proc=2``, ``cpu=5.700000``, ``rerun=0.000000``)."""
    return typed_value(ctype(name, complexes), value)


def typed_value(kind, value):
    """A value of complex type ``kind`` as qstat -F and qquota show it."""
    if kind in ("STRING", "CSTRING", "RESTRING", "HOST"):
        return str(value)
    if _is_infinite(value):
        return "infinity"
    number = to_number(value)
    if number is None:
        return str(value)
    if kind == "TIME":
        return time_text(number)
    if kind == "MEMORY":
        return memory(number)
    if kind == "INT":
        return str(int(number))
    return f"{number:.6f}"


def qhost_value(name, value, complexes):
    """A value as ``qhost -F`` shows it: every number as a double, memory with a unit."""
    kind = ctype(name, complexes)
    if kind in ("STRING", "CSTRING", "RESTRING", "HOST"):
        return str(value)
    number = to_number(value)
    if number is None:
        return str(value)
    if kind == "TIME":
        return time_text(number)
    if kind == "MEMORY":
        return memory(number)
    return f"{number:.6f}"


def ordered_loads(load, complexes=None):
    """(name, value) of a host's load values: the usual ones first, then the rest by name;
    with ``complexes``, only those of a complex attribute (as Grid Engine's -F shows
    them: a load sensor's value of no attribute is not shown)."""
    seen = [(n, load[n]) for n in LOAD_ORDER if n in load and n != "state"]
    rest = sorted((n, v) for n, v in load.items() if n not in LOAD_ORDER and n != "state"
                  and (not complexes or n in complexes))
    return seen + rest


def matches_request(name, offered, wanted, complexes):
    """True when an offered value satisfies a request ``name=wanted`` under the complex's relop.

    For numeric complexes the relation reads "requested relop offered"
    (``h_rt <=``: ``h_rt=0:10:0`` fits a queue offering one hour); strings
    compare with shell wildcards and ``|`` alternatives.
    """
    row = complexes.get(name) if complexes else None
    kind = row[1] if row else ctype(name, complexes)
    relop = row[2] if row else "=="
    if kind in ("STRING", "CSTRING", "RESTRING", "HOST"):
        import fnmatch
        fold = kind in ("CSTRING", "HOST")
        text = str(offered).lower() if fold else str(offered)
        return any(fnmatch.fnmatchcase(text, alt.lower() if fold else alt) for alt in wanted.split("|"))
    have = values.INFINITY if _is_infinite(offered) else to_number(offered)
    need = values.INFINITY if _is_infinite(wanted) else to_number(wanted)
    if have is None or need is None:
        return str(offered) == str(wanted)
    return compare(need, relop, have)


def compare(left, relop, right):
    """``left relop right`` for the complex relations ``== != < <= > >=``."""
    return {"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
            ">": left > right, ">=": left >= right}.get(relop, left == right)
