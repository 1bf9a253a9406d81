"""Which queue instances may take a job, and in which order they are tried.

``unsuitable(request, owner, qi, host)`` gives the reason a queue instance
can never serve a request in this pass (its state, its host's state, its
type (``type_refused``), the job's queue list (or, for a parallel job, its master queue list),
PE and checkpointing lists, access lists), or
None; it depends on the request and the configuration only, so jobs of one
category share its answer. ``sort_key`` orders suitable instances by the
queue sort method: ``load`` (the host's load formula value with the load
adjustments of this pass, then sequence number) or ``seqno`` (sequence
number, then load).
"""

import fnmatch

from gridtools.sched.reasons import Reason, Why
from gridtools.sched.snapshot import QState, SortMethod


def prepare_specs(specs):
    """Compile the wildcard patterns of queue specs as ``spec_matches`` will use them (the
    compiled patterns are kept); the seconds that took, next to none when they were kept
    already (the daemon charges them to the job's owner: ``daemon.patterncost``)."""
    import time
    began = time.perf_counter()
    for spec in specs:
        qpart, at, hpart = spec.partition("@")
        fnmatch.fnmatchcase("", qpart or "*")
        if at:
            fnmatch.fnmatchcase("", hpart if hpart.startswith("@") else hpart.lower())
    return time.perf_counter() - began


def spec_matches(spec, qi):
    """True when a queue spec (``q``, ``q@host``, ``q@@group``, wildcards) names ``qi``."""
    qpart, at, hpart = spec.partition("@")
    if not fnmatch.fnmatchcase(qi.queue, qpart or "*"):
        return False
    if not at:
        return True
    if hpart.startswith("@"):
        return any(fnmatch.fnmatchcase(g, hpart) for g in qi.hostgroups)
    return fnmatch.fnmatchcase(qi.host.lower(), hpart.lower())


def access_denied(req, owner, qi):
    """Reason the job's owner or project may not use the queue instance, or None."""
    if qi.user_lists and not req.userlists.intersection(qi.user_lists):
        return Reason(Why.USER_LIST, (qi.name, owner))
    if qi.xuser_lists and (qi.xuser_unknown or req.userlists.intersection(qi.xuser_lists)):
        return Reason(Why.XUSER_LIST, (qi.name, owner))
    if qi.projects and req.project not in qi.projects:
        return Reason(Why.PROJECT_LIST, (qi.name, req.project or ""))
    if qi.xprojects and req.project and req.project in qi.xprojects:
        return Reason(Why.XPROJECT_LIST, (qi.name, req.project))
    if qi.host_access:
        return _host_denied(req, qi)
    return None


def _host_denied(req, qi):
    """Reason the host's access and project lists (host_conf(5)) keep the job out, or None."""
    users, xusers, xunknown, projects, xprojects = qi.host_access
    if users and not req.userlists.intersection(users) or \
            xusers and (xunknown or req.userlists.intersection(xusers)):
        return Reason(Why.NO_PERMISSION, ("host", qi.host))
    if projects and req.project not in projects:
        return Reason(Why.HOST_PROJECT, (req.project or "", qi.host))
    if xprojects and req.project and req.project in xprojects:
        return Reason(Why.HOST_XPROJECT, (req.project, qi.host))
    return None


#: queue states that are judged per pass from the load (not by ``unsuitable``)
_ALARMS = QState.LOAD_ALARM | QState.SUSPEND_ALARM


def closed(qi, host):
    """Reason a queue instance takes no jobs at all now (its or its host's state), or None."""
    blocking = (qi.states & ~_ALARMS).blocking()
    if blocking is not None:
        return Reason(Why.QI_STATE, (qi.name, blocking.name))
    if host is not None and host.state.closed:
        return Reason(Why.HOST_CLOSED, (qi.name, qi.host, host.state.name))
    return None


def type_refused(req, qi):
    """Reason the queue instance's type (queue_conf(5) ``qtype``) keeps the job out, or
    None, as Grid Engine's scheduler judges it: a job that must start at once (qrsh,
    ``-now y``) runs only in an INTERACTIVE queue, whatever else it asks; the BATCH type
    is asked only of a job with neither PE nor checkpointing environment (a queue of type
    NONE with a ``pe_list`` or ``ckpt_list`` takes parallel or checkpointing jobs); a
    checkpointing job without PE is not taken by a queue that is parallel (has a
    ``pe_list``) but not BATCH."""
    if req.immediate:
        return None if qi.interactive else Reason(Why.NOT_TYPE, (qi.name, "interactive"))
    if req.pe is not None or qi.batch:
        return None
    if not req.ckpt:
        return Reason(Why.NOT_TYPE, (qi.name, "batch"))
    return Reason(Why.NOT_TYPE, (qi.name, "parallel")) if qi.pe_list else None


def unsuitable(req, owner, qi, host=None):
    """None if ``qi`` could serve the request (capacity and load aside), else the reason.

    With ``host``, the instance's own state and its host's are looked at too
    (the pass checks those once for all jobs, and passes None).
    """
    if host is not None:
        why = closed(qi, host)
        if why is not None:
            return why
    why = type_refused(req, qi)
    if why is not None:
        return why
    if req.hard_queues and not any(spec_matches(s, qi) for s in req.hard_queues) and \
            not (req.pe is not None and any(spec_matches(s, qi) for s in req.master_queues)):
        return Reason(Why.NOT_HARD_QUEUE, (qi.name,))
    if req.pe is not None and not any(fnmatch.fnmatchcase(pe, req.pe.pattern) for pe in qi.pe_list):
        return Reason(Why.NOT_IN_PE_LIST, (qi.name, req.pe.pattern))
    if req.ckpt and req.ckpt not in qi.ckpt_list:
        return Reason(Why.NOT_IN_CKPT_LIST, (qi.name, req.ckpt))
    return access_denied(req, owner, qi)


#: the load of a host whose load formula names a value it does not have (sorted last)
ERROR_LOAD = 9999.0


def parse_formula(text):
    """A load formula (sched_conf(5)) as ((sign, ((op, factor), ...)), ...): terms joined
    by ``+``/``-``, each a chain of factors joined by ``*`` and ``/``; a factor is a
    number or a load value or complex name (a leading ``$`` is allowed)."""
    terms, sign, buf = [], 1.0, ""
    for char in "".join(str(text).split()) + "+":
        if char in "+-" and buf:
            terms.append((sign, _factors(buf)))
            sign, buf = (1.0 if char == "+" else -1.0), ""
        elif char in "+-":
            sign = -sign if char == "-" else sign
        else:
            buf += char
    return tuple(terms)


def _factors(term):
    found, op, buf = [], "*", ""
    for char in term + "*":
        if char in "*/":
            found.append((op, _factor(buf)))
            op, buf = char, ""
        else:
            buf += char
    return tuple(found)


def _factor(text):
    try:
        return float(text)
    except ValueError:
        return text[1:] if text.startswith("$") else text


def _value(name, host, adjust, global_values):
    value = host.load.get(name)
    if isinstance(value, (int, float)):
        return float(value) + adjust.get((host.name, name), 0.0)
    for n, v, _t in host.values:
        if n == name and isinstance(v, (int, float)):
            return float(v)
    for n, v, _t in global_values:
        if n == name and isinstance(v, (int, float)):
            return float(v)
    return None


def evaluate(formula, host, adjust, global_values=()):
    """A parsed load formula's value on a host (with this pass's load adjustments)."""
    total = 0.0
    for sign, factors in formula:
        term = 1.0
        for op, factor in factors:
            value = factor if isinstance(factor, float) else _value(factor, host, adjust, global_values)
            if value is None:
                return ERROR_LOAD
            if op == "*":
                term *= value
            else:
                term = term / value if value else ERROR_LOAD
        total += sign * term
    return total


def compiled(text):
    """The form ``load_of`` takes: a formula that is one load value name stays its name
    (looked up directly), anything else is parsed."""
    formula = parse_formula(text)
    if len(formula) == 1 and formula[0][0] == 1.0 and len(formula[0][1]) == 1 \
            and isinstance(formula[0][1][0][1], str):
        return formula[0][1][0][1]
    return formula


def load_of(host, formula, adjust, global_values=()):
    """The host's load formula value (``compiled``) plus this pass's adjustments."""
    if host is None:
        return 0.0
    if formula.__class__ is str:
        value = host.load.get(formula)
        if value.__class__ is float or value.__class__ is int:
            return value + adjust.get((host.name, formula), 0.0)
        formula = parse_formula(formula)
    return evaluate(formula, host, adjust, global_values)


def sort_key(qi, req, host, method, formula, adjust, violations=0, global_values=()):
    """Key ordering suitable queue instances for a request (lower is better): instances
    that meet more soft requests (``violations`` of them not met) first."""
    soft = violations
    if req.soft_queues and not any(spec_matches(s, qi) for s in req.soft_queues):
        soft += 1
    load = load_of(host, formula, adjust, global_values)
    if method is SortMethod.SEQNO:
        return (soft, qi.seq_no, load, qi.host, qi.queue)
    return (soft, load, qi.seq_no, qi.host, qi.queue)
