"""Queue instances as qstat shows them: states, alarms, resources, summaries.

Everything is computed from the status snapshot: a queue row (name, slots,
used, qmod state letters, ``attrs`` from queue_conf), the load values of its
host and the complex table. Load and suspend alarms (``a``, ``A``) are
derived here from the thresholds and the current load; a host without load
values is in the unknown state ``u``.
"""

from gridtools.cli.sge import loadvalues
from gridtools.cli.status import held_once, task_hard
from gridtools.errors import GridError
from gridtools.formats import values

#: queue instance state letters in the order Grid Engine prints them
STATE_ORDER = "aACDduESsco"
#: qtype abbreviations: BATCH, INTERACTIVE (and a queue with a PE list is also "P", one
#: with a checkpointing list "C")
_QTYPE = {"BATCH": "B", "INTERACTIVE": "I"}
#: states that make a queue instance's slots temporarily unavailable (-g c "aoACDS")
TEMP_STATES = "aoACDS"
#: states that need an administrator (-g c "cdsuE")
MANUAL_STATES = "cdsuE"
#: per-state columns of -g c -ext, in order
EXT_STATES = "sASCuadDcoE"
#: queue letters implied by a host state the dispatcher publishes
_HOST_STATE_LETTERS = {"Suspend": "s", "Draining": "d", "Drained": "d", "Flush": "d", "Down": "u"}


def host_load(snap, host):
    return (snap.get("hosts") or {}).get(host) or {}


def order_states(letters):
    seen = set(letters)
    return "".join(c for c in STATE_ORDER if c in seen)


def qtype(row):
    letters = "".join(_QTYPE.get(t, "") for t in ("BATCH", "INTERACTIVE") if t in row.get("qtype", ()))
    if row.get("pe_list"):
        letters += "P"
    if row.get("ckpt_list"):
        letters += "C"
    return letters or "N"


def suspend_thresholds_on(attrs):
    """Do a queue instance's suspend thresholds work (queue_conf(5): ``nsuspend`` 0 or
    ``suspend_interval`` 0 turn them off; no ``A`` state then)? Rows without the two
    attributes count as on."""
    try:
        nsuspend = int(str(attrs.get("nsuspend", 1)).strip() or 1)
        interval = values.parse_time(str(attrs.get("suspend_interval", "00:05:00")))
    except (ValueError, GridError):
        return True
    return nsuspend != 0 and interval != 0


def _threshold_lines(row, snap, kind):
    """(name, value text, threshold) of each exceeded load or suspend threshold; value
    text None for a threshold on a value there is none of (see ``_threshold_value``)."""
    attrs = row.get("attrs") or {}
    if kind != "load" and not suspend_thresholds_on(attrs):
        return []
    thresholds = attrs.get("load_thresholds" if kind == "load" else "suspend_thresholds") or {}
    complexes = snap.get("complexes") or {}
    found = []
    for name, limit in thresholds.items():
        cx = complexes.get(name)
        value = _threshold_value(row, snap, name, cx)
        if value is None:
            if cx is None or str(cx[4]).upper() == "NO":
                found.append((name, None, limit))
            continue
        relop = cx[2] if cx else ">="
        have, want = loadvalues.to_number(value), loadvalues.to_number(limit)
        if have is None or want is None or not loadvalues.compare(have, relop, want):
            continue
        shown = f"{have:.6f}" if loadvalues.ctype(name, complexes) != "MEMORY" else loadvalues.memory(have)
        found.append((name, shown, limit))
    return found


def _threshold_value(row, snap, name, cx):
    """The value a threshold on ``name`` is compared with, as Grid Engine's load alarm
    takes it: the host's load value, else the ``global`` one, else (not for a
    consumable) the queue instance's complex_values one; None without any, which is an
    alarm of itself for a value that is not consumable (a host whose execution daemon
    is not heard from keeps only its static values: arch, num_proc, mem_total, ...)."""
    value = host_load(snap, row["host"]).get(name)
    if value is None:
        value = (snap.get("global_load") or {}).get(name)
    if value is None and (cx is None or str(cx[4]).upper() == "NO"):
        value = ((row.get("attrs") or {}).get("complex_values") or {}).get(name)
    return value


def alarm_reasons(row, snap, kind):
    """The -explain lines of a load (``kind="load"``) or suspend alarm."""
    label = "load-threshold" if kind == "load" else "suspend-threshold"
    unknown = None
    lines = []
    for name, value, limit in _threshold_lines(row, snap, kind):
        if value is not None:
            lines.append(f"alarm hl:{name}={value} {label}={limit}")
            continue
        if unknown is None:
            unknown = "u" in _base_states(row, snap)
        lines.append(f'error: no value for "{name}" because execd is in unknown state' if unknown
                     else f"error: no complex attribute for threshold {name}")
    return lines


def _base_states(row, snap):
    """The state letters of a queue instance but its alarms."""
    letters = set(row.get("states") or "")
    load = host_load(snap, row["host"])
    if not load:
        letters.add("u")
    letters.update(_HOST_STATE_LETTERS.get(load.get("state", ""), ""))
    return letters


def states(row, snap):
    """The state letters of a queue instance: qmod states plus alarms and unknown (an
    unknown one is in load alarm too when a threshold names a value it no longer has)."""
    letters = _base_states(row, snap)
    if _threshold_lines(row, snap, "load"):
        letters.add("a")
    if _threshold_lines(row, snap, "suspend"):
        letters.add("A")
    return order_states(letters)


def load_value(row, snap):
    """The load_avg shown for a queue instance, or None when its host reports no load."""
    load = host_load(snap, row["host"])
    value = load.get("load_avg")
    return float(value) if value is not None else None


def explain_lines(row, snap, letters):
    """The lines -explain prints under a queue for the requested letters (a, A, c, E)."""
    lines = []
    current = states(row, snap)
    if "a" in letters and "a" in current:
        lines += alarm_reasons(row, snap, "load")
    if "A" in letters and "A" in current:
        lines += alarm_reasons(row, snap, "suspend")
    for letter in "cE":
        if letter in letters and letter in current:
            lines += list((row.get("messages") or {}).get(letter, []))
    return lines


# ---------------------------------------------------------------- -F resources

#: queue_conf values -F shows as queue-fixed (qf) values, after qname and hostname
QUEUE_FIXED = ("tmpdir", "seq_no", "rerun", "calendar", "s_rt", "h_rt", "s_cpu", "h_cpu",
               "s_fsize", "h_fsize", "s_data", "h_data", "s_stack", "h_stack", "s_core", "h_core",
               "s_rss", "h_rss", "s_vmem", "h_vmem", "min_cpu_interval")


def _consumable(name, complexes):
    cx = complexes.get(name)
    return bool(cx) and cx[4] in ("YES", "JOB")


def consumed(snap, level, name):
    """Amount of consumable ``name`` taken by running jobs at a level: what each job
    asked for, else the complex's default (as the scheduler and qhost count it).

    ``level`` is ("global",), ("host", host) or ("queue", queue instance name).
    """
    total = 0.0
    complexes = snap.get("complexes") or {}
    row_cx = complexes.get(name)
    per_job = (row_cx or [None] * 5)[4] == "JOB"
    for row in snap["rows"]:
        if "granted" not in row or row["state"] == "z":
            continue
        want = loadvalues.request_amount(name, row_cx, task_hard(snap, row))
        once = per_job or held_once(snap, row, name)
        for i, (queue, host, slots) in enumerate(row["granted"]):
            hit = (level[0] == "global" or (level[0] == "host" and host == level[1])
                   or (level[0] == "queue" and f"{queue}@{host}" == level[1]))
            if hit and (not once or i == 0):
                total += want * (1 if once else slots)
    return total


def _complex_entries(values_map, prefix, level, snap):
    """(domain, name, number or None, raw value) of the complex values of one layer."""
    complexes = snap.get("complexes") or {}
    found = []
    for name, value in values_map.items():
        if _consumable(name, complexes):
            left = (loadvalues.to_number(value) or 0.0) - consumed(snap, level, name)
            found.append((prefix + "c", name, left, left))
        else:
            found.append((prefix + "f", name, _number(name, value, complexes), value))
    return found


def _number(name, value, complexes):
    if loadvalues.ctype(name, complexes) in ("STRING", "CSTRING", "RESTRING", "HOST"):
        return None
    if str(value).strip().upper() == "INFINITY":
        return float("inf")
    return loadvalues.to_number(value)


def resources(row, snap, wanted=None):
    """(domain, name, value) of every resource -F shows for a queue instance.

    Names come in Grid Engine's order (global values, host load values, host
    values, the queue's own, the queue's complex values); a name defined on
    several layers shows once, with the dominant value: the smallest for a
    ``<=``/``<`` complex, the largest for ``>=``/``>``, else the outermost
    layer's (global before host before queue)."""
    complexes = snap.get("complexes") or {}
    host_values = snap.get("host_values") or {}
    attrs = row.get("attrs") or {}
    host = row["host"]
    found = [("gl", n, _number(n, v, complexes), v) for n, v in loadvalues.ordered_loads(snap.get("global_load") or {}, complexes)]
    found += _complex_entries(host_values.get("global", {}), "g", ("global",), snap)
    found += [("hl", n, _number(n, v, complexes), v)
              for n, v in loadvalues.ordered_loads(host_load(snap, host), complexes)]
    found += _complex_entries(host_values.get(host, {}), "h", ("host", host), snap)
    free = max(0, row["slots"] - row["used"] - row.get("resv", 0))
    found += [("qf", "qname", None, row["queue"]), ("qf", "hostname", None, host),
              ("qc", "slots", float(free), free)]
    found += [("qf", name, _number(name, attrs[name], complexes), attrs[name])
              for name in QUEUE_FIXED if name in attrs]
    found += _complex_entries(attrs.get("complex_values") or {}, "q", ("queue", row["name"]), snap)
    found = [(dom, name, loadvalues.qstat_value(name, value, complexes))
             for dom, name, _n, value in _dominant(found, complexes)]
    if wanted:
        names = _full_names(wanted, complexes)
        found = [entry for entry in found if entry[1] in names]
    return found


def _dominant(entries, complexes):
    """One entry per name, at the place of its first one: the dominant value of its layers."""
    best, order = {}, []
    for entry in entries:
        name = entry[1]
        if name not in best:
            best[name] = entry
            order.append(name)
        elif _overrides(entry, best[name], complexes):
            best[name] = entry
    return [best[name] for name in order]


def _overrides(lower, upper, complexes):
    """True when a later layer's entry dominates an earlier one (Grid Engine keeps the
    earlier on a tie, for ``==``/``!=`` complexes, and for values that are no number)."""
    relop = (complexes.get(lower[1]) or [None, None, "<="])[2]
    if relop in ("==", "!=") or lower[2] is None or upper[2] is None:
        return False
    if relop in (">=", ">"):
        return lower[2] > upper[2]
    return lower[2] < upper[2]


def _full_names(names, complexes):
    by_short = {row[0]: name for name, row in complexes.items()}
    return {by_short.get(n, n) for n in names}


# ---------------------------------------------------------------- -g c

def cluster_summary(queue_rows, snap):
    """One dict per cluster queue: load, used, resv, available, total and state counts."""
    groups = {}
    for row in queue_rows:
        groups.setdefault(row["queue"], []).append(row)
    result = []
    for name in sorted(groups):
        result.append(_summarize(name, groups[name], snap))
    return result


def _summarize(name, rows, snap):
    loads, info = [], {"name": name, "used": 0, "resv": 0, "available": 0, "total": 0,
                       "temp_disabled": 0, "manual_intervention": 0}
    info["by_state"] = {letter: 0 for letter in EXT_STATES}
    for row in rows:
        letters = states(row, snap)
        np_load = host_load(snap, row["host"]).get("np_load_avg")
        if np_load is not None:
            loads.append(float(np_load))
        info["used"] += row["used"]
        info["resv"] += row.get("resv", 0)
        info["total"] += row["slots"]
        if any(c in TEMP_STATES for c in letters):
            info["temp_disabled"] += row["slots"]
        if any(c in MANUAL_STATES for c in letters):
            info["manual_intervention"] += row["slots"]
        if not any(c in TEMP_STATES + MANUAL_STATES for c in letters):
            info["available"] += max(0, row["slots"] - row["used"] - row.get("resv", 0))
        for letter in letters:
            if letter in info["by_state"]:
                info["by_state"][letter] += row["slots"]
    info["load"] = sum(loads) / len(loads) if loads else None
    return info
