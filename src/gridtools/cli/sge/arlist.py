"""Advance reservations as the query commands see them (qrstat, qrdel, qsub -ar).

The reservations are read from their store (``spool/ars``), which everyone
may read; the state letter is worked out for the moment of the query:
``w`` waiting for its start, ``r`` in its window, ``x`` past its end (until
the daemon removes it), ``E`` in error.
"""

import fnmatch
import os
import pwd


def load():
    """id -> stored mapping of every reservation."""
    from gridtools.spool import ars
    return ars.read_all()


def me():
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def letter(ar, now):
    """qrstat's state letter: in error, W (warning) while the window is ahead and E once
    it has begun, as Grid Engine tells a waiting reservation from a running one."""
    if ar.get("state") == "error":
        return "W" if now < float(ar["start"]) else "E"
    if ar.get("state") == "deleted":
        return "d"
    if now < float(ar["start"]):
        return "w"
    return "r" if now < float(ar["end"]) else "x"


def slots(ar):
    return sum(int(g[2]) for g in ar.get("granted") or ())


#: the open end of a slot range, as Grid Engine stores "2-" (RANGE_INFINITY)
RANGE_INFINITY = 9999999


def pe_range_text(ar):
    """The slot range the reservation asked for with -pe, as Grid Engine's qrstat prints
    it (range_list_print_to_string): ``2``, ``2,3`` for two neighbours, ``2-4``,
    ``2-9999999`` for an open end, ranges merged and joined by commas. A record without
    its request shows the slots granted."""
    request = ar.get("pe_request")
    if not request:
        return str(slots(ar))
    from gridtools.model import perange
    merged = []
    for low, high in perange.ranges(request):
        high = RANGE_INFINITY if high is None else high
        if merged and low <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], high)
        else:
            merged.append([low, high])
    return ",".join(str(lo) if lo == hi else f"{lo},{hi}" if lo + 1 == hi else f"{lo}-{hi}"
                    for lo, hi in merged)


def messages(ar):
    """Why a reservation is in error (qrstat -explain)."""
    return [str(m) for m in ar.get("messages") or ()]


def owned_by(ar, users):
    return any(fnmatch.fnmatchcase(str(ar["owner"]), u) for u in users)


def job_refusal(spec, now):
    """Why qsub refuses a job with ``-ar`` (Grid Engine's words), or None: as Grid Engine's
    qmaster, when the reservation does not exist, is over or deleted, or its window
    cannot hold the job's h_rt. Who may use the reservation (its ``-u`` list) is not
    checked here: a job its owner may not run there is accepted (unless the
    verification of ``-w e``, implied by ``-ar``, finds it can never run) and waits,
    the scheduler giving why (``has no permission for advance_reservation``)."""
    from gridtools.formats.sge import arwords as words
    from gridtools.spool import ars
    ar_id = int(spec["ar"])
    ar = ars.read(ar_id)
    if ar is None:
        return words.invalid_id(ar_id)
    if float(ar["end"]) <= now or ar.get("state") == "deleted":
        return words.gone(ar_id)
    seconds = words.job_runtime(spec)
    if seconds is None:
        return None
    begin = max(now, float(spec.get("start_at") or 0))
    return words.duration_problem(ar_id, seconds, float(ar["start"]), float(ar["end"]), begin)
