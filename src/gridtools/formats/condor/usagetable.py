"""The table of resources a run's terminate (005) and evict (004) events end with.

HTCondor's shadow puts a *usage ad* into those events, made from the job's ad
as the run ends (``usage_ad``): for each resource the slot provided (the
job's ProvisionedResources, else CPUs, Disk and Memory) what it was given
(``<name>``, from ``<Name>Provisioned``), what it asked for
(``Request<Name>``), what it used (``<Name>Usage``, ``<Name>AverageUsage``)
and the devices it was assigned (``Assigned<Name>``); and how long it
executed and held its slot (``TimeExecuteUsage``, ``TimeSlotBusyUsage``,
from ActivationExecutionDuration and ActivationDuration). The event's text
shows it as a table (``render``)::

    \tPartitionable Resources :    Usage  Request Allocated
    \t   Cpus                 :                 1         1
    \t   Disk (KB)            :       44       44  41379984
    \t   Memory (MB)          :        1        1     12052

one row per resource, sorted by name whatever its case, and HTCondor's
JobEventLog reads the rows back into the attributes they came from
(``parse`` does the same).
"""

from gridtools.classad.values import ERROR, unparse_value

#: the resources of a usage ad when the job's ad names none (its ProvisionedResources)
DEFAULT_RESOURCES = "CPUs, Disk, Memory"
#: what a row's label adds to its resource's name
UNITS = {"Memory": " (MB)", "Disk": " (KB)", "Gpus": " (Average)", "GpusMemory": " (MB)",
         "TimeExecute": " (s)", "TimeSlotBusy": " (s)"}
#: the job ad's durations a usage ad shows as the usage of two pseudo-resources
DURATIONS = (("ActivationExecutionDuration", "TimeExecuteUsage"), ("ActivationDuration", "TimeSlotBusyUsage"))
#: the first words of the table's heading (HTCondor's reader takes either)
HEADINGS = ("Partitionable ", "Resources")


def title_case(text):
    """Each word's first letter in upper case, the others' in lower case (ASCII letters)."""
    out, upper = [], True
    for ch in text:
        out.append(ch.upper() if upper and "a" <= ch <= "z" else ch.lower() if not upper and "A" <= ch <= "Z"
                   else ch)
        upper = ch.isspace()
    return "".join(out)


def _copyable(value):
    """A value the usage ad takes: a number, a boolean or an error (not a string, not
    undefined)."""
    return type(value) in (bool, int, float) or value is ERROR


def resource_names(listed):
    """The resources a MachineResources (or ProvisionedResources) value ``listed`` names
    (split at commas and blanks), or those of ``DEFAULT_RESOURCES`` when it is no text."""
    return (listed if isinstance(listed, str) else DEFAULT_RESOURCES).replace(",", " ").split()


def usage_ad(ad):
    """The usage ad of job ad ``ad`` (a ClassAd, as the run ends): attribute -> value, in
    the order HTCondor's setEventUsageAd adds them."""
    usage = {}
    for name in resource_names(ad.eval("ProvisionedResources")):
        res = title_case(name)
        value = ad.eval(res + "Provisioned")
        if _copyable(value):
            usage[name] = value                 # (named as the machine's ad names it)
        for attr in ("Request" + res, res + "Usage", res + "AverageUsage", res + "MemoryUsage",
                     res + "MemoryAverageUsage"):
            value = ad.eval(attr)
            if _copyable(value):
                usage[attr] = value
        if ad.lookup("Assigned" + res) is not None:
            usage["Assigned" + res] = ad.eval("Assigned" + res)
    for attr, shown in DURATIONS:
        value = ad.eval(attr)
        if type(value) is int:
            usage[shown] = value
    return usage


def _cell(value):
    """(a value's text in the table, whether it shows a fractional part)."""
    if type(value) is float and value == value and abs(value) != float("inf"):
        if value - int(value) > 0.0:
            return f"{value:.2f}", True
        return str(int(value)), False
    return unparse_value(value, old=True), False


def render(usage):
    """The table's lines of usage ad ``usage`` (attribute -> value), as HTCondor's
    formatUsageAd writes them; "" for an empty one."""
    rows, fractional, loose = {}, set(), ""
    for attr, value in usage.items():
        text, has_fraction = _cell(value)
        if attr.startswith("Request"):
            res, column = attr[7:], "req"
        elif attr.startswith("Assigned"):
            res, column = attr[8:], "assigned"
        elif attr.endswith("AverageUsage"):
            res, column = attr[:-12], "use"
        elif attr.endswith("Usage"):
            res, column = attr[:-5], "use"
        else:
            res, column = attr, "alloc"
        if has_fraction:
            fractional.add(column)
        if not res:
            loose += f"\t{attr} = {text}\n"
        row = rows.setdefault(res.lower(), {"name": res})
        row[column] = text
    if not rows:
        return loose
    width = {"res": 12, "use": 8, "req": 8, "alloc": 0, "assigned": 0}
    for row in rows.values():
        for column in ("use", "req", "alloc", "assigned"):
            text = row.get(column, "")
            if column in fractional and text.isdigit():
                text += "   "               # (integers lined up with the dots of the others)
            row[column] = text
            width[column] = max(width[column], len(text))
        width["res"] = max(width["res"], len(row["name"]))
    alloc = max(width["alloc"], 9)
    out = [loose, f"\tPartitionable Resources : {'Usage':>{width['use']}} {'Request':>{width['req']}} "
                  f"{'Allocated' if width['alloc'] else '':>{alloc}} {'Assigned' if width['assigned'] else ''}\n"]
    for key in sorted(rows):
        row = rows[key]
        if not row["name"]:
            continue
        label = row["name"] + UNITS.get(row["name"], "")
        out.append(f"\t   {label:<{width['res'] + 8}} : {row['use']:>{width['use']}} {row['req']:>{width['req']}} "
                   f"{row['alloc']:>{alloc}} {row['assigned']}\n")
    return "".join(out)


def is_heading(line):
    """True when ``line`` of an event's body starts the table."""
    return line.lstrip("\t").startswith(HEADINGS)


def parse(lines):
    """The usage ad of a table's lines (its heading first), as HTCondor's JobEventLog reads
    them: the columns' right edges are where the heading's words end (the Assigned
    column runs to the line's end), and each row gives ``<Name>Usage``,
    ``Request<Name>``, ``<Name>`` and ``Assigned<Name>`` for the first word of its
    label; a blank cell gives nothing. Reading stops at a line without a colon."""
    if not lines:
        return {}
    edges = _edges(lines[0])
    usage = {}
    for line in lines[1:]:
        if ":" not in line:
            break
        label, _, table = line.partition(":")
        words = label.split()
        if not words:
            continue
        tag = words[0]
        use, req, alloc, assigned = edges
        cells = [(tag + "Usage", table[:use]), ("Request" + tag, table[use:req])]
        if alloc > 0:
            cells.append((tag, table[req:alloc]))
        if assigned > 0:
            cells.append(("Assigned" + tag, table[assigned:]))
        for attr, text in cells:
            value = _value(text)
            if value is not None:
                usage[attr] = value
    return usage


def _edges(heading):
    """(right edge of Usage, of Request, of Allocated or 0, left edge of Assigned or 0) in
    the part of the heading after its colon."""
    table = heading.partition(":")[2]
    at = 0
    while at < len(table) and table[at] == " ":
        at += 1
    while at < len(table) and table[at] != " ":
        at += 1
    use = at + 1
    while at < len(table) and table[at] == " ":
        at += 1
    while at < len(table) and table[at] != " ":
        at += 1
    req, alloc, assigned = at + 1, 0, 0
    found = table.find("Allocated", at)
    if found >= 0:
        alloc = found + 9
        found = table.find("Assigned", found)
        if found >= 0:
            assigned = found
    return use, req, alloc, assigned


def _value(text):
    """The value of a cell's text (None for a blank one, or one that is no expression)."""
    if not text.strip():
        return None
    from gridtools.classad import parse as parse_expr
    try:
        return parse_expr(text.strip()).eval()
    except Exception:  # noqa: BLE001 - a cell our language cannot read gives nothing
        return None
