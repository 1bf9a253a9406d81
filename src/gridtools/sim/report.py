"""What a simulated run shows, as text tables (tabulate).

- shares over time: at each report time, each user's part of the running
  slots and their decayed usage (the share tree's view of the past);
- per user: tasks started, mean and longest wait;
- the cell: utilization (slot-seconds used of those offered until the
  last task ended) and the passes' times (count, mean, longest).
"""

from tabulate import tabulate


def _users(stats):
    found = set(stats.waits)
    for _t, slots, usage in stats.samples:
        found.update(slots)
        found.update(usage)
    return sorted(found)


def shares_table(stats):
    users = _users(stats)
    rows = []
    for when, slots, usage in stats.samples:
        total = sum(slots.values())
        row = [f"{when / 3600:.1f}"]
        for user in users:
            part = slots.get(user, 0) / total if total else 0.0
            row += [f"{part:.0%}", f"{usage.get(user, 0.0):.1f}"]
        rows.append(row)
    headers = ["hours"] + [f"{u} {what}" for u in users for what in ("slots", "usage")]
    return tabulate(rows, headers=headers, stralign="right")


def users_table(stats):
    rows = []
    for user in _users(stats):
        waits = stats.waits.get(user, [])
        mean = sum(waits) / len(waits) if waits else 0.0
        rows.append([user, len(waits), f"{mean:.1f}", f"{max(waits, default=0.0):.1f}"])
    return tabulate(rows, headers=["user", "tasks", "mean wait s", "longest wait s"])


def cell_table(stats):
    offered = stats.capacity * stats.end_time if stats.end_time else 0.0
    passes = stats.passes
    mean = sum(passes) / len(passes) if passes else 0.0
    rows = [["utilization", f"{stats.busy / offered:.1%}" if offered else "-"],
            ["tasks started", stats.started], ["tasks ended", stats.ended],
            ["passes", len(passes)], ["pass time mean", f"{mean * 1000:.2f} ms"],
            ["pass time longest", f"{max(passes, default=0.0) * 1000:.2f} ms"]]
    return tabulate(rows, tablefmt="plain")


def text(stats):
    return "\n\n".join([shares_table(stats), users_table(stats), cell_table(stats)]) + "\n"
