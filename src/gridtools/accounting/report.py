"""The text qacct prints, laid out as Grid Engine 8.1.9 lays it out.

``job_block(record)`` is one ``qacct -j`` entry; ``summary_table`` is the
usage table (``Total System Usage`` or one row per group). Times are shown
in local time, as ctime(3) shows them. Returns strings; never prints.
"""

import time

from gridtools.accounting.qacct import GROUP_KEYS

RULE = "=" * 62
GIGABYTE = 1024.0 ** 3

# Description of each value of the failed field (the shepherd's exit states).
FAILED = {
    0: "", 1: "assumedly before job", 2: "on executing shepherd",
    3: "before writing config", 4: "before writing pid",
    5: "on reading config file", 6: "setting processor set",
    7: "before prolog", 8: "in prolog", 9: "before pestart",
    10: "in pestart", 11: "before job", 12: "before pestop",
    13: "in pestop", 14: "before epilog", 15: "in epilog",
    16: "releasing processor set", 17: "through signal",
    18: "shepherd returned error", 19: "before writing exit_status",
    20: "found unexpected error file", 21: "in recognizing job",
    22: "removed manually", 24: "migrating", 25: "rescheduling",
    26: "opening input/output file", 27: "searching requested shell",
    28: "changing into working directory", 29: "AFS setup",
    30: "rescheduling on application error",
    31: "accessing sgepasswd file", 32: "entry is missing in password file",
    33: "wrong password",
    34: "communicating with Grid Engine Helper Service",
    35: "before job in Grid Engine Helper Service",
    36: "checking configured daemons",
    37: "qmaster enforced h_rt, h_cpu, or h_vmem limit",
    38: "adding supplementary group", 100: "assumedly after job",
}
UNKNOWN_FAILED = "invalid execution state"

# strsignal(3) texts of the C library, by signal number.
SIGNALS = {
    1: "Hangup", 2: "Interrupt", 3: "Quit", 4: "Illegal instruction",
    5: "Trace/breakpoint trap", 6: "Aborted", 7: "Bus error",
    8: "Floating point exception", 9: "Killed", 10: "User defined signal 1",
    11: "Segmentation fault", 12: "User defined signal 2", 13: "Broken pipe",
    14: "Alarm clock", 15: "Terminated", 16: "Stack fault",
    17: "Child exited", 18: "Continued", 19: "Stopped (signal)",
    20: "Stopped", 21: "Stopped (tty input)", 22: "Stopped (tty output)",
    23: "Urgent I/O condition", 24: "CPU time limit exceeded",
    25: "File size limit exceeded", 26: "Virtual timer expired",
    27: "Profiling timer expired", 28: "Window changed", 29: "I/O possible",
    30: "Power failure", 31: "Bad system call",
}
_SIGRTMIN, _SIGRTMAX = 34, 64


def signal_text(number):
    """What strsignal(3) says about signal ``number``."""
    if number in SIGNALS:
        return SIGNALS[number]
    if _SIGRTMIN <= number <= _SIGRTMAX:
        return f"Real-time signal {number - _SIGRTMIN}"
    return f"Unknown signal {number}"


def memory(value):
    """A byte count with Grid Engine's unit letter: ``4.375K``, ``3.363M``, ``0.000``."""
    size = abs(value)
    for unit, factor in (("G", GIGABYTE), ("M", 1024.0 ** 2), ("K", 1024.0)):
        if size >= factor:
            return "%.3f%s" % (value / factor, unit)
    return "%.3f" % size


def when(seconds):
    """ctime(3) text of an epoch time in local time."""
    return time.ctime(seconds)


def _line(label, value):
    return f"{label:<13.12}{value}"


def _pad(label, value):
    return f"{label:<13.12}{value:<20}"


def _identity_lines(r):
    lines = [_pad("qname", r["qname"]), _pad("hostname", r["hostname"]),
             _pad("group", r["group"]), _pad("owner", r["owner"]),
             _pad("project", r["project"]), _pad("department", r["department"]),
             _pad("jobname", r["job_name"]), _pad("jobnumber", r["job_number"])]
    task = r["task_number"]
    lines.append(_pad("taskid", task) if task else _line("taskid", "undefined"))
    lines += [_pad("account", r["account"]), _pad("priority", r["priority"]),
              _line("qsub_time", when(r["submission_time"]))]
    for label, name in (("start_time", "start_time"), ("end_time", "end_time")):
        lines.append(_line(label, when(r[name]) if r[name] else "-/-"))
    return lines


def _outcome_lines(r):
    failed = r["failed"]
    reason = FAILED.get(failed, UNKNOWN_FAILED)
    status = r["exit_status"]
    exit_line = _pad("exit_status", status)
    if status > 127:
        exit_line += f" ({signal_text(status - 128)})"
    return [_pad("granted_pe", r["granted_pe"]), _pad("slots", r["slots"]),
            _line("failed", f"{failed:<3} {':' if failed else ''} {reason}"),
            exit_line]


def _usage_lines(r):
    lines = [_line("ru_wallclock", "%.0fs" % r["ru_wallclock"]),
             _line("ru_utime", "%.3fs" % r["ru_utime"]),
             _line("ru_stime", "%.3fs" % r["ru_stime"])]
    for name in ("ru_maxrss", "ru_ixrss", "ru_ismrss", "ru_idrss", "ru_isrss"):
        lines.append(_line(name, memory(r[name]) + "B"))
    for name in ("ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock",
                 "ru_msgsnd", "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw"):
        lines.append(_pad(name, "%d" % r[name]))
    lines += [_line("cpu", "%.3fs" % r["cpu"]),
              _line("mem", memory(r["mem"] * GIGABYTE) + "Bs"),
              _line("io", memory(r["io"] * GIGABYTE) + "B"),
              _line("iow", "%.3fs" % r["iow"]),
              _line("maxvmem", memory(r["maxvmem"]) + "B")]
    return lines


def _reservation_lines(r):
    ar, submitted = r["arid"], r["ar_submission_time"]
    return [_pad("arid", ar) if ar else _line("arid", "undefined"),
            _line("ar_sub_time", when(submitted) if submitted else "undefined"),
            _line("category", r["category"])]


def job_block(r):
    """The ``qacct -j`` entry of one record, lines ending in newlines."""
    lines = ([RULE] + _identity_lines(r) + _outcome_lines(r)
             + _usage_lines(r) + _reservation_lines(r))
    return "\n".join(lines) + "\n"


# -- summary tables ------------------------------------------------------------

TITLES = {
    "host": "HOST", "queue": "CLUSTER QUEUE", "group": "GROUP",
    "owner": "OWNER", "project": "PROJECT", "department": "DEPARTMENT",
    "pe": "PE", "slots": "SLOTS", "ar": "AR", "account": "ACCOUNT",
}
NUMERIC = ("slots", "ar")
USAGE_TITLE = "%13.13s %13.13s %13.13s %13.13s %18.18s %18.18s %18.18s" % (
    "WALLCLOCK", "UTIME", "STIME", "CPU", "MEMORY", "IO", "IOW")
USAGE_ROW = "%13.0f %13.3f %13.3f %13.3f %18.3f %18.3f %18.3f"
TOTAL_TITLE = "Total System Usage"


def _cell(key, value):
    return "%5d" % value if key in NUMERIC else str(value)


def _value(key, fixed, values):
    if key in fixed:
        return fixed[key]
    return values.get(key, 0 if key in NUMERIC else "")


def _widths(fixed, rows):
    """Column widths: the title (or a fixed value) plus one, grown to fit."""
    widths = {}
    for key in GROUP_KEYS:
        base = 5 if key in NUMERIC else len(TITLES[key]) + 1
        if key in fixed and key not in NUMERIC:
            base = max(base, len(str(fixed[key])) + 1)
        widths[key] = base
    for values, _ in rows:
        for key in GROUP_KEYS:
            if key in NUMERIC:
                text = _cell(key, values.get(key, 0))
            elif key in values:
                text = str(values[key])
            else:
                continue
            if widths[key] <= len(text):
                widths[key] = len(text) + 1
    return widths


def summary_table(columns, fixed, summary):
    """The usage table of a qacct summary.

    ``columns`` are the grouping keys shown, in any order; ``fixed`` maps a
    shown key to the value an option fixed it to (printed on every row);
    other shown keys take each group's value from ``summary.rows()``. Like
    Grid Engine, no row is printed when the selected wall clock time sums to
    zero.
    """
    shown = [k for k in GROUP_KEYS if k in columns]
    rows = summary.rows() if summary.group_by else []
    widths = _widths(fixed, rows)
    # Grid Engine sizes the AR title with the width of the SLOTS column.
    title_width = dict(widths, ar=widths["slots"])
    head = "".join(TITLES[k].ljust(title_width[k]) for k in shown)
    out = [] if shown else [TOTAL_TITLE]
    out.append(head + USAGE_TITLE)
    out.append("=" * (sum(title_width[k] for k in shown) + len(USAGE_TITLE)))
    if summary.total.ru_wallclock:
        if not summary.group_by:
            rows = [({}, summary.total)]
        for values, usage in rows:
            cells = "".join(_cell(k, _value(k, fixed, values)).ljust(widths[k])
                            for k in shown)
            out.append(cells + USAGE_ROW % usage.values())
    return "\n".join(out) + "\n"
