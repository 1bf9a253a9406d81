"""condor_userprio's table: its columns, headings and footer, as HTCondor lays them out.

Each column has a width and a two-line heading centered over it; values are
right-aligned (numbers with two decimals, resources in use without), times
as ``MM/DD/YYYY HH:MM`` and time since as ``D+HH:MM`` (``<now>`` while
resources are in use). The name column is as wide as the longest name or
the ``Number of users: N`` footer. Which columns show (HTCondor's order):

- default (``-most``): Effective Priority, Priority Factor, Wghted In Use,
  Total Usage (wghted-hrs), Time Since Last Usage, Submitter Floor and
  Submitter Ceiling (blank when a submitter has none); with accounting
  groups in the table also Config Quota, Use Surplus and Weighted Requested,
  and users listed under their group (``<none>`` for the others);
- ``-priority``: Effective Priority, Real Priority, Priority Factor;
- ``-usage``: Wghted In Use, Total Usage, Usage Start Time, Last Usage Time;
- ``-quotas``: Effective, Config and Subtree Quota, Use Surplus, Weighted
  Requested (of the groups only); ``-surplus``: Use Surplus; ``-sortkey``:
  Group Sort Key; ``-groupid``: Group Id; ``-order``: Group Order;
- ``-all``: every column of ``-most``, ``-quotas``, ``-priority`` and ``-usage``.

The footer's Time Since Last Usage is the age of the activity cut-off (the
day before, or ``-activefrom``'s date), blank when every user is listed.
"""

import time

#: key -> (width, first heading line, second heading line), in display order
COLUMNS = {
    "groupid": (5, "Group", "Id"), "order": (9, "Group", "Order"), "sortkey": (9, "Group", "Sort Key"),
    "effquota": (9, "Effective", "Quota"), "cfgquota": (9, "Config", "Quota"), "surplus": (7, "Use", "Surplus"),
    "treequota": (9, "Subtree", "Quota"),
    "effective": (12, "Effective", "Priority"), "real": (8, "Real", "Priority"),
    "factor": (9, "Priority", "Factor"), "inuse": (6, "Wghted", "In Use"),
    "total": (12, "Total Usage", "(wghted-hrs)"), "start": (16, "Usage", "Start Time"),
    "last": (16, "Last", "Usage Time"), "since": (10, "Time Since", "Last Usage"),
    "requested": (10, "Weighted", "Requested"),
    "floor": (9, "Submitter", "Floor"), "ceiling": (9, "Submitter", "Ceiling"),
}
PRIOS = ("effective", "real", "factor")
QUOTAS = ("effquota", "cfgquota", "treequota", "surplus", "requested")
MOST = ("cfgquota", "surplus", "effective", "factor", "inuse", "total", "since", "requested",
        "ceiling", "floor")
SHOWN = {"priority": PRIOS, "usage": ("inuse", "total", "start", "last"), "most": MOST,
         "all": MOST + QUOTAS + PRIOS + ("start", "last"), "quotas": QUOTAS, "surplus": ("surplus",),
         "sortkey": ("sortkey",), "groupid": ("groupid",), "order": ("order",)}
#: the narrowest name column
MIN_NAME = 10
#: a group's sort key at or above this is shown as <last>
LAST_SORT_KEY = 3.40282001e38


class View:
    """How the table is laid out beyond its columns: ``hier`` (None: users under their
    groups when there are groups; True: -hierarchical; False: -flat), ``group_order``
    (-grouporder), ``dash_quota`` (-quotas or -surplus given), ``cutoff`` (the activity
    cut-off the footer shows: a time, None when every user is listed), ``quotas``
    (group -> its ConfigQuota, EffectiveQuota, SubtreeQuota, GroupSortKey, SurplusPolicy,
    Requested; None: from condor_config), ``groups`` (the groups; None: the accountant's),
    ``group_of`` (a user row's group; None: the accountant's) and ``qualify`` (user names
    get ``@domain``)."""

    def __init__(self, hier=None, group_order=False, dash_quota=False, cutoff=None, quotas=None,
                 groups=None, group_of=None, qualify=True):
        self.hier, self.group_order, self.dash_quota = hier, group_order, dash_quota
        self.cutoff, self.quotas, self.groups, self.group_of = cutoff, quotas, groups, group_of
        self.qualify = qualify


def columns(shown, groups, dash_quota=False):
    """The column keys shown: ``groups`` whether users are shown under groups."""
    wanted = set()
    for flag in shown:
        wanted.update(SHOWN.get(flag, ()))
    if not wanted:
        wanted = set(MOST)
    if not groups and not dash_quota:
        wanted -= set(QUOTAS)
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


def _group_value(quota, attr, width, decimals=2):
    value = (quota or {}).get(attr)
    return _number(value, decimals, width) if isinstance(value, (int, float)) else "n/d".rjust(width)


def _cell(key, row, quota, extra):
    """One cell of a row (``row`` None: a group without a record of its own);
    ``quota``: its group's attributes; ``extra``: (group id, group order) of the row."""
    width = COLUMNS[key][0]
    group_id, order = extra
    is_group = row is None or row.is_group
    if key == "groupid":
        return _number(group_id, 0, width) if group_id else ""
    if key == "order":
        return _number(order, 2, width) if order is not None else ""
    if key == "surplus":
        if not is_group:
            return ""
        # the <none> group takes any surplus (HTCondor's condor_userprio says "yes")
        return ("yes" if not group_id else (quota or {}).get("Use", "")).ljust(width)
    if key in ("sortkey", "effquota", "cfgquota", "treequota", "requested"):
        if not is_group:
            return ""
        if key == "sortkey":
            value = (quota or {}).get("GroupSortKey")
            if isinstance(value, (int, float)) and value >= LAST_SORT_KEY:
                return "<last>".rjust(width)
            return _group_value(quota, "GroupSortKey", width)
        if key == "cfgquota" and quota is not None and quota.get("ConfigQuota") is None:
            return ""
        attr = {"effquota": "EffectiveQuota", "cfgquota": "ConfigQuota", "treequota": "SubtreeQuota",
                "requested": "Requested"}[key]
        return _group_value(quota, attr, width, 0 if key == "requested" else 2)
    if row is None:
        return ""
    if key == "effective":
        return "" if row.is_group else _number(row.effective, 2, width)
    if key == "real":           # (a group's too: only its Effective Priority means nothing)
        return _number(row.real, 2, width) if row.factor > 0 else ""
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
    if key == "ceiling":
        return _number(row.ceiling, 2, width) if row.ceiling > -1 else ""
    if key == "floor":
        return _number(row.floor, 2, width) if row.floor > 0 else ""
    return ""


def surplus_policy(spec):
    """A group's Use Surplus word, as HTCondor's condor_userprio prints its SurplusPolicy:
    Regroup (GROUP_AUTOREGROUP), ByQuota (GROUP_ACCEPT_SURPLUS) or no."""
    return "Regroup" if spec.autoregroup else "ByQuota" if spec.accept_surplus else "no"


#: the SurplusPolicy attribute's words -> the Use Surplus column's
_SURPLUS_WORDS = {"regroup": "Regroup", "byquota": "ByQuota", "no": "no"}


def _groups_config():
    from gridtools.cli.condor.machineviews import client_config
    from gridtools.sched.groups import GroupsConfig
    return GroupsConfig.as_negotiator_reads(client_config())


def _quotas(view, groups):
    """group -> its attributes, with "Use" the Use Surplus word; and the footer's word."""
    found = {}
    if view.quotas is not None:
        for name, attrs in view.quotas.items():
            found[name] = dict(attrs, Use=_SURPLUS_WORDS.get(str(attrs.get("SurplusPolicy", "")).lower(), "n/a"))
    elif groups:
        for spec in _groups_config().groups:
            found[spec.name] = {"ConfigQuota": float(spec.quota), "Use": surplus_policy(spec)}
        found["<none>"] = {"ConfigQuota": None}
    words = {attrs.get("Use") for attrs in found.values()}
    if view.quotas is None and groups:
        words.add("ByQuota")            # (the <none> group accepts surplus)
    footer = "Regroup" if "Regroup" in words else "ByQuota" if "ByQuota" in words else ""
    return found, footer


def _ordered(rows, groups, group_of, hier, group_order, hide_groups, place=None):
    """(row, shown name, is a member shown under its group, group) in display order;
    ``place``: group -> its sort key in a hierarchical table (``_hier_place``)."""
    if hier:
        out = []
        names = sorted(groups, key=str.lower) + ["<none>"]
        if place is not None:
            names.sort(key=lambda g: place.get(g, (True,)))
        for group in names:
            head = next((r for r in rows if r.is_group and r.name == group), None)
            members = [r for r in rows if not r.is_group and group_of(r) == group]
            if head is None and not members:
                continue
            out.append((head, group, False, group))
            out.extend((r, r.name, True, group) for r in members)
        return out
    users = [(r, r.name, False, group_of(r)) for r in rows if not r.is_group]
    heads = [] if hide_groups else [(r, r.name, False, r.name) for r in rows if r.is_group]
    if group_order:
        # groups first in the accountant's order (breadth first, the root group <none> first)
        walk = sorted(groups, key=lambda g: (g.count("."), g.lower()))
        place = {name: i for i, name in enumerate(["<none>"] + walk)}
        heads.sort(key=lambda item: (place.get(item[1], len(place)), item[1]))
        return heads + users
    return sorted(heads + users, key=lambda item: (item[0].effective, item[0].name))


def _group_ids(groups):
    """group -> its Group Id: 1, 2, ... by name, 0 for <none> (as HTCondor numbers them)."""
    return {name: i for i, name in enumerate(sorted(groups), 1)}


def _hier_place(groups, keys, orders, ids, none_last):
    """group -> its sort key in a hierarchical table, as HTCondor's condor_userprio sorts
    them: by Group Order (DisplayOrder) when priority or usage columns show, else by
    Group Id; ties by Group Id (<none> is 0); <none> last when the global surplus
    policy is Regroup."""
    by_order = bool({"effective", "inuse", "total"} & set(keys))
    return {g: (none_last and g == "<none>", orders.get(g, 0.0) if by_order else 0.0, ids.get(g, 0))
            for g in list(groups) + ["<none>"]}


def _orders(rows, groups, group_of, keys, quotas, ids):
    """group -> its Group Order (HTCondor's DisplayOrder), when a user is in a group."""
    if not any(not r.is_group and group_of(r) != "<none>" for r in rows):
        return {}
    big = 3.4028234663852886e38
    heads = {r.name: r for r in rows if r.is_group}
    found = {}
    for name in list(groups) + ["<none>"]:
        head = heads.get(name)
        if "effective" in keys:
            key = (quotas.get(name) or {}).get("GroupSortKey")
            found[name] = key if isinstance(key, (int, float)) else \
                (head.effective if head is not None and ids.get(name) else big)
        elif "inuse" in keys or "total" in keys:
            found[name] = head.accumulated_hours if head is not None else 0.0
        else:
            found[name] = float(ids[name]) if ids.get(name) else big
    return found


def render(rows, acc, domain, now, shown=(), view=None):
    """The whole table (empty when there are no rows)."""
    view = view or View()
    groups = list(view.groups if view.groups is not None else acc.settings.groups)
    group_of = view.group_of or (lambda r: acc.settings.group_of(r.name) or "<none>")
    in_groups = any((r.is_group and r.name != "<none>") or (not r.is_group and group_of(r) != "<none>")
                    for r in rows)
    wanted = set()
    for flag in shown:
        wanted.update(SHOWN.get(flag, ()))
    only_prios = bool(wanted) and wanted <= set(PRIOS)
    hier = view.hier if view.hier is not None else not only_prios
    hide_groups = only_prios and not hier
    hier = hier and in_groups
    keys = columns(shown, in_groups and not hide_groups, view.dash_quota)
    hide_users = bool(keys) and set(keys) <= set(QUOTAS)
    quotas, global_surplus = _quotas(view, groups)
    ids = _group_ids(groups)
    orders = _orders(rows, groups, group_of, keys, quotas, ids)
    place = _hier_place(groups, keys, orders, ids, global_surplus == "Regroup") if hier else None
    if "order" not in keys:
        orders = {}
    ordered = _ordered(rows, groups, group_of, hier, view.group_order, hide_groups, place)
    # (<none> shows when a user listed is in another group, else once another group has)
    if not hier and not any(not r.is_group and group_of(r) != "<none>" for r in rows):
        kept, seen = [], False
        for item in ordered:
            if item[0] is not None and item[0].is_group:
                if item[1] == "<none>" and not seen:
                    continue
                seen = True
            kept.append(item)
        ordered = kept
    users = sum(1 for r in rows if not r.is_group)

    def label(row, name, member):
        qualify = view.qualify and row is not None and not row.is_group
        full = f"{name}@{domain}" if qualify else name
        return ("  " + full) if member else full
    if hide_users:
        ordered = [item for item in ordered if item[0] is None or item[0].is_group]
    footer = f"Number of users: {users}"
    width = max([MIN_NAME, len(footer)] + [len(label(r, n, m)) for r, n, m, _g in ordered])
    tm_last = acc.last_update or now
    lines = [f"Last Priority Update: {_short_date(tm_last)}"]
    title = ("Name" if hier else "Group Name") if hide_users else ("  User Name" if hier else "User Name")
    lines.append(("Group" if hier else "").ljust(width) +
                 "".join(" " + _center(COLUMNS[k][1], COLUMNS[k][0]) for k in keys))
    lines.append(title.ljust(width) + "".join(" " + _center(COLUMNS[k][2], COLUMNS[k][0]) for k in keys))
    rule = "-" * width + "".join(" " + "-" * COLUMNS[k][0] for k in keys)
    lines.append(rule)
    for row, name, member, group in ordered:
        extra = (ids.get(group, 0), orders.get(group))
        quota = quotas.get(name) if row is None or row.is_group else None
        cells = [_cell(k, row, quota, extra).rjust(COLUMNS[k][0]) for k in keys]
        lines.append(label(row, name, member).ljust(width) + "".join(" " + c for c in cells))
    lines.append(rule)
    lines.append(footer.ljust(width) +
                 "".join(" " + _footer_cell(k, rows, view.cutoff, tm_last, global_surplus) for k in keys))
    return "".join(line.rstrip() + "\n" for line in lines)


def _footer_cell(key, rows, cutoff, tm_last, surplus):
    width = COLUMNS[key][0]
    users = [r for r in rows if not r.is_group]
    if key == "inuse":
        return _number(sum(r.in_use for r in users), 0, width)
    if key == "total":
        return _number(sum(r.accumulated_hours for r in users), 2, width)
    if key == "surplus":
        return surplus.ljust(width)
    if key == "last":
        return _date(cutoff).rjust(width) if cutoff is not None and cutoff > 0 else " " * width
    if key == "since":
        if cutoff is None or cutoff <= 0:
            return " " * width
        return _since(tm_last - cutoff).rjust(width)
    return " " * width


def _short_date(when):
    t = time.localtime(when)
    return f"{t.tm_mon:2d}/{t.tm_mday:<2d} {t.tm_hour:02d}:{t.tm_min:02d}"
