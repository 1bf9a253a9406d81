"""condor_userprio's table: its columns, headings and footer, as HTCondor lays them out.

Each column has a width and a two-line heading centered over it; values are
right-aligned (numbers with two decimals, resources in use without), times
as ``MM/DD/YYYY HH:MM`` and time since as ``D+HH:MM`` (``<now>`` while
resources are in use). The name column is as wide as the longest name or
the ``Number of users: N`` footer. Which columns show:

- default (``-most``): Effective Priority, Priority Factor, Wghted In Use,
  Total Usage (wghted-hrs), Time Since Last Usage; with accounting groups
  configured also Config Quota and Use Surplus, and users listed under their
  group (``<none>`` for the others);
- ``-priority``: Effective Priority, Real Priority, Priority Factor;
- ``-usage``: Wghted In Use, Total Usage, Usage Start Time, Last Usage Time;
- ``-all``: every column.
"""

import time

#: key -> (width, first heading line, second heading line), in display order
COLUMNS = {
    "cfgquota": (9, "Config", "Quota"), "surplus": (7, "Use", "Surplus"),
    "effective": (12, "Effective", "Priority"), "real": (8, "Real", "Priority"),
    "factor": (9, "Priority", "Factor"), "inuse": (6, "Wghted", "In Use"),
    "total": (12, "Total Usage", "(wghted-hrs)"), "start": (16, "Usage", "Start Time"),
    "last": (16, "Last", "Usage Time"), "since": (10, "Time Since", "Last Usage"),
}
MOST = ("effective", "factor", "inuse", "total", "since")
SHOWN = {"priority": ("effective", "real", "factor"), "usage": ("inuse", "total", "start", "last"),
         "most": MOST, "all": tuple(COLUMNS)}
#: the narrowest name column
MIN_NAME = 10


def columns(shown, groups):
    wanted = set()
    for flag in shown:
        wanted.update(SHOWN.get(flag, ()))
    if not wanted:
        wanted = set(MOST)
    if groups and (not shown or "most" in shown):
        wanted.update(("cfgquota", "surplus"))
    return [key for key in COLUMNS if key in wanted]


def _center(text, width):
    left = (width - len(text)) // 2
    return (" " * left + text).ljust(width)[:width]


def _number(value, decimals, width):
    text = f"{value:{width}.{decimals}f}"
    return text if len(text) <= width else f"{value:.{width - 6}g}".rjust(width)


def _date(when):
    if when <= 0:
        return ""
    try:
        t = time.localtime(when)
    except (OverflowError, ValueError, OSError):     # (a time no clock shows, set by hand)
        return ""
    return f"{t.tm_mon:2d}/{t.tm_mday:02d}/{t.tm_year:<4d} {t.tm_hour:02d}:{t.tm_min:02d}"


def _since(seconds):
    if seconds is None:
        return ""
    if seconds <= 0:
        return "<now>"
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    return f"{days:3d}+{rest // 3600:02d}:{rest % 3600 // 60:02d}"


def _cell(key, row, quota):
    width = COLUMNS[key][0]
    if row is None:
        # the <none> group takes any surplus (HTCondor's condor_userprio says "yes")
        return ("yes" if key == "surplus" and quota == _NONE_GROUP else "").ljust(width)
    if key == "effective":
        return "" if row.is_group else _number(row.effective, 2, width)
    if key == "real":
        return "" if row.is_group else _number(row.real, 2, width)
    if key == "factor":
        return _number(row.factor, 2, width)
    if key == "inuse":
        return _number(row.in_use, 0, width)
    if key == "total":
        return _number(row.accumulated_hours, 2, width)
    if key == "start":
        return _date(row.begin_usage).rjust(width)
    if key == "last":
        return _date(row.last_usage).rjust(width)
    if key == "since":
        return _since(row.since_last_usage).rjust(width)
    if key == "cfgquota":
        return _number(quota[0], 2, width) if row.is_group and quota and quota[0] is not None else ""
    if key == "surplus":
        return (quota[1] if row.is_group and quota else "").ljust(width)
    return ""


#: what the Use Surplus column says of the <none> group
_NONE_GROUP = (None, "yes")


def surplus_policy(spec):
    """A group's Use Surplus word, as HTCondor's condor_userprio prints its SurplusPolicy:
    Regroup (GROUP_AUTOREGROUP), ByQuota (GROUP_ACCEPT_SURPLUS) or no."""
    return "Regroup" if spec.autoregroup else "ByQuota" if spec.accept_surplus else "no"


def _groups_config():
    from gridtools.cli.condor.machineviews import client_config
    from gridtools.sched.groups import GroupsConfig
    return GroupsConfig.from_config(client_config())


def _ordered(rows, acc):
    """(row, shown name, is a member shown under its group) in display order."""
    groups = list(acc.settings.groups)
    if not groups:
        return [(r, r.name, False) for r in rows]
    out = []
    for group in sorted(groups, key=str.lower) + ["<none>"]:
        head = next((r for r in rows if r.is_group and r.name == group), None)
        members = [r for r in rows if not r.is_group and (acc.settings.group_of(r.name) or "<none>") == group]
        if head is None and not members:
            continue
        out.append((head, group, False))
        out.extend((r, r.name, True) for r in members)
    return out


def render(rows, acc, domain, now, shown=()):
    """The whole table (empty when there are no rows)."""
    keys = columns(shown, acc.settings.groups)
    ordered = _ordered(rows, acc)
    quotas = {}
    if acc.settings.groups:
        for spec in _groups_config().groups:
            quotas[spec.name] = (spec.quota, surplus_policy(spec))
        quotas["<none>"] = _NONE_GROUP
    users = sum(1 for r in rows if not r.is_group)

    def label(row, name, member):
        full = name if (row is not None and row.is_group) or row is None else f"{name}@{domain}"
        return ("  " + full) if member else full
    footer = f"Number of users: {users}"
    width = max([MIN_NAME, len(footer)] + [len(label(r, n, m)) for r, n, m in ordered])
    lines = [f"Last Priority Update: {_short_date(acc.last_update or now)}"]
    lines.append(("Group" if acc.settings.groups else "").ljust(width) +
                 "".join(" " + _center(COLUMNS[k][1], COLUMNS[k][0]) for k in keys))
    lines.append(("  User Name" if acc.settings.groups else "User Name").ljust(width) +
                 "".join(" " + _center(COLUMNS[k][2], COLUMNS[k][0]) for k in keys))
    rule = "-" * width + "".join(" " + "-" * COLUMNS[k][0] for k in keys)
    lines.append(rule)
    for row, name, member in ordered:
        cells = [_cell(k, row, quotas.get(name)).rjust(COLUMNS[k][0]) for k in keys]
        lines.append(label(row, name, member).ljust(width) + "".join(" " + c for c in cells))
    lines.append(rule)
    lines.append(footer.ljust(width) + "".join(" " + _footer_cell(k, rows) for k in keys))
    return "".join(line.rstrip() + "\n" for line in lines)


def _footer_cell(key, rows):
    width = COLUMNS[key][0]
    users = [r for r in rows if not r.is_group]
    if key == "inuse":
        return _number(sum(r.in_use for r in users), 0, width)
    if key == "total":
        return _number(sum(r.accumulated_hours for r in users), 2, width)
    if key == "since":
        known = [r.since_last_usage for r in users if r.since_last_usage is not None]
        return _since(max(known)).rjust(width) if known else " " * width
    return " " * width


def _short_date(when):
    t = time.localtime(when)
    return f"{t.tm_mon:2d}/{t.tm_mday:<2d} {t.tm_hour:02d}:{t.tm_min:02d}"
