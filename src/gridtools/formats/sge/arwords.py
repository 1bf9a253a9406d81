"""Grid Engine's words about advance reservations, shared by qrsub, qrdel, qsub -ar and
the daemon, and the check of a job's run time against a reservation's window."""

#: qrsub's answer when no queue instance can hold the reservation
NO_QUEUES = "advance_reservation: no suitable queues"
#: the access list whose members may reserve besides managers
AR_USERS = "arusers"


def granted(ar_id):
    return f"Your advance reservation {ar_id} has been granted"


def not_reserver(user):
    return f'denied: "{user}" must be manager or in userset "{AR_USERS}"'


def calendar_closed(instance):
    """qrsub's note on a queue instance left out because its calendar disables or
    suspends it during the requested window."""
    return f'queue "{instance}" is calendar disabled in selected time frame'


def calendar_conflict(calendar, ar_id):
    """qconf's refusal of a calendar (a queue's calendar attribute or a changed calendar)
    that would close a reserved queue instance during a reservation's window."""
    return f'denied: changing "{calendar}" to calendar would break advance reservation {ar_id}'


def invalid_id(ar_id):
    return f"the advance reservation id {ar_id} is invalid"


def gone(ar_id):
    return f"the advance reservation {ar_id} is no longer available"


def no_permission(ar_id):
    return f'has no permission for advance_reservation "{ar_id}"'


def duration_problem(ar_id, seconds, start, end, begin):
    """Why a job of ``seconds`` (h_rt) starting no earlier than ``begin`` cannot run in
    the window [start, end) of reservation ``ar_id``, or None."""
    if seconds > end - start:
        return f"the job duration is longer than duration of the advance reservation id {ar_id}"
    if max(begin, start) + seconds > end:
        return f"the job duration exceeds the end time of the advance reservation id {ar_id}"
    return None


def job_runtime(spec):
    """A job description's h_rt in seconds, or None (absent or unreadable)."""
    from gridtools.formats import values
    text = ((spec.get("resources") or {}).get("hard") or {}).get("h_rt")
    if text is None:
        return None
    try:
        return values.parse_time(str(text))
    except Exception:  # noqa: BLE001 - a bad h_rt is refused by the submit checks
        return None
