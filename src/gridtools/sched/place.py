"""The place stage: queue instances for a job's next task.

The category's suitable instances without a load or suspend alarm are
sorted (soft requests, then the queue sort method and load formula); a
serial task takes the first with a free slot whose consumables, resource
quotas and (when reservations or advance reservations are planned) future
use allow it; a parallel task goes through its PE's allocation rule
(``sched.pe``); instances whose host runs its MAX_STARTERS jobs already
are passed over (``cycle.Pass.throttled``). Where the room comes from is a
*pool*: the cell's (``cycle.Pass``) or, for a job in an advance reservation,
the reservation's (``ar.ARPool``). Both offer ``free`` slots per queue instance and
``short``/``room``/``pe_room``/``grant_short``/``take``.
"""

from gridtools.model.resources import Consumable
from gridtools.sched import pe as pe_stage
from gridtools.sched import queues as qsel
from gridtools.sched.queue_state import threshold_value
from gridtools.sched.reasons import Reason, Why, capped

_FULL_OR_LOADED = frozenset({Why.QI_FULL, Why.QI_OVERLOADED, Why.QI_SUSPEND_ALARM})


def alarm(p, qi):
    """The suspend or load alarm a queue instance is in now (with adjustments), or None."""
    host = p.snap.hosts.get(qi.host)
    if host is None:
        return None
    for kind, thresholds in ((Why.QI_SUSPEND_ALARM, qi.suspend_thresholds),
                             (Why.QI_OVERLOADED, qi.load_thresholds)):
        for name, threshold, text in thresholds:
            cx = p.table.get(name)
            if cx is None:
                continue
            raw = threshold_value(cx, host.load, p.snap.global_load, qi.values)
            if raw is None and cx.consumable is Consumable.NO:
                # no value for it anywhere: Grid Engine's load alarm counts that as crossed
                return Reason(kind, (qi.name, f'no value for complex attribute "{cx.name}"'))
            if not isinstance(raw, (int, float)):
                continue
            adj = p.adjust.get((qi.host, cx.name), 0.0)
            if cx.relop.holds(raw + adj, threshold):
                return Reason(kind, (qi.name, cx.name, raw + adj, raw) + _adjustment(p, host, cx.name)
                              + (cx.relop.value, text))
    return None


def _adjustment(p, host, name):
    """How the recent starts' load adjustment of a value came about: (the adjustment per
    slot as written, the recent slots fading with age, the processors it is divided by
    or 0), or ("", 0.0, 0) when none applies."""
    lc = p.lc.get(host.name, 0.0)
    written = next((t for n, _a, t in p.snap.config.job_load_adjustments if n == name), None)
    if written is None or lc <= 0:
        return ("", 0.0, 0)
    return (written, lc, max(1, host.num_proc) if name.startswith("np_") else 0)


def _soft_consumable_misses(p, req, qi):
    misses = 0
    for ask in req.soft:
        cx = p.table.get(ask.name)
        if cx is not None and cx.counted and p.cap.short(p.table, (ask,), qi.queue, qi.host, 1):
            misses += 1
    return misses


def candidates(p, job, cat, reasons):
    """Suitable queue instances without a load alarm, best first."""
    found = []
    for qi in cat.suitable:
        why = alarm(p, qi) if (qi.load_thresholds or qi.suspend_thresholds) else None
        if why is not None:
            p.load_alarms = True
            reasons.append(why)
        else:
            found.append(qi)
    found.sort(key=_sort_key(p, job.request, cat))
    return found


def _sort_key(p, req, cat):
    snap = p.snap
    conf, hosts, soft = snap.config, snap.hosts, cat.soft
    method, formula, adjust, gvalues = conf.sort_method, p.formula, p.adjust, snap.global_values
    if not soft and not req.soft_queues:
        seqno = method is qsel.SortMethod.SEQNO

        def plain(qi):
            load = qsel.load_of(hosts.get(qi.host), formula, adjust, gvalues)
            return (qi.seq_no, load, qi.host, qi.queue) if seqno else (load, qi.seq_no, qi.host, qi.queue)
        return plain
    counted_soft = any(p.table.get(a.name) is not None and p.table[a.name].counted for a in req.soft)

    def key(qi):
        misses = soft.get(qi.name, 0) + (_soft_consumable_misses(p, req, qi) if counted_soft else 0)
        return qsel.sort_key(qi, req, hosts.get(qi.host), method, formula, adjust, misses, gvalues)
    return key


def place_serial(pool, job, cands, reasons):
    for qi in cands:
        if pool.free.get(qi.name, 0) < 1:
            reasons.append(Reason(Why.QI_FULL, (qi.name,)))
            continue
        why = pool.short(job, qi, 1)
        if why is not None:
            reasons.append(why)
            continue
        return "", ((qi.queue, qi.host, 1),)
    return None


def pool_of(p, job):
    return p.ar_pool(job.request.ar) if job.request.ar else p


def place(p, job, reasons):
    """(pe name, granted) for the job's next task, or None with reasons added."""
    if p.open_instances <= 0 and not job.request.ar:
        reasons.extend(p.full_reasons())
        return None
    cat = p.category(job)
    if cat.failed is not None:
        reasons.extend(cat.failed)
        return None
    mine = list(cat.static)
    cands = candidates(p, job, cat, mine)
    p.last_candidates = (job.id, cands)
    cands = p.throttled(cands, mine)
    pool = pool_of(p, job)
    if job.request.pe is not None:
        found = pe_stage.place(job, cands, pool, p.snap, mine)
    else:
        found = place_serial(pool, job, cands, mine)
    if found is None:
        # Grid Engine's summary when every instance that could serve was full or overloaded
        dynamic = mine[len(cat.static):]
        if not cat.fixed_rejects and dynamic and all(r.why in _FULL_OR_LOADED for r in dynamic):
            mine.append(Reason(Why.ALL_DROPPED))
        cat.failed = tuple(mine)
        cat.shared = capped(mine)
        reasons.extend(mine)
    return found
