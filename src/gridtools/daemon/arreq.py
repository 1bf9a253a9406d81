"""Advance reservations in the daemon: qrsub and qrdel requests, the AR store's
working copy, jobs submitted into a reservation, and the end of reservations.

- ``ar_submit``: only managers and members of the ``arusers`` access list may
  reserve; the request is checked (names, window, resources), then
  ``sched.admit`` finds its queue instances and slots in the window given
  what runs, what other reservations hold and the last pass's job
  reservations. A granted reservation is stored (``spool.ars``) and shows
  at once in the snapshot the pass sees.
  Queue calendars are judged over the window (``sched.admit``); the
  instances they close then are named in the answer, in Grid Engine's words.
- ``calendar_conflict``: a queue or calendar change (qconf) that would make a
  calendar close a reserved queue instance within its reservation's window
  is refused, as Grid Engine refuses it.
- ``capacity_conflict``: a qconf change that would leave less than the
  reservations hold in their windows (``reserved``: a queue's slots, a
  consumable's capacity of a queue, host or the global host; a PE's slots),
  take from a reserved queue instance the PE or checkpointing environment
  it was granted with, or give a host a value that no longer meets a
  reservation's request of a complex not consumed, is refused in Grid
  Engine's words. As there, running jobs' use is not counted, and taking a
  value or a reserved host away is not refused.
- ``ar_delete``: the owner, operators and managers delete reservations by id,
  name or owner (``-u``); its jobs go with it.
- ``expire``: a reservation whose end has come is removed with its jobs:
  pending ones are deleted, running ones ended (the pass's ``Kill``
  decisions do the same for tasks it finds outside their window).
- ``accept_job``: a job submitted with ``-ar`` whose reservation does not
  exist (or is over), or whose ``h_rt`` does not fit the window is deleted at
  intake (qsub refuses it first, with the same words). A job whose owner is
  not among the reservation's users is accepted, as Grid Engine accepts it:
  it waits, the scheduler telling why (``sched.ar.job_problem``).
"""

import math
import time

from gridtools.daemon import apply, auth, jobmail
from gridtools.daemon.state import user_name
from gridtools.errors import GridError
from gridtools.formats import jobcheck
from gridtools.formats.sge import arwords as words
from gridtools.formats.sge.names import FORBIDDEN_NAME_CHARS
from gridtools.model import shared
from gridtools.model.job import TaskState
from gridtools.sched import ar as sched_ar
from gridtools.sched import inputs, urgency
from gridtools.sched.snapshot import ARState, QState
from gridtools.spool import ars as store
from gridtools.spool import ids
from gridtools.spool import jobs as jobstore
from gridtools.spool.ids import MAX_ID

AR_USERS = words.AR_USERS
NO_QUEUES = words.NO_QUEUES


class Refused(Exception):
    """A reservation request that cannot be applied: its message goes to the client."""


class BadWindow(Refused):
    """A window Grid Engine's ar_validate refuses; its sentence goes to stdout, as the
    qmaster's answer does."""


def table(state):
    """id -> stored mapping of every reservation (loaded from the spool once)."""
    if getattr(state, "ars", None) is None:
        state.ars = store.read_all()
    return state.ars


def records(state, complexes):
    """id -> sched AdvanceReservation of every stored reservation, for the snapshot."""
    found = {}
    for ar_id, data in table(state).items():
        try:
            found[ar_id] = sched_ar.advance_reservation(data, complexes)
        except (KeyError, TypeError, ValueError):
            state.log(f"W|advance reservation {ar_id}: unreadable record ignored")
    return found


# ---------------------------------------------------------------- submit

def _strings(value, what, blanks=False):
    """A list of non-empty one-line texts (with ``blanks`` false, words), as qrsub writes
    them: a request written by hand may hold anything, and each entry is shown on a
    line of its own by qrstat to every user."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise Refused(f"error: invalid {what}")
    try:
        for entry in value:
            (jobcheck.line if blanks else jobcheck.word)(entry, what)
    except jobcheck.Invalid:
        raise Refused(f"error: invalid {what}") from None
    return list(value)


def _mail_options(value):
    """qrsub -m: the letters b, e, a (n is none at all)."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or set(value) - set("bea"):
        raise Refused("error: invalid mail options")
    return value


def _ckpt(value):
    if value in (None, ""):
        return ""
    try:
        return jobcheck.object_name(value, "ckpt")
    except jobcheck.Invalid:
        raise Refused("error: invalid checkpointing environment name") from None


def _name(value):
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or any(c in FORBIDDEN_NAME_CHARS for c in value) or value[0].isdigit():
        raise Refused(f'error: invalid advance reservation name "{value}"')
    return value


def _account_string(value):
    text = "sge" if value in (None, "") else value
    if not isinstance(text, str) or not text.isprintable() or ":" in text:
        raise Refused("error: invalid account string")
    return text


def _window(body, now):
    """(start, end) in whole seconds, as Grid Engine keeps them: a request without a
    start begins now, and with a duration (qrsub -d without -a) ends that long after.
    As Grid Engine's ar_validate, a start after the end is refused first ("start time
    is later than end time", which an end in the past without -a gives), then a start
    before now ("start time is in the past"; -a has minute resolution, so a start
    earlier in the current minute is refused too)."""
    now = math.floor(now)
    duration = body.get("duration")
    if body.get("end") is None and (duration is None or (type(duration) is int and duration == 0)):
        # (Grid Engine keeps a duration of 0 as none given)
        raise BadWindow('missing value for "end time or duration" in advance reservation request')
    try:
        start = float(body.get("start") or now)
        if body.get("start") is None and body.get("duration") is not None:
            end = start + _duration(body["duration"])
        else:
            end = float(body["end"])
    except (KeyError, TypeError, ValueError):
        raise Refused("error: the reservation needs an end time (-e) or a duration (-d)") from None
    if not (math.isfinite(start) and math.isfinite(end)):
        raise Refused("error: the end time of the advance reservation must be after its start time")
    if start > end:
        raise BadWindow("start time is later than end time")
    if end == start:
        raise Refused("error: the end time of the advance reservation must be after its start time")
    if start < now:
        raise BadWindow("start time is in the past")
    if end > jobcheck.MAX_MOMENT:
        raise Refused("error: the end time of the advance reservation is later than the year 9999")
    return start, end


def _duration(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise Refused("error: invalid duration of the advance reservation")
    return value


def _resources(value, complexes):
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        raise Refused("error: invalid resource request")
    try:
        for name, text in value.items():
            jobcheck.request_value(text, name)
    except jobcheck.Invalid:
        raise Refused("error: invalid resource request") from None
    for name in value:
        if name not in complexes:
            raise Refused(f'error: unknown resource "{name}"')
    return dict(value)


def _pe_request(value):
    if value is None:
        return None
    try:
        req = inputs.pe_request(value)
    except (TypeError, ValueError, IndexError):
        raise Refused("error: invalid parallel environment request") from None
    if req is None or not req.pattern or not all(lo >= 1 for lo, _hi in req.ranges):
        raise Refused("error: invalid parallel environment request")
    return value


def _record(body, owner, group, now, complexes):
    """The reservation mapping to store, from a client's (untrusted) request body."""
    ar_id = body.get("id")
    lowest = 0 if body.get("verify") == "v" else 1
    if not isinstance(ar_id, int) or not lowest <= ar_id <= MAX_ID:
        raise Refused("error: invalid advance reservation id")
    start, end = _window(body, now)
    return {
        "id": ar_id, "name": _name(body.get("name")), "owner": owner, "group": group,
        "account": _account_string(body.get("account")), "submit_time": now,
        "start": start, "end": end, "resources": _resources(body.get("resources"), complexes),
        "queues": _strings(body.get("queues"), "queue list"),
        "masterq": _strings(body.get("masterq"), "queue list"),
        "pe_request": _pe_request(body.get("pe")), "ckpt": _ckpt(body.get("ckpt")),
        "interactive": bool(body.get("now")), "users": _strings(body.get("users"), "user list"),
        "mail_options": _mail_options(body.get("mail_options")),
        "mail_list": _strings(body.get("mail_list"), "mail list", blanks=True),
        "hard_error": bool(body.get("hard_error")), "state": ARState.GRANTED.value,
        "granted": [], "pe": "",
    }


def _request(state, rec):
    """The sched Request of a reservation's -q, -l, -pe, -ckpt and -now."""
    spec = {"owner": rec["owner"], "group": rec["group"],
            "resources": {"hard": rec["resources"], "soft": {}},
            "queues": {"hard": rec["queues"], "soft": []}, "masterq": rec["masterq"],
            "pe": rec["pe_request"], "ckpt": rec["ckpt"], "now": rec["interactive"]}
    from gridtools.daemon import view
    return inputs.request(spec, state.config, view.config_parts(state)["complexes"])


def _admission(state, rec, now):
    from gridtools.daemon import qcontrol, view
    from gridtools.sched.admit import admit
    snap = view.build(state, now, getattr(state, "loads", None) or {})
    return admit(snap, _request(state, rec), rec["owner"], rec["start"], rec["end"],
                 reserves=state.reserves, calendars=qcontrol.calendars(state))


def may_reserve(state, user, group):
    lists = inputs.userlists_of(state.config, user, group)
    return auth.is_manager(state, user) or AR_USERS in lists


def submit(state, dispatcher, req, now):
    """qrsub: grant, verify (-w v) or refuse a reservation; answers like Grid Engine."""
    from gridtools.daemon.intake import _account, _group_name
    owner, gid, _groups = _account(req.uid)
    group = _group_name(gid)
    if not may_reserve(state, owner, group):
        _give_back(req)
        return 1, words.not_reserver(owner) + "\n", ""
    try:
        rec = _record(req.body, owner, group, now, state_complexes(state))
    except BadWindow as exc:
        _give_back(req)
        return 1, f"{exc}\n", ""
    except Refused as exc:
        _give_back(req)
        return 1, "", f"{exc}\n"
    if rec["pe_request"] and urgency.ambiguous(rec["pe_request"], state.config.objects["pe"]):
        _give_back(req)
        return 1, "", urgency.AMBIGUOUS.format("advance_reservation") + "\n"
    verify = req.body.get("verify") == "v"
    most = _most_reservations(state)
    if not verify and most and len(table(state)) >= most:
        _give_back(req)
        return 1, "", f"rejected: only {most} advance reservations are allowed per cluster\n"
    if not verify and rec["id"] in table(state):
        return 1, "", f"error: advance reservation {rec['id']} already exists\n"
    if not verify and not ids.claimed_by("ar", rec["id"], req.uid):
        return 1, "", "error: invalid advance reservation id\n"
    found = _admission(state, rec, now)
    if not verify:
        _take(rec["id"])
    notes = "".join(words.calendar_closed(name) + "\n" for name in found.closed)
    if not found.ok:
        return 1, notes + (_reason_lines(found, owner) if verify else "") + NO_QUEUES + "\n", ""
    if verify:
        return 0, notes + "verification: found suitable queue(s)\n", ""
    rec["granted"] = [list(g) for g in found.granted]
    rec["pe"] = found.pe
    store.write(rec)
    table(state)[rec["id"]] = rec
    state.need_schedule = True
    state.need_publish = True
    state.log(f"I|advance reservation {rec['id']} granted to {owner}")
    return 0, notes + words.granted(rec["id"]) + "\n", ""


def _most_reservations(state):
    """The global configuration's max_advance_reservations (0: no limit)."""
    conf = state.config.objects["conf"].get("global") or {}
    try:
        return max(0, int(str(conf.get("max_advance_reservations", 0)).strip() or 0))
    except ValueError:
        return 0


def _give_back(req):
    """A request refused before it was checked (not a reserver, bad input) uses up no id,
    as in Grid Engine: the claim of its id, when the caller made it, is removed."""
    ar_id = req.body.get("id")
    if type(ar_id) is int and 1 <= ar_id <= MAX_ID and ids.claimed_by("ar", ar_id, req.uid):
        ids.release("ar", ar_id)


def _take(ar_id):
    """A request checked against the cell uses up its id, granted or not (Grid Engine
    numbers a reservation before it looks for slots): the clients' hint moves to it and
    its claim is removed (kept when the hint cannot be written, so that the id is not
    handed out again)."""
    last = ids.peek("ar")
    if ar_id > last or last - ar_id > ids.WINDOW:
        try:
            ids.record("ar", ar_id)
        except (OSError, GridError):
            return
    ids.release("ar", ar_id)


def state_complexes(state):
    from gridtools.daemon import view
    return view.config_parts(state)["complexes"]


def _reason_lines(found, owner):
    from gridtools.formats.sge import reasons as render
    return "".join(f"{render.render(r, owner)}\n" for r in found.reasons)


# ---------------------------------------------------------------- delete

def _targets(state, body, requester):
    """(reservation ids, names that matched nothing) of a qrdel request."""
    from gridtools.formats.sge.names import reservations_named, wildcard_match
    ids, missing = [], []
    for item in _strings(body.get("targets"), "reservation list"):
        found = reservations_named(item, table(state))
        ids.extend(found)
        if not found:
            missing.append(item)
    users = body.get("users")
    if users is not None:
        users = _strings(users, "user list")
        ids.extend(i for i, d in sorted(table(state).items())
                   if any(wildcard_match(u, str(d["owner"])) for u in users))
    return sorted(set(ids)), missing


def delete(state, dispatcher, req, now):
    """qrdel: remove reservations the requester owns (or any, for operators)."""
    requester = user_name(req.uid)
    try:
        ids, missing = _targets(state, req.body, requester)
    except Refused as exc:
        return 1, "", f"{exc}\n"
    out, code = [], 0
    for ar_id in ids:
        data = table(state)[ar_id]
        if data["owner"] != requester and not auth.is_operator(state, requester):
            out.append(f"{requester} - you do not have the necessary privileges to delete "
                       f'the advance_reservation "{ar_id}"')
            code = 1
            continue
        remove(state, dispatcher, ar_id, now, force=bool(req.body.get("force")), deleted=True)
        out.append(f"{requester} has deleted advance_reservation {ar_id}")
    for name in missing:
        out.append(f'denied: advance_reservation "{name}" does not exist')
        code = 1
    users = req.body.get("users")
    if not ids and not missing and users:
        out.append(no_reservations(users))
        code = 1
    return code, "".join(line + "\n" for line in out), ""


def no_reservations(users):
    """Grid Engine's answer to a qrdel -u list that matches no reservation: the users as
    given (``*`` too), at most 5 of them (then ``...``), joined by commas."""
    shown = ",".join(str(u) for u in users[:5]) + (",..." if len(users) > 5 else "")
    return f"There is no advance_reservation registered for the following users: {shown}"


def remove(state, dispatcher, ar_id, now, force=False, deleted=False):
    """Take a reservation out of the cell (``deleted``: by qrdel, else at its end); its
    pending jobs are deleted, its running tasks ended (at once with ``force``)."""
    data = table(state).pop(ar_id, None)
    if data is not None:
        jobmail.reservation(state, data, "deleted" if deleted else "end", now if deleted else float(data["end"]))
    store.remove(ar_id)
    for job in list(state.jobs.values()):
        if int(job.spec.get("ar") or 0) != ar_id or job.is_finished():
            continue
        for number in list(job.made()):
            if job.state_of(number) in (TaskState.PENDING, TaskState.ERROR, TaskState.RUNNING):
                apply.delete_task(state, dispatcher, job, number, now, force)
        if len(job.made()) < len(job.numbers()):
            apply.delete_untouched(state, job, now)     # (the procs of a cluster not made yet go too)
    state.need_schedule = True
    state.need_publish = True
    if data is not None:
        state.log(f"I|advance reservation {ar_id} removed")


def expire(state, dispatcher, now):
    """Remove the reservations whose end has come; True when one was removed. A
    reservation whose start has come is noted as begun (the mail of ``qrsub -m b``)."""
    for data in table(state).values():
        if not data.get("begun") and float(data.get("start") or 0) <= now:
            data["begun"] = True
            store.write(data)
            jobmail.reservation(state, data, "start", float(data["start"]))
    over = [i for i, d in table(state).items() if float(d.get("end") or 0) <= now]
    for ar_id in over:
        remove(state, dispatcher, ar_id, now)
    return bool(over)


def next_event(state, now):
    """The next start or end of a reservation after ``now`` (None when none)."""
    times = [t for d in table(state).values() for t in (float(d["start"]), float(d["end"])) if t > now]
    return min(times) if times else None


def kill(state, dispatcher, kills, now):
    """Carry out the pass's Kill decisions: end tasks whose reservation is over or gone."""
    for item in kills:
        job = state.jobs.get(item.job_id)
        if job is None or job.state_of(item.task) is not TaskState.RUNNING:
            continue
        if not job.task(item.task).deleting:
            apply.delete_task(state, dispatcher, job, item.task, now, False)
            state.log(f"I|job {job.id}.{item.task} ended: advance reservation {item.ar} is over")


# ---------------------------------------------------------------- calendars

def calendar_conflict(state, kind, name, obj):
    """Grid Engine's refusal when storing ``obj``, a queue or a calendar named ``name``,
    would leave a reserved queue instance disabled or suspended by its calendar during
    its reservation's window; None when it may be stored."""
    if kind not in ("queue", "calendar") or not table(state):
        return None
    from gridtools.formats.sge import calendar as calendar_format
    from gridtools.sched.calendar import open_during
    conf = state.config
    groups = inputs.hostgroups(conf)
    for ar_id, data in sorted(table(state).items()):
        for q, h, _n in data.get("granted") or ():
            queue = obj if kind == "queue" else conf.objects["queue"].get(q)
            if queue is None or (kind == "queue" and q != name):
                continue
            cal_name = str(inputs.qvalue(queue, "calendar", h, groups) or "")
            if kind == "calendar" and cal_name != name:
                continue
            cal = obj if kind == "calendar" else conf.objects["calendar"].get(cal_name)
            if cal is None:
                continue
            try:
                year, week = calendar_format.entries(cal)
            except GridError:
                continue
            if not open_during(year, week, float(data["start"]), float(data["end"])):
                return words.calendar_conflict(cal_name, ar_id)
    return None


# ---------------------------------------------------------------- capacity

def _live(state, now):
    """(id, data) of the reservations that still hold something: granted or in error, and
    not over."""
    for ar_id, data in sorted(table(state).items()):
        if data.get("state") != ARState.DELETED.value and float(data["end"]) > now:
            yield ar_id, data


def reserved(state, now=None):
    """What the reservations not yet over hold, as Grid Engine books them:
    ``{(level, name): [(start, end, amount), ...]}`` with ``level`` one of the
    capacity levels of ``sched.resources`` (the global host, a host, a queue
    instance) and ``name`` ``slots`` or a consumable a reservation asked for
    (per slot, or once on its master instance for a JOB consumable)."""
    from gridtools.sched.resources import levels, per_grant
    now = time.time() if now is None else now
    complexes = state_complexes(state)
    held = {}
    for _ar_id, data in _live(state, now):
        try:
            ar = sched_ar.advance_reservation(data, complexes)
        except (KeyError, TypeError, ValueError):
            continue
        for i, (q, h, n) in enumerate(ar.granted):
            wanted = [("slots", n)]
            wanted += [(name, per_grant(complexes[name], amount, n, i == 0)) for name, amount in ar.amounts]
            for name, amount in wanted:
                if not amount:
                    continue
                for level in levels(q, h):
                    held.setdefault((level, name), []).append((ar.start, ar.end, amount))
    return held


def peak(spans):
    """The most that ``(start, end, amount)`` spans hold at one moment (a window holds
    from its start up to, not including, its end)."""
    moments = sorted([(end, 0, -amount) for start, end, amount in spans]
                     + [(start, 1, amount) for start, end, amount in spans])
    most = current = 0
    for _at, _kind, change in moments:
        current += change
        most = max(most, current)
    return most


def _values(mapping, complexes):
    """complex name -> number of a complex_values mapping (shortcuts named by their
    complex; what is no number left out)."""
    found = {}
    for name, text in (mapping or {}).items():
        cx = complexes.get(str(name))
        value = inputs.value_or_none(cx, text) if cx is not None else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found[cx.name] = value
    return found


def _capacity_refusal(held, level, old, new):
    """Grid Engine's refusal when the changed values ``new`` (complex name -> number;
    ``old`` as they were) of ``level`` fall below what reservations hold there."""
    for name in sorted(new):
        if name == "slots" and level[0] == "queue":
            continue
        value = new[name]
        if old.get(name) == value:
            continue
        most = peak(held.get((level, name), ()))
        if most and value < most - 1e-9:
            return f'denied: changing "{name}" in complex_values would break advance reservation'
    return None


def _queue_refusal(state, name, obj, held):
    conf = state.config
    old = conf.objects["queue"].get(name) or {}
    groups = inputs.hostgroups(conf)
    complexes = state_complexes(state)
    from gridtools.sched.resources import queue_level
    hosts = []
    for ar_id, data in _live(state, time.time()):
        for q, h, _n in data.get("granted") or ():
            if q != name:
                continue
            for attr, used in (("pe_list", data.get("pe")), ("ckpt_list", data.get("ckpt"))):
                if used and used not in (inputs.qvalue(obj, attr, h, groups) or ()):
                    return f'denied: removing "{used}" from {attr} would break advance reservation {ar_id}'
            if h not in hosts:
                hosts.append(h)
    for h in hosts:
        level = queue_level(name, h)
        slots, before = (inputs.qvalue(queue, "slots", h, groups) for queue in (obj, old))
        most = peak(held.get((level, "slots"), ()))
        if slots != before and int(slots or 0) < most:
            return f"denied: {int(most)} slots are already reserved in {name}@{h} by an advance reservation"
        why = _capacity_refusal(held, level,
                                _values(inputs.qvalue(old, "complex_values", h, groups), complexes),
                                _values(inputs.qvalue(obj, "complex_values", h, groups), complexes))
        if why:
            return why
    return None


def _fixed_refusal(state, host, obj, complexes):
    """Grid Engine's refusal when the complex_values of execution host ``host`` in
    ``obj`` no longer meet a request a reservation holding slots there made of a
    complex that is not consumed (``-l color=blue``), compared as the scheduler
    compares; a value the host no longer has is not judged, nor is the global host."""
    from gridtools.model.resources import Consumable, satisfies
    offered = {n: v for n, v, _t in inputs.parsed_pairs(obj.get("complex_values"), complexes)}
    for _ar_id, data in _live(state, time.time()):
        if not any(h == host for _q, h, _n in data.get("granted") or ()):
            continue
        for asked, text in (data.get("resources") or {}).items():
            cx = complexes.get(str(asked))
            if cx is None or cx.consumable is not Consumable.NO or cx.name not in offered:
                continue
            wanted = inputs.value_or_none(cx, text)
            if wanted is not None and not satisfies(cx, wanted, offered[cx.name]):
                return f'denied: changing "{cx.name}" in complex_values would break advance reservation'
    return None


def pe_slots_reserved(state, pe_name):
    """The slots the reservations not yet over hold in parallel environment ``pe_name``."""
    return sum(int(n) for _ar_id, data in _live(state, time.time()) if data.get("pe") == pe_name
               for _q, _h, n in data.get("granted") or ())


def capacity_conflict(state, kind, name, obj):
    """Grid Engine's refusal when storing ``obj`` (a queue, an execution host or the
    global host, a parallel environment named ``name``) would leave less than granted
    advance reservations hold there in their windows: a queue's slots, a consumable's
    capacity in complex_values, a PE's slots; or would take from a reserved queue
    instance the parallel environment or checkpointing environment its reservation
    was granted with; or would give an execution host a value that no longer meets
    what a reservation with slots there asked for. None when it may be stored."""
    if kind not in ("queue", "exechost", "pe") or not table(state):
        return None
    if kind == "pe":
        most = pe_slots_reserved(state, name)
        try:
            slots = int(obj.get("slots") or 0)
        except (TypeError, ValueError):
            return None
        if slots < most:
            return f"denied: lowering slots amount below {most} would break advance reservations"
        return None
    held = reserved(state)
    if kind == "queue":
        return _queue_refusal(state, name, obj, held)
    from gridtools.sched.resources import GLOBAL, host_level
    complexes = state_complexes(state)
    if name != "global":
        why = _fixed_refusal(state, name, obj, complexes)
        if why:
            return why
    old = state.config.objects["exechost"].get(name) or {}
    return _capacity_refusal(held, GLOBAL if name == "global" else host_level(name),
                             _values(old.get("complex_values"), complexes),
                             _values(obj.get("complex_values"), complexes))


def reserved_instances(state, now=None):
    """The queue instances (``queue@host``) in which reservations not yet over hold
    slots, now or later in their windows: Grid Engine keeps such an instance (orphaned)
    when its host leaves the queue."""
    now = time.time() if now is None else now
    return frozenset(f"{q}@{h}" for _ar_id, data in _live(state, now) for q, h, n in data.get("granted") or ()
                     if int(n) > 0)


def reserved_queues(state, host=None):
    """The cluster queues (sorted) holding reservations not yet over (with ``host``: on
    that host)."""
    return sorted({q for _ar_id, data in _live(state, time.time()) for q, h, _n in data.get("granted") or ()
                   if host is None or h == host})


# ---------------------------------------------------------------- errors

#: queue instance states that put a reservation holding it in error, as qrstat -explain names
#: them: an operator's disabling or suspension, an unknown host, the error state; not a
#: calendar's (Grid Engine's qmaster sets no reservation in error for those: the
#: reservation's own check refused calendars that close its window), nor the orphaned
#: state (a reserved instance whose host left the queue stays, orphaned, and Grid Engine
#: counts that as no error of the reservation)
_ERROR_WORDS = ((QState.DISABLED, "disabled"), (QState.SUSPENDED, "suspended"),
                (QState.UNKNOWN, "unknown"), (QState.ERROR, "in error state"))


def _troubles(data, instances):
    found = []
    for q, h, _n in data.get("granted") or ():
        qi = instances.get(f"{q}@{h}")
        if qi is None:
            continue                    # (orphaned: kept for the reservation, no error)
        word = next((w for flag, w in _ERROR_WORDS if flag in qi.states), None)
        if word is not None:
            found.append(f"reserved queue {q}@{h} is {word}")
    return found


def check_errors(state, snap):
    """Put reservations whose queue instances became unusable in error (and back);
    True when one changed."""
    instances = {qi.name: qi for qi in snap.queues}
    changed = False
    for data in table(state).values():
        found = _troubles(data, instances)
        wanted = ARState.ERROR.value if found else ARState.GRANTED.value
        if data.get("state") != wanted or (data.get("messages") or []) != found:
            if data.get("state") != wanted:
                jobmail.reservation(state, data, "error" if found else "resolved", time.time())
            data["state"], data["messages"] = wanted, found
            store.write(data)
            changed = True
    return changed


# ---------------------------------------------------------------- jobs

def job_problem(state, spec, now):
    """Why a job submitted with ``-ar`` (or moved into a reservation by qalter) cannot be
    accepted, in Grid Engine's words (or None): the reservation does not exist, is over
    or deleted, or its window cannot hold the job's h_rt. Its users (``-u``) are not
    checked, as Grid Engine's qmaster does not check them: the scheduler keeps a job
    whose owner may not use the reservation waiting, and says why."""
    ar_id = int(spec.get("ar") or 0)
    data = table(state).get(ar_id)
    if data is None:
        return words.invalid_id(ar_id)
    if float(data["end"]) <= now or data.get("state") == ARState.DELETED.value:
        return words.gone(ar_id)
    return duration_problem(spec, float(data["start"]), float(data["end"]), now)


def duration_problem(spec, start, end, now):
    seconds = words.job_runtime(spec)
    if seconds is None:
        return None
    begin = max(now, float(spec.get("start_at") or 0))
    return words.duration_problem(int(spec.get("ar") or 0), seconds, start, end, begin)


def accept_job(state, dispatcher, job, now):
    """Intake of a job with ``-ar``: remember the reservation's submit time for the
    accounting record, or delete the job when it may not go into the reservation."""
    if not job.spec.get("ar"):
        return
    why = job_problem(state, job.spec, now)
    if why is None:
        spec = dict(job.spec, ar_submission_time=int(table(state)[int(job.spec["ar"])]["submit_time"]))
        jobstore.write_spec(spec)
        job.spec = shared.description(spec)
        return
    apply.reject(state, job, now, why)


# ---------------------------------------------------------------- queries

def held_slots(state, now):
    """queue instance name -> slots held by reservations in their window (qstat -f resv)."""
    held = {}
    for data in table(state).values():
        if float(data["start"]) <= now < float(data["end"]):
            for q, h, n in data.get("granted") or ():
                held[f"{q}@{h}"] = held.get(f"{q}@{h}", 0) + int(n)
    return held


