"""What condor_status shows besides raw ads: its tables and summaries (the ads it
makes from the job queue, submitters and the schedd, are ``submitters``').

Layouts follow HTCondor's condor_status:

- slots: ``Name OpSys Arch State Activity LoadAv Mem ActvtyTime`` (Name 34
  characters wide at least and as wide as the longest name, cut only to fit a
  display that is not wide: ``cropped``; State and Activity as wide as their
  longest value, Arch 8 and Mem 6; LoadAv the slot's CondorLoadAvg, the load of
  its job), a blank line, then the summary per
  ``Arch/OpSys`` and in total: ``Total Owner Claimed Unclaimed Matched
  Preempting Drain Backfill BkIdle``;
- ``-run`` (``-claimed``): ``Name OpSys Arch LoadAv RemoteUser
  ClientMachine``, then the summary ``Machines MIPS KFLOPS AvgLoadAvg`` per
  ``Arch/OpSys`` and in total (an ad without Mips, KFlops or LoadAvg counts
  as malformed, and a line says how many were);
- ``-submitters``: ``Name Machine RunningJobs IdleJobs HeldJobs`` (Name and
  Machine 15 and 12 wide at least, fitted to the display) and their totals; ``-schedd``: the same headings (of its TotalRunningJobs,
  TotalIdleJobs and TotalHeldJobs), then ``TotalRunningJobs TotalIdleJobs
  TotalHeldJobs`` in its totals.

When no ad matches nothing is printed: neither headings nor totals.
The tables of -submitters and -schedd are ``submitters``'.
-compact's forms are ``compactviews``'.

``check_read`` applies the READ security level to the caller before
anything is shown.
``published_status`` reads the daemon's status, waiting for the first one
of a daemon that has just started.
"""

import os
import pwd

from gridtools import cell, seclevels
from gridtools.classad import ClassAd
from gridtools.errors import GridError
from gridtools.formats.condor import VERSION

#: the constraints of the query modes (HTCondor's)
MODE_CONSTRAINTS = {"avail": 'State == "Unclaimed" && Cpus > 0 && Memory > 0', "run": 'State == "Claimed"'}
_TOTAL_HEAD = ("%6.6s %5.5s %7.7s %9.9s %7.7s %10.10s %6.6s %8.8s %6.6s"
               % ("Total", "Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drain", "Backfill",
                  "BkIdle"))
_RUN_HEAD = "%9.9s  %11.11s  %11.11s  %11.11s" % ("Machines", "MIPS", "KFLOPS", "AvgLoadAvg")
#: seconds a query waits for the first status of a daemon that has just started
FIRST_STATUS_WAIT = 10.0
#: narrowest Name column of the slot tables (HTCondor's ``WIDTH -34 FIT``: it grows to
#: the longest name)
NAME_WIDTH = 34
#: narrowest key column of the summary
KEY_WIDTH = 14
#: narrowest key column of the summary of a wide display (-wide, -wide:N over 100): "Total"
WIDE_KEY = 5


def in_mode(mode, ad):
    """Whether a slot ad passes a query mode's constraint (-avail, -run)."""
    state = ad.eval("State")
    if mode == "run":
        return state == "Claimed"
    cpus, memory = ad.eval("Cpus"), ad.eval("Memory")
    return state == "Unclaimed" and type(cpus) in (int, float) and cpus > 0 \
        and type(memory) in (int, float) and memory > 0


# ---------------------------------------------------------------- access

def client_config():
    """The configuration as the tools read it: the built-in defaults when the cell has
    no file. One that cannot be read is refused, as HTCondor's tools refuse to run on
    it (never read as the defaults, which would let every caller past the ALLOW and
    DENY lists it holds)."""
    from gridtools.errors import lines
    from gridtools.formats import condor_config
    path = condor_config.locate(cell.etc("condor_config"))
    if path != "ONLY_ENV" and not os.path.lexists(path):    # (as the daemon reads a cell without one)
        return condor_config.load("ONLY_ENV")
    try:
        return condor_config.load(path)
    except (GridError, OSError) as exc:
        raise GridError(lines(f"Configuration Error while reading config source {path}",
                              str(exc)), 1) from None


def _managers():
    try:
        with open(cell.etc("managers"), encoding="utf-8") as fh:
            return {line.strip() for line in fh if line.strip() and not line.startswith("#")}
    except OSError:
        return set()


def caller():
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def identity(config=None):
    config = config or client_config()
    return seclevels.identity(caller(), config.get, cell.hostname())


def verdict(level, subsystem):
    """(Verdict, Identity) of the caller at a security level of a daemon (``subsystem``)."""
    config = client_config()
    who = identity(config)
    return seclevels.verify(config.get, level, who, subsystem, seclevels.manager_defaults(_managers())), who


def check_read(err, subsystem):
    """Refuse (GridError) a caller the READ level does not allow."""
    from gridtools.cli.condor import access
    who = access.refused("READ", subsystem)
    if who is not None:
        err.write(f"Error: Failed to fetch ads from: {who.hosts[0]}\n")
        raise GridError(seclevels.denied_line(who), 1)


def published_status():
    """The daemon's status snapshot, or GridError when no daemon serves the cell."""
    from gridtools.spool import daemonctl, status
    snap = status.read()
    if snap is None and daemonctl.running():
        snap = first_status(daemonctl, status)
    if snap is None or not daemonctl.running():
        raise GridError(f"Error: Couldn't contact the condor_collector on {cell.hostname()}: the gridtools "
                        f"daemon of cell {cell.root()} is not running", 1)
    return snap


def first_status(daemonctl, status):
    """The status a daemon that has just started publishes after its first pass (None
    when it stops or takes longer than FIRST_STATUS_WAIT)."""
    import time
    end = time.monotonic() + FIRST_STATUS_WAIT
    while time.monotonic() < end and daemonctl.running():
        time.sleep(0.02)
        snap = status.read()
        if snap is not None:
            return snap
    return None


# ---------------------------------------------------------------- time and numbers

def elapsed(seconds):
    """``D+HH:MM:SS``."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    return f"{days}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def _text(ad, attr, default="??"):
    value = ad.eval(attr)
    return value if isinstance(value, str) else default


def _number(ad, attr):
    value = ad.eval(attr)
    return value if type(value) in (int, float) else None


# ---------------------------------------------------------------- slot tables

#: the width HTCondor counts for the columns after Name of the slot table, of -run's,
#: of -state's and of -server's, when it fits the Name column to a display
FIXED_AFTER_NAME = {"slots": 65, "run": 63, "state": 34 + 3 * 12, "server": 65}


def cropped(name_w, fixed, fit):
    """HTCondor's fit of a table's Name column to a display that is not wide (``fit``:
    its width less one; None: no fitting): a Name column that would overflow, the
    columns after it taking ``fixed``, shrinks to what is left, and is 12 wide at
    least then."""
    if fit is None or fit - fixed - name_w >= 0:
        return name_w
    return max(12, fit - fixed)


def _columns(mode, ads, now, fit=None):
    """(headers, widths, alignments, rows) of the slot table (its Name column fitted to
    ``fit``: ``cropped``)."""
    longest = max((len(_text(ad, "Name")) for ad in ads), default=0)
    name_w = max(NAME_WIDTH, longest)
    name_w = cropped(name_w, FIXED_AFTER_NAME["run" if mode == "run" else "slots"], fit)
    rows = []
    for ad in ads:
        mem = _number(ad, "Memory")
        entered = _number(ad, "EnteredCurrentActivity")
        common = [_text(ad, "Name")[:name_w], _text(ad, "OpSys"), _text(ad, "Arch")]
        load_text = _load_text(ad)
        if mode == "run":
            rows.append(common + [load_text, _text(ad, "RemoteUser"), _text(ad, "ClientMachine")])
        else:
            rows.append(common + [_text(ad, "State"), _text(ad, "Activity"), load_text,
                                  str(int(mem)) if mem is not None else "??",
                                  elapsed(now - entered) if entered is not None else "-"])
    if mode == "run":
        heads = ["Name", "OpSys", "Arch", "LoadAv", "RemoteUser", "ClientMachine"]
        widths = [name_w, 10, 8, 6, 20, 16]
        aligns = "<<<><<"
    else:
        heads = ["Name", "OpSys", "Arch", "State", "Activity", "LoadAv", "Mem", "ActvtyTime"]
        widths = [name_w, 10, 8, 5, 8, 6, 6, 12]
        aligns = "<<<<<>>>"
    for i in range(len(heads)):
        if i not in (0, 1):
            widths[i] = max([widths[i]] + [len(r[i]) for r in rows])
    return heads, widths, aligns, rows


def _line(cells, widths, aligns, last_prefix=True):
    parts = []
    for i, (text, width, align) in enumerate(zip(cells, widths, aligns)):
        parts.append(text.ljust(width) if align == "<" else text.rjust(width))
    if not last_prefix:           # ActvtyTime follows Mem without a separating blank
        return " ".join(parts[:-1]) + parts[-1]
    return " ".join(parts).rstrip()


def slot_table(mode, ads, now, totals_only=False, key_min=KEY_WIDTH, long_time=False, fit=None):
    """The slot table (of -avail and -run too); ``long_time``: the last column headed
    ActivityTime after a blank, as HTCondor's wide displays, not ActvtyTime without one;
    ``fit``: see ``cropped``."""
    out = []
    if not totals_only:
        heads, widths, aligns, rows = _columns(mode, ads, now, fit)
        joined = mode == "run" or long_time
        head = list(heads)
        head_aligns = "<" * len(heads)
        if mode != "run" and long_time:
            head[-1] = "ActivityTime"
        elif mode != "run":                   # ActvtyTime: right-aligned, no blank before it
            head[-1] = "  " + head[-1]
            head_aligns = head_aligns[:-1] + ">"
        out.append(_line(head, widths, head_aligns, joined).rstrip() + "\n\n")
        out.extend(_line(r, widths, aligns, joined) + "\n" for r in rows)
    if ads:
        out.append(("\n" if not totals_only else "")
                   + (run_summary(ads, key_min) if mode == "run" else summary(ads, key_min=key_min)))
    return "".join(out)


def _key_width(keys, least=KEY_WIDTH):
    return max([least] + [len(k) for k in keys])


def run_summary(ads, key_min=KEY_WIDTH):
    """-run's summary: per Arch/OpSys and in total the claimed slots, the sum of their
    Mips and KFlops and their mean LoadAvg. As in HTCondor, an ad that lacks one of
    them is malformed and counts 0 for it (gridtools' slots publish fixed Mips and
    KFlops, see ads.SLOT_MIPS; a facts file may take them away); one without Arch or
    OpSys is left out."""
    rows, total, malformed = {}, [0, 0, 0, 0.0], 0
    for ad in ads:
        arch, opsys = ad.eval("Arch"), ad.eval("OpSys")
        if not (isinstance(arch, str) and isinstance(opsys, str)):
            malformed += 1
            continue
        values = (_number(ad, "Mips"), _number(ad, "KFlops"), _number(ad, "LoadAvg"))
        malformed += None in values
        row = rows.setdefault(f"{arch}/{opsys}", [0, 0, 0, 0.0])
        for sums in (row, total):
            sums[0] += 1
            sums[1] += int(values[0] or 0)
            sums[2] += int(values[1] or 0)
            sums[3] += float(values[2] or 0.0)

    def numbers(row):
        machines, mips, kflops, load = row
        return "%9d  %11d  %11d   %.3f" % (machines, mips, kflops, load / machines if machines else 0.0)
    return _totals(rows, total, _RUN_HEAD, numbers, malformed, key_min)


#: the states the slot summary counts, in its column order (HTCondor's StartdNormalTotal);
#: BkIdle stays 0 (no slot of gridtools is a backfill slot)
_NORMAL_ORDER = ("Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drained", "Backfill")


def summary(ads, key_min=KEY_WIDTH, key=None, pairs=False):
    """The slot summary, HTCondor's StartdNormalTotal: per Arch/OpSys (``key(ad)`` when
    given) and in total the slots in each state; the Total column counts those in one
    of these states, an ad without State or in another state counts in none and is
    malformed. With ``pairs``, ``ads`` are (ad, state) pairs: ``state`` counted under
    the ad's key (None: the ad's own State; "": nothing, the key's line only), where a
    rolled-up state that is none of these is left out without counting as malformed."""
    rows, total, malformed = {}, [0] * (len(_NORMAL_ORDER) + 1), 0
    for item in ads:
        ad, state = item if pairs else (item, None)
        row = rows.setdefault(key(ad) if key else f"{_text(ad, 'Arch')}/{_text(ad, 'OpSys')}",
                              [0] * (len(_NORMAL_ORDER) + 1))
        if state == "":
            continue
        rolled = state is not None
        if not rolled:
            state = _text(ad, "State", "")
        if state not in _NORMAL_ORDER:
            malformed += not rolled
            continue
        for sums in (row, total):
            sums[0] += 1
            sums[1 + _NORMAL_ORDER.index(state)] += 1

    def numbers(row):
        return "%6d %5d %7d %9d %7d %10d %6d %8d %6d" % (tuple(row) + (0,))
    return _totals(rows, total, _TOTAL_HEAD, numbers, malformed, key_min)


def _totals(rows, total, header, numbers, malformed=0, key_min=KEY_WIDTH):
    """HTCondor's TrackTotals: a header, a line per key (Arch/OpSys, or Activity), then
    the total (``numbers(row)``: a line's figures), and the count of malformed ads; the
    key column as wide as the longest key, at least ``key_min`` (KEY_WIDTH; WIDE_KEY
    for a wide display, where HTCondor fits it to the keys)."""
    key_w = _key_width(rows, key_min)
    out = [" " * key_w + header + "\n", "\n"]
    out += [key.rjust(key_w) + numbers(row) + "\n" for key, row in sorted(rows.items())]
    out += ["\n" if rows else "", "Total".rjust(key_w) + numbers(total) + "\n"]
    if malformed:
        out.append(f"\n{' ' * key_w}(Omitted {malformed} malformed ads in computed attribute totals)\n\n")
    return "".join(out)


# ---------------------------------------------------------------- from the job queue

def domain():
    """The domain of the submitters' names (the caller's: UID_DOMAIN, else this machine's)."""
    return identity().domain


#: the version a master ad gives (as the job ads' CondorVersion)
CONDOR_VERSION = VERSION


def master_ads(snap, now):
    """A DaemonMaster ad for every machine of the pool: each execution host, and this
    one, where the cell's daemon runs (seed 002: condor_status -master)."""
    machines = {}
    for values, _exprs in snap.get("slots") or []:
        name = values.get("Machine")
        if isinstance(name, str) and name not in machines:
            machines[name] = (values.get("TotalCpus"), values.get("TotalMemory"))
    machines.setdefault(cell.hostname(), (None, None))
    started = snap.get("started")
    ads = []
    for name in sorted(machines):
        cpus, memory = machines[name]
        attrs = {"MyType": "DaemonMaster", "Name": name, "Machine": name,
                 "CondorVersion": CONDOR_VERSION, "CurrentTime": int(now)}
        if type(cpus) is int:
            attrs["DetectedCpus"] = cpus
        if type(memory) is int:
            attrs["DetectedMemory"] = memory
        if type(started) in (int, float):
            attrs["DaemonStartTime"] = int(started)
        ads.append(ClassAd(attrs))
    return ads


def metric_units(size):
    """HTCondor's metric_units: ``size`` bytes in the largest unit of 1024 under which
    it stays above 1, with one decimal (``23.5 GB``)."""
    value, power = float(size), 0
    while value > 1024.0 and power < 4:
        value, power = value / 1024.0, power + 1
    return f"{value:.1f} " + ("B ", "KB", "MB", "GB", "TB")[power]


def _readable_mb(megabytes):
    """HTCondor's READABLE_MB of a size in megabytes."""
    return metric_units(float(megabytes) * 1024 * 1024)


def master_table(ads, now):
    """condor_status -master: Name, Version, Cpus, Memory, Uptime (HTCondor's columns)."""
    name_w = max([4] + [len(_text(ad, "Name")) for ad in ads])
    out = [f"{'Name'.ljust(name_w)} {'Version':<14} Cpus {'  Memory':>10} {'   Uptime':>13}".rstrip()
           + "\n\n"]
    for ad in ads:
        version = _text(ad, "CondorVersion", "")
        version = version.split()[1] if version.startswith("$CondorVersion:") and \
            len(version.split()) > 1 else "??"
        cpus, memory, start = (_number(ad, a) for a in ("DetectedCpus", "DetectedMemory",
                                                        "DaemonStartTime"))
        line = (f"{_text(ad, 'Name').ljust(name_w)} {version:<14} "
                + (f"{int(cpus):4d}" if cpus is not None else "  ??")
                + f" {(_readable_mb(memory) if memory is not None else '??'):>10}"
                + f" {(elapsed(now - start) if start is not None else ''):>13}")
        out.append(line.rstrip() + "\n")
    return "".join(out)


def table(mode, ads, now, totals_only=False, wide=False, long_time=False, fit=None):
    """The table of a query mode; nothing at all when no ad matches (as HTCondor,
    which prints headings and totals only when there are ads). ``wide``: a wide
    display (the summary's key column fits its keys); ``long_time``: the slot table's
    last column is HTCondor's ActivityTime of displays 100 columns wide or wider;
    ``fit``: the Name column fitted to the display (``cropped``; of -submitters and
    -schedd, Name and Machine: ``fitted_pair``)."""
    if not ads:
        return ""
    key_min = WIDE_KEY if wide else KEY_WIDTH
    if mode in ("submitters", "schedd"):
        from gridtools.cli.condor import submitters
        if mode == "submitters":
            return submitters.submitter_table(ads, totals_only, fit)
        return submitters.schedd_table(ads, totals_only, key_min, fit)
    if mode == "master":
        return "" if totals_only else master_table(ads, now)
    return slot_table(mode, ads, now, totals_only, key_min, long_time, fit)


# ---------------------------------------------------------------- -state and -server

def format_time(seconds):
    """HTCondor's format_time: ``%3d+%02d:%02d:%02d`` (days+hh:mm:ss)."""
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    return "%3d+%02d:%02d:%02d" % (days, rest // 3600, rest % 3600 // 60, rest % 60)


def _heard(ad, now):
    """When the collector last heard from a slot (LastHeardFrom, else now)."""
    heard = _number(ad, "LastHeardFrom")
    return heard if heard is not None else now


def _ago(ad, attr, now):
    when = _number(ad, attr)
    return None if when is None else format_time(_heard(ad, now) - when)


def _int_text(ad, attr, default="??"):
    value = _number(ad, attr)
    return default if value is None else "%d" % value


def _cells(columns, ad):
    return [getter(ad) for _h, _w, _a, _t, getter in columns]


def _print_mask(columns, ads, fit=None, fixed=0):
    """Rows of a fixed print mask: (heading, width, alignment, kind, getter) per column;
    kind "auto" widens the column to its longest value (a value never shorter than the
    heading), "fit" widens it so too (the Name column, then fitted to the display:
    ``cropped(width, fixed, fit)``, a longer value cut), "trunc" cuts a value to the width,
    "fixed" lets a longer value overflow (as printf's %5s)."""
    rows = [_cells(columns, ad) for ad in ads]
    widths = []
    for i, (head, width, _align, kind, _g) in enumerate(columns):
        longest = max((len(r[i]) for r in rows), default=0)
        if kind == "auto":
            width = max(width, len(head), longest)
        elif kind == "fit":
            width = cropped(max(width, len(head), longest), fixed, fit)
        widths.append(width)

    def line(cells):
        parts = []
        for text, width, (_h, _w, align, kind, _g) in zip(cells, widths, columns):
            if kind in ("trunc", "fit"):
                text = text[:width]
            parts.append(text.ljust(width) if align == "<" else text.rjust(width))
        return " ".join(parts).rstrip() + "\n"
    return [line([c[0] for c in columns]), "\n"] + [line(r) for r in rows]


def _load_text(ad):
    """The LoadAv column: the slot's CondorLoadAvg (the load of its job, 0 for an idle
    slot), as HTCondor's slot tables show it; -run's summary averages LoadAvg."""
    value = _number(ad, "CondorLoadAvg")
    return "??" if value is None else "%.3f" % value


def _state_columns(now):
    def idle(ad):
        value = _number(ad, "KeyboardIdle")
        return "??" if value is None else format_time(value)
    return (("Name", NAME_WIDTH, "<", "fit", lambda ad: _text(ad, "Name")),
            ("Cpu", 0, "<", "auto", lambda ad: _int_text(ad, "Cpus")),
            (" Mem", 5, ">", "fixed", lambda ad: _int_text(ad, "Memory")),
            ("LoadAv", 6, ">", "trunc", _load_text),
            ("  KbdIdle", 12, ">", "trunc", idle),
            ("State", 7, "<", "fixed", lambda ad: _text(ad, "State")),
            ("  StateTime", 12, ">", "trunc", lambda ad: _ago(ad, "EnteredCurrentState", now) or "??"),
            ("Activ", 0, "<", "auto", lambda ad: _text(ad, "Activity")),
            ("  ActvtyTime", 12, ">", "trunc", lambda ad: _ago(ad, "EnteredCurrentActivity", now) or "-"))


def _server_columns():
    return (("Name", NAME_WIDTH, "<", "fit", lambda ad: _text(ad, "Name")),
            ("OpSys", 10, "<", "fixed", lambda ad: _text(ad, "OpSys")),
            ("Arch", 8, "<", "fixed", lambda ad: _text(ad, "Arch")),
            ("LoadAv", 6, ">", "trunc", _load_text),
            ("Memory", 8, ">", "fixed", lambda ad: _int_text(ad, "Memory")),
            ("Disk", 9, ">", "fixed", lambda ad: _int_text(ad, "Disk")),
            ("Mips", 7, ">", "fixed", lambda ad: _int_text(ad, "Mips")),
            ("KFlops", 9, ">", "fixed", lambda ad: _int_text(ad, "KFlops")))


#: -state's summary: the slot states in its column order (HTCondor's StartdStateTotal)
_STATE_ORDER = ("Owner", "Unclaimed", "Claimed", "Preempting", "Matched", "Drained")


def state_summary(ads, pairs=False, key_min=KEY_WIDTH):
    """-state's summary, HTCondor's StartdStateTotal: per Activity (not Arch/OpSys) and
    in total the slots in each state (Owner, Unclaimed, Claimed, Preempting, Matched,
    Drain; Backfill and BkIdle stay 0). As HTCondor 24 and later print it, the Total
    column is 0 (its state totals never count the slots). An ad without Activity, or
    whose State is none of these, is malformed. With ``pairs``, ``ads`` are (ad, state)
    pairs: a state counted under the ad's Activity (None: the ad's own State) where a
    rolled-up state that is none of these is left out without counting as malformed."""
    rows, total, malformed = {}, [0] * 7, 0
    for item in ads:
        ad, state = item if pairs else (item, None)
        activity = _text(ad, "Activity", "")
        if not activity:
            malformed += 1
            continue
        row = rows.setdefault(activity, [0] * 7)
        rolled = state is not None
        if not rolled:
            state = _text(ad, "State", "")
        if state not in _STATE_ORDER:
            if rolled:
                continue
            malformed += 1
            continue
        for sums in (row, total):
            sums[1 + _STATE_ORDER.index(state)] += 1
    head = "%6.6s %5.5s %9.9s %7.7s %10.10s %7.7s %6.6s %8.8s %6.6s" % (
        "Total", "Owner", "Unclaimed", "Claimed", "Preempting", "Matched", "Drain", "Backfill", "BkIdle")
    return _totals(rows, total, head, lambda r: "%6d %5d %9d %7d %10d %7d %6d %8d %6d" % (tuple(r) + (0, 0)),
                   malformed, key_min)


def server_summary(ads, key=None, key_min=KEY_WIDTH):
    """-server's summary: slots, those Claimed or Unclaimed (Avail) and the sums of
    Memory, Disk, Mips and KFlops, per Arch/OpSys (``key(ad)`` when given) and in total
    (an ad lacking one of them counts 0 for it and as malformed; one without State,
    Arch or OpSys is left out and malformed)."""
    rows, total, malformed = {}, [0] * 6, 0
    for ad in ads:
        arch, opsys, state = ad.eval("Arch"), ad.eval("OpSys"), _text(ad, "State", "")
        if not (isinstance(arch, str) and isinstance(opsys, str)):
            malformed += 1
            continue
        row = rows.setdefault(key(ad) if key else f"{arch}/{opsys}", [0] * 6)
        if not state:
            malformed += 1
            continue
        values = [_number(ad, a) for a in ("Memory", "Disk", "Mips", "KFlops")]
        malformed += None in values
        for sums in (row, total):
            sums[0] += 1
            sums[1] += state in ("Claimed", "Unclaimed")
            for i, value in enumerate(values):
                sums[2 + i] += int(value or 0)
    head = "%9.9s %5.5s %7.7s %11.11s %11.11s %11.11s" % ("Slots", "Avail", "Memory", "Disk", "MIPS", "KFLOPS")
    return _totals(rows, total, head, lambda r: "%9d %5d %11d %11d %11d %11d" % tuple(r), malformed, key_min)


def state_table(ads, now, totals_only=False, key_min=KEY_WIDTH, fit=None):
    """condor_status -state: Name Cpu Mem LoadAv KbdIdle State StateTime Activ ActvtyTime."""
    out = [] if totals_only else \
        _print_mask(_state_columns(now), ads, fit, FIXED_AFTER_NAME["state"]) + ["\n"]
    return "".join(out) + state_summary(ads, key_min=key_min)


def server_table(ads, totals_only=False, key_min=KEY_WIDTH, fit=None):
    """condor_status -server: Name OpSys Arch LoadAv Memory Disk Mips KFlops."""
    out = [] if totals_only else \
        _print_mask(_server_columns(), ads, fit, FIXED_AFTER_NAME["server"]) + ["\n"]
    return "".join(out) + server_summary(ads, key_min=key_min)
