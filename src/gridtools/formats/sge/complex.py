"""Complex attributes (complex(5)): the table ``qconf -sc`` shows.

The object is a dict mapping each attribute name to its definition, a dict
with ``name``, ``shortcut``, ``type`` (``INT`` ``DOUBLE`` ``MEMORY`` ``TIME``
``STRING`` ``CSTRING`` ``RESTRING`` ``HOST`` ``BOOL``), ``relop``,
``requestable`` (``YES`` ``NO`` ``FORCED``), ``consumable`` (``YES`` ``NO``
``JOB``), ``default`` (value text) and ``urgency`` (a number). The table is
written sorted by name with columns as wide as their longest entry plus
three, under the ``#name shortcut ...`` header, followed by qconf's footer.
"""

from gridtools.errors import InputError
from gridtools.formats.sge.attrfile import FieldError, Refusal
from gridtools.formats.values import not_a_value, parse_number, parse_typed

#: column names, in order
COLUMNS = ("name", "shortcut", "type", "relop", "requestable", "consumable", "default", "urgency")
#: attribute value types
NUMERIC_TYPES = frozenset({"INT", "DOUBLE", "MEMORY", "TIME"})
STRING_TYPES = frozenset({"STRING", "CSTRING", "RESTRING", "HOST"})
TYPES = NUMERIC_TYPES | STRING_TYPES | {"BOOL"}
#: relational operators
RELOPS = frozenset({"==", "!=", "<", "<=", ">", ">=", "EXCL"})
#: spellings of requestable / consumable, mapped to their canonical word
REQUESTABLE = {"y": "YES", "yes": "YES", "n": "NO", "no": "NO", "f": "FORCED", "forced": "FORCED"}
CONSUMABLE = {"y": "YES", "yes": "YES", "n": "NO", "no": "NO", "j": "JOB", "job": "JOB"}
#: extra width of each column beyond its longest entry
PADDING = 3
#: last line of qconf -sc
FOOTER = "# >#< starts a comment but comments are not saved across edits --------\n"

#: the complex of a new cell (and the built-in attributes, which stay)
DEFAULT_TABLE = """\
arch a STRING == YES NO NONE 0
calendar c STRING == YES NO NONE 0
cpu cpu DOUBLE >= YES NO 0 0
display_win_gui dwg BOOL == YES NO 0 0
h_core h_core MEMORY <= YES NO 0 0
h_cpu h_cpu TIME <= YES NO 0:0:0 0
h_data h_data MEMORY <= YES NO 0 0
h_fsize h_fsize MEMORY <= YES NO 0 0
h_rss h_rss MEMORY <= YES NO 0 0
h_rt h_rt TIME <= YES NO 0:0:0 0
h_stack h_stack MEMORY <= YES NO 0 0
h_vmem h_vmem MEMORY <= YES NO 0 0
hostname h HOST == YES NO NONE 0
load_avg la DOUBLE >= NO NO 0 0
load_long ll DOUBLE >= NO NO 0 0
load_medium lm DOUBLE >= NO NO 0 0
load_short ls DOUBLE >= NO NO 0 0
m_core core INT <= YES NO 0 0
m_socket socket INT <= YES NO 0 0
m_thread thread INT <= YES NO 0 0
m_topology topo STRING == YES NO NONE 0
m_topology_inuse utopo STRING == YES NO NONE 0
mem_free mf MEMORY <= YES NO 0 0
mem_total mt MEMORY <= YES NO 0 0
mem_used mu MEMORY >= YES NO 0 0
min_cpu_interval mci TIME <= NO NO 0:0:0 0
np_load_avg nla DOUBLE >= NO NO 0 0
np_load_long nll DOUBLE >= NO NO 0 0
np_load_medium nlm DOUBLE >= NO NO 0 0
np_load_short nls DOUBLE >= NO NO 0 0
num_proc p INT == YES NO 0 0
qname q STRING == YES NO NONE 0
rerun re BOOL == NO NO 0 0
s_core s_core MEMORY <= YES NO 0 0
s_cpu s_cpu TIME <= YES NO 0:0:0 0
s_data s_data MEMORY <= YES NO 0 0
s_fsize s_fsize MEMORY <= YES NO 0 0
s_rss s_rss MEMORY <= YES NO 0 0
s_rt s_rt TIME <= YES NO 0:0:0 0
s_stack s_stack MEMORY <= YES NO 0 0
s_vmem s_vmem MEMORY <= YES NO 0 0
seq_no seq INT == NO NO 0 0
slots s INT <= YES YES 1 1000
swap_free sf MEMORY <= YES NO 0 0
swap_rate sr MEMORY >= YES NO 0 0
swap_rsvd srsv MEMORY >= YES NO 0 0
swap_total st MEMORY <= YES NO 0 0
swap_used su MEMORY >= YES NO 0 0
tmpdir tmp STRING == NO NO NONE 0
virtual_free vf MEMORY <= YES NO 0 0
virtual_total vt MEMORY <= YES NO 0 0
virtual_used vu MEMORY >= YES NO 0 0
"""


def _canonical(column, text, number):
    """The canonical spelling of one column's text; raises FieldError."""
    table = {"requestable": REQUESTABLE, "consumable": CONSUMABLE}.get(column)
    if table is not None:
        value = table.get(text.lower())
    elif column == "type":
        value = text.upper() if text.upper() in TYPES else None
    elif column == "relop":
        value = text.upper() if text.upper() in RELOPS else None
    elif column == "urgency":
        try:
            value = parse_number(text)
        except InputError:
            value = None
    else:
        value = text
    if value is None:
        raise FieldError(f'invalid value "{text}" for column "{column}"', column, number)
    return value


def parse_row(line, number=None):
    """One attribute definition from a table line."""
    cells = line.split()
    if len(cells) != len(COLUMNS):
        raise FieldError(f"expected {len(COLUMNS)} columns ({' '.join(COLUMNS)}), found {len(cells)}",
                         None, number)
    return {column: _canonical(column, text, number) for column, text in zip(COLUMNS, cells)}


def parse(text):
    """The complex dict (name -> definition) from ``qconf -sc`` text."""
    result = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        row = parse_row(line, number)
        if row["name"] in result:
            raise FieldError(f'attribute "{row["name"]}" is defined twice', "name", number)
        result[row["name"]] = row
    return result


#: consumables that HTCondor's view does not count as machine resources: slots, and gpu
#: (the slot ads' GPUs)
NOT_MACHINE_RESOURCES = frozenset({"slots", "gpu"})


def machine_resources(obj):
    """Name in lower case -> name of the complexes of ``obj`` (a complex dict) that are
    machine resources in HTCondor's view: consumables of whole units (INT or DOUBLE,
    consumable, requestable) besides NOT_MACHINE_RESOURCES. A host's slot ads publish
    those it offers, and an HTCondor job's ``request_<name>`` of one is a request of it."""
    return {name.lower(): name for name, row in obj.items()
            if name not in NOT_MACHINE_RESOURCES and str(row["type"]) in ("INT", "DOUBLE")
            and str(row["consumable"]) != "NO" and str(row["requestable"]) != "NO"}


def machine_resources_in(path):
    """``machine_resources`` of the complex configuration in file ``path``; none when it
    cannot be read (the daemon, which counts them from its own copy, checks again)."""
    from gridtools.errors import GridError
    try:
        with open(path, encoding="utf-8") as fh:
            return machine_resources(parse(fh.read()))
    except (OSError, GridError):
        return {}


def whole_amount(text):
    """A host's offered amount of a machine resource (a complex value's text) in whole
    units, 0 when it is none or no number."""
    try:
        return max(0, int(float(str(text))))
    except (ValueError, OverflowError):
        return 0


def render(obj):
    """``qconf -sc`` text of a complex dict, rows sorted by name."""
    rows = [[str(obj[name][c]) for c in COLUMNS] for name in sorted(obj)]
    widths = [max([len(c)] + [len(r[i]) + PADDING for r in rows]) for i, c in enumerate(COLUMNS)]
    header = "#" + "".join(c.ljust(widths[i] + (1 if i else 0)) for i, c in enumerate(COLUMNS))
    lines = [header, "#" + "-" * (sum(widths) + len(COLUMNS) - 1)]
    for row in rows:
        lines.append(" ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + " " + row[-1])
    return "\n".join(lines) + "\n" + FOOTER


def template(name=None):
    """The complex of a new cell."""
    return {row["name"]: row for row in (parse_row(line) for line in DEFAULT_TABLE.splitlines())}


_BUILTIN = {}


def _builtin():
    """The built-in attributes (read once; never handed out for changes)."""
    if not _BUILTIN:
        _BUILTIN.update(template())
    return _BUILTIN


def value_ok(type_name, text):
    """True when ``text`` is a valid value for an attribute of ``type_name``."""
    try:
        parse_typed(type_name, text)
        return bool(text)
    except InputError:
        return False


def check_values(pairs, table, field, consumables=False):
    """Raise FieldError naming ``field`` when a ``name=value`` pair's value is not of
    the attribute's type in ``table`` (the complex dict), or, with ``consumables``,
    when a consumable attribute gets a negative value (Grid Engine's messages).
    Names the table does not know are left to the reference check."""
    if not isinstance(table, dict):
        return
    for name, text in (pairs or {}).items():
        row = lookup(table, name)
        if not isinstance(row, dict):
            continue
        try:
            value = parse_typed(row["type"], str(text))
        except InputError:
            raise FieldError(not_a_value(name, row["type"]), field) from None
        if consumables and row.get("consumable", "NO") != "NO" and not isinstance(value, (bool, str)) \
                and value < 0:
            raise FieldError(f'attribute "{name}" is consumable but has a negative value', field)


def _check_row(name, row):
    def bad(column, why):
        raise FieldError(f'invalid {column} "{row.get(column)}" of attribute "{name}": {why}', column)

    if row.get("name") != name or len(name.split()) != 1:
        bad("name", "the name must be one word and match its key")
    for column in COLUMNS[1:]:
        if column not in row:
            raise FieldError(f'missing column "{column}" of attribute "{name}"', column)
        _canonical(column, str(row[column]), None)
    if not (row["default"].upper() == "NONE" and row["type"] in STRING_TYPES) and \
            not value_ok(row["type"], row["default"]):
        bad("default", f"not a valid {row['type']} value")
    why = _type_refusal(name, row) or _default_refusal(name, row)
    if why:
        raise Refusal(why, "default" if "default" in why else "relop")


def _type_refusal(name, row):
    """Grid Engine's refusal of a relational operator or consumable the type does not
    allow (centry_elem_validate), or None."""
    kind, relop, consumable = row["type"], row["relop"], row["consumable"] != "NO"
    if kind in STRING_TYPES:
        if relop not in ("==", "!="):
            return f'Complex "{name}" has an invalid relational operator'
        if consumable:
            return f'Complex "{name}" of type "{kind}" cannot be a consumable'
    elif kind == "BOOL":
        if relop not in ("==", "EXCL"):
            return f'Complex "{name}" has an invalid relational operator'
        if consumable and relop != "EXCL":
            return f'Exclusive complex "{name}" must have EXCL as relational operator'
        if relop == "EXCL" and not consumable:
            return f'Exclusive complex "{name}" must be a consumable'
    elif relop == "EXCL":
        return f'Complex "{name}" must be BOOL to use EXCL as relational operator'
    if name == "tmpdir" and row["requestable"] != "NO":
        return f'Complex attribute "{name}" is not requestable'
    if consumable and relop not in ("<=", "EXCL"):
        return f'Consumable "{name}" can have only <= as an relational operator'
    return None


def _default_refusal(name, row):
    """Grid Engine's refusal of a default the attribute may not have, or None: only
    consumables have one, which a consumable that cannot be requested needs and a
    forced one may not have."""
    kind, default = row["type"], row["default"]
    zero = default.upper() == "NONE" if kind in STRING_TYPES else not parse_typed(kind, default)
    if row["consumable"] == "NO":
        return None if zero else f'Complex "{name}" cannot have a (non-zero) default value'
    if row["requestable"] == "NO" and zero:
        return f'Consumable "{name}" needs a default value because it is not requestable.'
    if row["requestable"] == "FORCED" and not zero:
        return f'Consumable "{name}" cannot have a (non-zero) default value because it is forced.'
    return None


def validate(obj, known=None):
    """Raise ConfigError for bad rows, clashing shortcuts or lost built-in attributes."""
    shortcuts = {}
    for name, row in obj.items():
        _check_row(name, row)
        other = shortcuts.get(row["shortcut"])
        if other is not None or (row["shortcut"] in obj and row["shortcut"] != name):
            raise FieldError(f'shortcut "{row["shortcut"]}" of attribute "{name}" is already used by '
                             f'"{other or row["shortcut"]}"', "shortcut")
        shortcuts[row["shortcut"]] = name
    for name, row in _builtin().items():
        if name not in obj:
            raise FieldError(f'built-in attribute "{name}" cannot be removed', "name")
        if obj[name]["type"] != row["type"]:
            raise FieldError(f'the type of built-in attribute "{name}" cannot be changed', "type")


def lookup(obj, name):
    """The definition named ``name`` or with shortcut ``name``, or None."""
    if name in obj:
        return obj[name]
    for row in obj.values():
        if row["shortcut"] == name:
            return row
    return None
