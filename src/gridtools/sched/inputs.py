"""From configuration objects and job descriptions to the scheduler's typed records.

Pure: it takes a loaded ``CellConfig`` (``gridtools.spool.config``) and job
descriptions, and returns the records of ``sched.snapshot``. This is the one
place where Grid Engine configuration text becomes numbers: queue attributes
with per-host values, host groups, complexes, PEs, the scheduler
configuration, and a job's ``-l``/``-q``/``-pe`` requests and run time. The
daemon builds its snapshots here, and so do ``qsub -w`` and ``qalter -w``.
"""

import functools
import re

from gridtools.errors import GridError
from gridtools.formats import values
from gridtools.model.resources import INFINITY, Complex, Consumable, CxType, Relop, Requestable, per_job
from gridtools.sched.snapshot import (
    PE, Allocation, Ask, Host, HostState, PeRequest, QState, QueueInstance, Request, SchedConfig,
    SortMethod)

#: queue limits that also act as offered resource values
LIMIT_NAMES = ("s_rt", "h_rt", "s_cpu", "h_cpu", "s_fsize", "h_fsize", "s_data", "h_data",
               "s_stack", "h_stack", "s_core", "h_core", "s_rss", "h_rss", "s_vmem", "h_vmem")
#: host state words as the spool keeps them
HOST_STATES = {s.value: s for s in HostState}
HOST_STATES["drained"] = HostState.DRAIN


# ---------------------------------------------------------------- values

def parse_value(cx, text):
    """The value of ``text`` for complex ``cx``: a number for numeric types, else text.

    Raises GridError when the text is not a value of the type.
    """
    if isinstance(text, bool):
        return 1 if text else 0
    if isinstance(text, (int, float)):
        return text
    text = str(text)
    kind = cx.type
    if kind is CxType.MEMORY:
        return values.parse_memory(text)
    if kind is CxType.TIME:
        return values.parse_time(text)
    if kind is CxType.BOOL:
        return 1 if values.parse_bool(text) else 0
    if kind in (CxType.INT, CxType.DOUBLE):
        if text.strip().upper() == "INFINITY":
            return INFINITY
        number = values.parse_number(text)
        if kind is CxType.INT and isinstance(number, float) and number == number \
                and abs(number) != INFINITY and number != int(number):
            import math                 # (a part of one is one: an HTCondor request_<name> = 0.5)
            return math.ceil(number)
        return number
    return text


def value_or_none(cx, text):
    try:
        return parse_value(cx, text)
    except (GridError, ValueError):
        return None


def complexes(conf):
    """name and shortcut -> Complex, from the complex table."""
    table = {}
    for row in (conf.single.get("complex") or {}).values():
        kind = CxType(str(row["type"]))
        cx = Complex(row["name"], row["shortcut"], kind, Relop(str(row["relop"])),
                     Requestable(str(row["requestable"])), Consumable(str(row["consumable"])),
                     None, float(row["urgency"]))
        default = str(row["default"])
        if default.upper() not in ("NONE", ""):
            cx = Complex(cx.name, cx.shortcut, kind, cx.relop, cx.requestable, cx.consumable,
                         value_or_none(cx, default), cx.urgency)
        table[cx.name] = cx
        table.setdefault(cx.shortcut, cx)
    return table


def parsed_pairs(mapping, table):
    """(complex name, parsed value, text) of a name=value mapping; unknown or bad entries left out."""
    found = []
    for name, text in (mapping or {}).items():
        cx = table.get(str(name))
        if cx is None:
            continue
        value = value_or_none(cx, text)
        if value is not None:
            found.append((cx.name, value, str(text)))
    return tuple(found)


# ---------------------------------------------------------------- hosts and queues

def hostgroups(conf):
    """``@group`` -> set of host names, nested groups resolved."""
    groups = {name: list(obj.get("hostlist") or []) for name, obj in conf.objects["hostgroup"].items()}
    resolved = {}

    def expand(name, seen):
        if name in resolved:
            return resolved[name]
        out = set()
        for member in groups.get(name, ()):
            if member.startswith("@"):
                if member not in seen:
                    out |= expand(member, seen | {member})
            else:
                out.add(member)
        resolved[name] = out
        return out

    for name in groups:
        expand(name, {name})
    return resolved


def exec_hosts(conf):
    """Names of the execution hosts (the ``global`` pseudo host excluded)."""
    return sorted(n for n in conf.objects["exechost"] if n != "global")


def queue_hosts(queue, groups, known):
    hosts = set()
    for entry in queue.get("hostlist") or []:
        hosts |= groups.get(entry, set()) if entry.startswith("@") else {entry}
    return sorted(h for h in hosts if h in known)


def qvalue(queue, attr, host, groups):
    """A queue attribute's value on ``host`` (per-host overrides applied)."""
    value = queue.get(attr)
    return value.for_host(host, groups) if hasattr(value, "for_host") else value


def groups_of(host, groups):
    return frozenset(g for g, members in groups.items() if host in members)


def _instance(qname, queue, host, groups, table, states, usersets=None, host_access=None):
    def v(attr):
        return qvalue(queue, attr, host, groups)
    limits = {n: v(n) for n in LIMIT_NAMES if str(v(n)).upper() != "INFINITY"}
    offered = dict(v("complex_values") or {})
    offered.update({k: str(x) for k, x in limits.items()})
    qtype = set(v("qtype") or ())
    return QueueInstance(
        queue=qname, host=host, slots=int(v("slots") or 0), seq_no=int(v("seq_no") or 0),
        batch="BATCH" in qtype, interactive="INTERACTIVE" in qtype, states=states,
        pe_list=tuple(v("pe_list") or ()), ckpt_list=tuple(v("ckpt_list") or ()),
        user_lists=tuple(v("user_lists") or ()), xuser_lists=tuple(v("xuser_lists") or ()),
        xuser_unknown=_unknown_lists(v("xuser_lists"), usersets),
        host_access=host_access or (),
        projects=tuple(v("projects") or ()), xprojects=tuple(v("xprojects") or ()),
        values=parsed_pairs(offered, table),
        load_thresholds=parsed_pairs(v("load_thresholds"), table),
        suspend_thresholds=parsed_pairs(v("suspend_thresholds"), table),
        hostgroups=groups_of(host, groups))


def _host_access(conf, host, usersets):
    """(user_lists, xuser_lists, xuser_unknown, projects, xprojects) of an execution host
    (host_conf(5)), None when it names none of them."""
    obj = conf.objects["exechost"].get(host) or {}
    found = tuple(tuple(obj.get(attr) or ()) for attr in ("user_lists", "xuser_lists"))
    projects = tuple(tuple(obj.get(attr) or ()) for attr in ("projects", "xprojects"))
    if not any(found) and not any(projects):
        return None
    return found + (_unknown_lists(found[1], usersets),) + projects


def _unknown_lists(names, usersets):
    """True when an access list of ``names`` is not among ``usersets`` (a deny list set
    aside or removed denies everyone: it is not known whom it named)."""
    return usersets is not None and any(name not in usersets for name in names or ())


def queue_instances(conf, groups, table, states_of=lambda name: QState.NONE):
    """Every queue instance of the configuration; ``states_of("q@h")`` gives its QState."""
    known = set(exec_hosts(conf))
    usersets = conf.objects["userset"]
    access = {host: _host_access(conf, host, usersets) for host in known}
    return tuple(_instance(qname, queue, host, groups, table, states_of(f"{qname}@{host}"),
                           usersets, access.get(host))
                 for qname, queue in sorted(conf.objects["queue"].items())
                 for host in queue_hosts(queue, groups, known))


#: what a load value of a numeric complex that does not read as a number counts as, by the
#: complex's relation: the worst value there is, so that a load threshold on it is crossed
#: and a request for it is not met (as Grid Engine takes a load value it cannot read)
_UNREADABLE = {Relop.GE: float("inf"), Relop.GT: float("inf"), Relop.LE: float("-inf"),
               Relop.LT: float("-inf")}


def numeric_load(load, table):
    """Load values as numbers where the complex of that name is numeric, else as given
    (one that does not read as a number, ``nan`` say, as the worst: ``_UNREADABLE``)."""
    parsed = {}
    for name, value in (load or {}).items():
        cx = table.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            parsed[name] = value
        elif cx is not None and cx.type.numeric:
            number = value_or_none(cx, value)
            parsed[name] = number if number is not None and number == number else \
                _UNREADABLE.get(cx.relop, float("nan"))
        else:
            parsed[name] = value
    return parsed


def scaled(load, scaling):
    """Load values times the host's ``load_scaling`` factors (host_conf(5))."""
    if not scaling:
        return load
    out = dict(load)
    for name, factor in scaling.items():
        value = out.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = value * _float(factor, 1.0)
    return out


def hosts(conf, loads, host_states, table):
    """name -> Host with its load (numbers where they are numbers, scaled by the host's
    ``load_scaling``) and capacities."""
    result = {}
    for name in exec_hosts(conf):
        obj = conf.objects["exechost"][name]
        load = scaled(numeric_load(loads.get(name), table), obj.get("load_scaling") or {})
        nproc = load.get("num_proc", 1)
        result[name] = Host(name=name, load=load, values=parsed_pairs(obj.get("complex_values"), table),
                            state=HOST_STATES.get(host_states.get(name, ""), HostState.NORMAL),
                            num_proc=int(nproc) if isinstance(nproc, (int, float)) and nproc >= 1 else 1)
    return result


def global_values(conf, table):
    obj = conf.objects["exechost"].get("global") or {}
    return parsed_pairs(obj.get("complex_values"), table)


def pes(conf):
    """name -> PE."""
    found = {}
    for name, obj in conf.objects["pe"].items():
        rule = obj.get("allocation_rule", "$pe_slots")
        per_host = 0
        if isinstance(rule, int) or str(rule).isdigit():
            allocation, per_host = Allocation.FIXED, int(rule)
        else:
            allocation = Allocation(str(rule))
        found[name] = PE(name=name, slots=int(obj.get("slots") or 0), allocation=allocation,
                         per_host=per_host, user_lists=tuple(obj.get("user_lists") or ()),
                         xuser_lists=tuple(obj.get("xuser_lists") or ()),
                         xuser_unknown=_unknown_lists(obj.get("xuser_lists"),
                                                      conf.objects["userset"]),
                         urgency_slots=obj.get("urgency_slots", "min"),
                         control_slaves=bool(obj.get("control_slaves")),
                         job_is_first_task=bool(obj.get("job_is_first_task", True)))
    return found


# ---------------------------------------------------------------- configuration

def _seconds(text, default):
    try:
        return float(values.parse_time(str(text)))
    except (GridError, ValueError):
        return default


def _float(value, default):
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def sched_params(text):
    """sched_conf ``params`` (``MONITOR=1,PROFILE=true``) as a dict of upper-case keys."""
    found = {}
    if not text or str(text).lower() == "none":
        return found
    for item in str(text).replace(" ", ",").split(","):
        key, _, value = item.partition("=")
        if key:
            found[key.strip().upper()] = value.strip() or "1"
    return found


def _owner_steps(params, default):
    """sched_conf params OWNER_MATCH_STEPS (``sched.evalbudget``): a whole number, 0 for
    no limit; ``default`` when unset or not a whole number (qconf refuses those)."""
    from gridtools.sched.evalbudget import PARAM
    text = params.get(PARAM)
    try:
        return max(0, int(str(text).strip())) if text is not None else default
    except ValueError:
        return default


def sched_config(conf):
    """The scheduler configuration as a SchedConfig."""
    s = conf.single.get("sched") or {}
    d = SchedConfig()
    params = sched_params(s.get("params"))
    adjust = s.get("job_load_adjustments") or {}
    gconf = conf.objects["conf"].get("global") or {}
    method = str(s.get("queue_sort_method", "load"))
    return SchedConfig(
        sort_method=SortMethod(method) if method in ("load", "seqno") else d.sort_method,
        load_formula=str(s.get("load_formula") or d.load_formula),
        maxujobs=int(s.get("maxujobs") or 0),
        max_aj_instances=int(gconf.get("max_aj_instances", d.max_aj_instances) or 0),
        job_load_adjustments=_adjustments(adjust, conf) if isinstance(adjust, dict) else (),
        load_adjustment_decay=_seconds(s.get("load_adjustment_decay_time", "0:7:30"),
                                       d.load_adjustment_decay),
        max_pending_tasks_per_job=int(s.get("max_pending_tasks_per_job")
                                      or d.max_pending_tasks_per_job),
        max_reservation=int(s.get("max_reservation") or 0),
        default_duration=_seconds(s.get("default_duration", "INFINITY"), INFINITY),
        schedule_interval=_seconds(s.get("schedule_interval", "0:0:15"), d.schedule_interval),
        params=params, owner_steps=_owner_steps(params, d.owner_steps))


def _adjustments(adjust, conf):
    """job_load_adjustments as (name, amount, text) with amounts of the complex's type (1G)
    and the text as written (the scheduler's reasons quote it)."""
    table = complexes(conf) if adjust else {}
    found = []
    for name, text in adjust.items():
        cx = table.get(str(name))
        amount = value_or_none(cx, text) if cx is not None else None
        found.append((cx.name if cx is not None else str(name),
                      float(amount) if isinstance(amount, (int, float)) else _float(text, 0.0),
                      str(text)))
    return tuple(found)


def userlists_of(conf, user, group):
    """Names of the access lists (usersets) that contain ``user`` (or ``@group``)."""
    found = set()
    for name, obj in conf.objects["userset"].items():
        entries = obj.get("entries") or []
        if user in entries or f"@{group}" in entries:
            found.add(name)
    return frozenset(found)


def department_of(conf, user, group):
    """The department (a userset of type DEPT) ``user`` belongs to: the first that lists
    the user, else the first that lists ``@group``, else defaultdepartment (Grid
    Engine sets a job's department so when it is submitted)."""
    departments = []
    for name, obj in sorted(conf.objects["userset"].items()):
        kinds = obj.get("type") or ()
        if "DEPT" in (kinds if isinstance(kinds, (list, tuple)) else str(kinds).split(",")):
            departments.append((name, obj.get("entries") or []))
    for wanted in (user, f"@{group}"):
        for name, entries in departments:
            if wanted in entries:
                return name
    return "defaultdepartment"


# ---------------------------------------------------------------- jobs

def pe_request(pe):
    """A spooled ``pe`` ([name, low, high] or [name, [[low, high], ...]]; a high of None
    or 0 leaves the range open: ``4-``) as a PeRequest."""
    if not pe:
        return None
    name, rest = pe[0], pe[1:]
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        ranges = tuple((int(lo), _high(hi)) for lo, hi in rest[0])
    else:
        lo, hi = rest[0], rest[1] if len(rest) > 1 else rest[0]
        ranges = ((int(lo), _high(hi)),)
    return PeRequest(str(name), tuple(sorted(ranges, key=lambda r: r[0])))


def _high(value):
    return None if value is None or int(value) == 0 else int(value)


def asks(mapping, table, per_job_names=()):
    """Ask records of a name=value request mapping, canonical names; unknown names left
    out; the amounts of ``per_job_names`` (canonical) marked as the job's as a whole
    (``model.resources.per_job``)."""
    found = []
    for name, text in (mapping or {}).items():
        cx = table.get(str(name))
        if cx is None:
            continue
        value = value_or_none(cx, text)
        if cx.name in per_job_names and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = per_job(value)
        if value is not None:
            found.append(Ask(cx.name, value, f"{name}={text}"))
    return tuple(sorted(found, key=lambda a: a.name))


def runtime(hard):
    """Seconds a job may run by its hard requests (h_rt, else s_rt); INFINITY without."""
    for ask in hard:
        if ask.name == "h_rt":
            return float(ask.value)
    for ask in hard:
        if ask.name == "s_rt":
            return float(ask.value)
    return INFINITY


def req_of(spec, conf, table):
    return request(spec, conf, table)


def request(spec, conf, table):
    """The Request of a job description."""
    res = spec.get("resources") or {}
    queues = spec.get("queues") or {}
    per_job_names = tuple(sorted(spec.get("per_job_requests") or ()))
    hard = asks(res.get("hard"), table, per_job_names)
    return Request(
        hard=hard, soft=asks(res.get("soft"), table),
        hard_queues=tuple(queues.get("hard") or ()), soft_queues=tuple(queues.get("soft") or ()),
        master_queues=tuple(spec.get("masterq") or ()), pe=pe_request(spec.get("pe")),
        ckpt=spec.get("ckpt") or "", immediate=bool(spec.get("now")),
        project=spec.get("project") or "",
        userlists=userlists_of(conf, spec["owner"], spec.get("group", "")),
        ar=int(spec.get("ar") or 0), reserve=bool(spec.get("reserve")), runtime=runtime(hard),
        implicit=implicit_defaults(hard, table), per_job=per_job_names)


#: the held tasks of most jobs: one empty set for all
_NONE_HELD = frozenset()


def pending_job(job, conf, table, request=None, running_count=0, department="defaultdepartment",
                deadline_users=frozenset(), task_requests=()):
    """The PendingJob of a ``model.job.Job`` with pending tasks (``request``: its Request,
    when the caller keeps one; ``task_requests``: ((task, Request), ...) of the tasks
    that ask otherwise)."""
    from gridtools.sched.snapshot import PendingJob
    spec = job.spec
    pending = job.pending_numbers()
    owner = spec["owner"]
    held, resting = [], []
    for n, t in job.tasks.items():
        if (t.hold or t.rest_until) and n in pending:
            if t.hold:
                held.append(n)
            if t.rest_until:
                resting.append((n, t.rest_until))
    held = frozenset(held) or _NONE_HELD
    limits = job_limits(job)
    return PendingJob(
        id=job.id, owner=owner, group=spec.get("group", ""), name=spec["name"],
        request=request or req_of(spec, conf, table), submit_time=float(spec["submit_time"]),
        tasks=pending, department=department, priority=int(spec.get("priority", 0)), held=held,
        held_all=bool(job.hold), start_at=float(spec.get("start_at") or 0.0),
        predecessors=tuple(spec.get("predecessors") or ()),
        ad_predecessors=tuple(spec.get("ad_predecessors") or ()),
        tc=int(spec.get("tc") or 0), running_tasks=running_count,
        deadline=float(spec.get("deadline") or 0.0), deadline_user=owner in deadline_users,
        jshare=int(spec.get("jobshare") or 0), oticket=int(spec.get("override_tickets") or 0),
        now_only=bool(spec.get("now")), job_prio=int(spec.get("job_prio") or 0),
        universe=_slotless(spec), shadow=_shadow(spec), limits=limits if limits is not None else (),
        machine_limits=limits is None, submit_host=spec.get("submit_host") or "",
        task_requests=task_requests, resting=tuple(resting), start_delay=job_start_delay(job))


def job_start_delay(job):
    """``start_delay`` of a ``model.job.Job``, once a description (its ``spec_cache``)."""
    derived = job.spec_cache()
    if derived.start_delay is None:
        derived.start_delay = start_delay(job.spec)
    return derived.start_delay


#: a NextJobStartDelay line of a stored ad (the name in any case, as ClassAds read it)
_DELAY_LINE = re.compile(r"^[ \t]*nextjobstartdelay[ \t]*=", re.I | re.M)


def start_delay(spec, task=0):
    """The seconds an HTCondor job's NextJobStartDelay (next_job_start_delay) holds back
    the next start of its owner's HTCondor jobs once a task of it started (the schedd's
    start throttle, kept per owner): the largest of its procs', or
    proc ``task``'s own; 0 when it has none. It is evaluated with the job's ad as
    HTCondor's EvalInteger does (a real cut to an integer, a boolean 0 or 1; anything
    else, or a value below 0, is none). The cap (MAX_NEXT_JOB_START_DELAY) is the
    pass's (``SchedConfig.max_start_delay``)."""
    if not names_start_delay(spec):
        return 0.0
    ads = spec["condor_ad"]
    texts = [ads] if isinstance(ads, str) else list(ads)
    from gridtools.jobads import proc_ad
    indexes = [task] if task else range(1, len(texts) + 1)
    most = 0.0
    for index in indexes:
        try:
            value = proc_ad(texts, index if index <= len(texts) else 1).eval("NextJobStartDelay")
        except Exception:  # noqa: BLE001 - an ad that does not read: no delay
            continue
        most = max(most, delay_seconds(value))
    return most


def names_start_delay(spec):
    """True when an ad of the HTCondor job ``spec`` names a NextJobStartDelay."""
    ads = spec.get("condor_ad")
    if not ads:
        return False
    texts = [ads] if isinstance(ads, str) else list(ads)
    return any(isinstance(text, str) and _DELAY_LINE.search(text) for text in texts)


def job_names_start_delay(job):
    """``names_start_delay`` of a ``model.job.Job``, once a description."""
    derived = job.spec_cache()
    if derived.names_delay is None:
        derived.names_delay = names_start_delay(job.spec)
    return derived.names_delay


def delay_seconds(value):
    """A NextJobStartDelay's value in seconds, as HTCondor's EvalInteger reads it (a real
    cut to an integer, a boolean 0 or 1; anything else, or a value below 0, is none)."""
    if type(value) is bool:
        value = int(value)
    if type(value) in (int, float) and value == value and value > 0:
        return float(int(min(value, 2 ** 31 - 1)))
    return 0.0


def _shadow(spec):
    """True for an HTCondor job that runs on execute hosts (one of the schedd's shadows)."""
    return "condor_ad" in spec and not _slotless(spec)


def concurrency_limits(spec):
    """((name in lower case, amount), ...) of the concurrency limits an HTCondor job that
    runs on execute hosts uses: its ad's ConcurrencyLimits (proc 0's), a string of
    ``name[:amount]`` separated by commas or blanks (amount 1 when not given); () for
    any other job (the limits do not apply to the slot-less universes), and for a job
    whose limits need the machine it runs on (``limits_need_machine``)."""
    found = _job_limits(spec)
    return found if isinstance(found, tuple) else ()


def job_limits(job):
    """The concurrency limits of a ``model.job.Job`` (``_job_limits``: None when they need
    the machine), read from every proc's ad once a description (its ``spec_cache``)."""
    derived = job.spec_cache()
    if derived.limits is None:
        derived.limits = [_job_limits(job.spec)]
    return derived.limits[0]


def _job_limits(spec):
    """The limits of an HTCondor job (``_limits_of``: None when they need the machine):
    proc 0's, or when its procs differ, each name at its most over them all (a proc is
    held to what any proc of its cluster asks)."""
    texts = _limits_texts(spec)
    if len(texts) > 1:
        found = [_limits_of(text) for text in texts]
        if all(isinstance(f, tuple) for f in found):
            return _union(found)
    return _limits_of(texts[0] if texts else "")


def _union(found):
    """One tuple of limits holding each name of ``found`` (tuples of limits) at its most."""
    most = {}
    for limits in found:
        for name, weight in limits:
            most[name] = max(weight, most.get(name, 0.0))
    return tuple(sorted(most.items()))


def limits_need_machine(spec):
    """True when an HTCondor job's ConcurrencyLimits is an expression whose value is not
    a string on its own: it reads the job's attributes or the machine's
    (concurrency_limits_expr, ``strcat("license_", TARGET.Machine)``), and is evaluated
    for each host, the job's ad as MY and the host's as TARGET (``limits_in``)."""
    return _job_limits(spec) is None


#: a ConcurrencyLimits line of a stored ad (the name in any case, as ClassAds read it)
_LIMITS_LINE = re.compile(r"^[ \t]*concurrencylimits[ \t]*=[ \t]*(.*?)[ \t]*$", re.I | re.M)


def _limits_texts(spec):
    """The texts of the ConcurrencyLimits expressions of an HTCondor job on execute hosts:
    proc 0's first, then any other proc's that differs; () when it has none. The name is
    found in any case and its last line counts, as a ClassAd reads an ad (a job that
    wrote ``concurrencylimits`` is held to its limits as well)."""
    ads = spec.get("condor_ad")
    if not ads or _slotless(spec):
        return ()
    texts = [ads] if isinstance(ads, str) else list(ads)
    found = []
    for index, text in enumerate(texts):
        lines = _LIMITS_LINE.findall(text) if isinstance(text, str) and "=" in text else []
        if lines:
            found.append(lines[-1])
        elif index == 0:
            found.append("")
    return tuple(dict.fromkeys(found)) if any(found) else ()


def limits_in(job_ad, machine_ad):
    """The concurrency limits of a job's ad matched with ``machine_ad`` (MY and TARGET)."""
    try:
        value = job_ad.eval("ConcurrencyLimits", machine_ad)
    except (ValueError, TypeError):
        return ()
    return _limits_from(value) if isinstance(value, str) else ()


@functools.lru_cache(maxsize=65536)
def _limits_of(expr_text):
    """The limits of a ConcurrencyLimits expression evaluated on its own; None when its
    value is not a string then (an expression that reads attributes: see
    ``limits_need_machine``), () when it is not an expression. Kept for as many texts as
    a queue holds jobs that differ: an expression may take long to evaluate (to the
    evaluation's budget), and one that differs in every job would otherwise be
    evaluated again in every pass."""
    if not expr_text:
        return ()
    from gridtools.classad import ClassAdSyntaxError, parse
    try:
        value = parse(expr_text).eval()
    except (ClassAdSyntaxError, ValueError, TypeError):
        return ()
    return _limits_from(value) if isinstance(value, str) else None


def _limits_from(value):
    """((name in lower case, amount), ...) of a ConcurrencyLimits string. An amount that is
    not above 0 (or not a number: ``nan``) counts 1, as HTCondor's negotiator counts it: a
    job may never give back what a limit lets others use."""
    found = []
    for word in value.replace(",", " ").split():
        name, _colon, amount = word.partition(":")
        try:
            weight = float(amount) if amount else 1.0
        except ValueError:
            continue
        found.append((name.lower(), weight if weight > 0 else 1.0))
    return tuple(found)


def _slotless(spec):
    """The universe of a job that runs without a slot ("scheduler", "local"), else ""."""
    from gridtools.sched.local import SLOTLESS
    return SLOTLESS.get(spec.get("universe"), "")


def _limit_of_run(task, req):
    """Seconds a running task may run: the limit its run started with (a qalter of h_rt
    since changes the job's pending tasks, not what its shepherd enforces), else the
    request's."""
    limit = task.run_limit
    if limit > 0:
        return limit
    return INFINITY if limit < 0 else req.runtime


def running_record(job, task, table, req, department="defaultdepartment"):
    """The Running record of a running task of a ``model.job.Job`` with Request ``req``."""
    from gridtools.sched.snapshot import Running
    amounts = consumable_amounts(req, table) if task.amounts is None else \
        tuple((str(name), amount) for name, amount in task.amounts)     # (those its run began with)
    return Running(job.id, task.number, job.spec["owner"], tuple(tuple(g) for g in task.granted),
                   pe=task.pe or "", amounts=amounts,
                   start_time=task.start_time, end_time=task.start_time + _limit_of_run(task, req),
                   project=req.project, department=department, suspended=bool(task.suspended),
                   ar=req.ar, userlists=req.userlists, universe=_slotless(job.spec), shadow=_shadow(job.spec),
                   limits=concurrency_limits(job.spec) if task.limits is None else
                   tuple((str(name), float(weight)) for name, weight in task.limits),
                   submit_time=float(job.spec["submit_time"]),
                   priority=int(job.spec.get("priority", 0)),
                   deadline=float(job.spec.get("deadline") or 0.0), request=req)


def consumable_amounts(req, table):
    """(name, amount per slot or per job) of the consumables a request holds while it
    runs, implicit defaults included."""
    found = []
    for ask in req.consumed:
        cx = table.get(ask.name)
        if cx is not None and cx.counted and isinstance(ask.value, (int, float)):
            found.append((cx.name, ask.value))
    return tuple(found)


def implicit_defaults(hard, table):
    """Asks for the defaults of consumables that ``hard`` does not name (complex(5):
    a consumable's default is requested implicitly; a zero default is no request)."""
    have = {a.name for a in hard}
    extra = []
    for name, cx in table.items():
        if name != cx.name or not cx.counted or name in have:
            continue
        if isinstance(cx.default, (int, float)) and cx.default:
            extra.append(Ask(cx.name, cx.default, f"{cx.name}={value_text(cx, cx.default)}"))
    return tuple(sorted(extra, key=lambda a: a.name))


def value_text(cx, number):
    """A parsed amount of complex ``cx`` written back (``1G``, ``2``, ``0.5``)."""
    if cx.type is CxType.MEMORY:
        return values.format_memory(number)
    return str(int(number)) if float(number).is_integer() else str(number)


def defaulted(req, table):
    """The request with the implicit defaults of its consumables worked out."""
    from dataclasses import replace
    return replace(req, implicit=implicit_defaults(req.hard, table))


# ---------------------------------------------------------------- ticket policies

def _yes(value):
    if isinstance(value, bool):
        return value
    return str(value).strip().upper() in ("TRUE", "1", "YES", "Y")


def policy_config(conf):
    """The ticket, urgency and priority policy settings (PolicyConfig) of sched_conf."""
    from gridtools.accounting.usage import Usage
    from gridtools.sched.policy.config import PolicyConfig, parse_hierarchy
    s = conf.single.get("sched") or {}
    d = PolicyConfig()
    weights = s.get("usage_weight_list") or {}
    try:
        hierarchy = parse_hierarchy(str(s.get("policy_hierarchy") or ""))
    except ValueError:
        hierarchy = d.policy_hierarchy
    return PolicyConfig(
        weight_tickets_share=_float(s.get("weight_tickets_share"), d.weight_tickets_share),
        weight_tickets_functional=_float(s.get("weight_tickets_functional"), d.weight_tickets_functional),
        weight_user=_float(s.get("weight_user"), d.weight_user),
        weight_project=_float(s.get("weight_project"), d.weight_project),
        weight_department=_float(s.get("weight_department"), d.weight_department),
        weight_job=_float(s.get("weight_job"), d.weight_job),
        share_functional_shares=_yes(s.get("share_functional_shares", True)),
        share_override_tickets=_yes(s.get("share_override_tickets", True)),
        max_functional_jobs_to_schedule=int(s.get("max_functional_jobs_to_schedule")
                                            or d.max_functional_jobs_to_schedule),
        max_pending_tasks_per_job=int(s.get("max_pending_tasks_per_job") or d.max_pending_tasks_per_job),
        report_pjob_tickets=_yes(s.get("report_pjob_tickets", True)),
        policy_hierarchy=hierarchy,
        halftime=_float(s.get("halftime"), d.halftime),
        decay_minutes=_decay_minutes(s.get("halflife_decay_list")),
        usage_weights=Usage(_float(weights.get("cpu"), 1.0), _float(weights.get("mem"), 0.0),
                            _float(weights.get("io"), 0.0)) if isinstance(weights, dict) else d.usage_weights,
        compensation_factor=_float(s.get("compensation_factor"), d.compensation_factor),
        weight_priority=_float(s.get("weight_priority"), d.weight_priority),
        weight_urgency=_float(s.get("weight_urgency"), d.weight_urgency),
        weight_ticket=_float(s.get("weight_ticket"), d.weight_ticket),
        weight_waiting_time=_float(s.get("weight_waiting_time"), d.weight_waiting_time),
        weight_deadline=_float(s.get("weight_deadline"), d.weight_deadline),
        reprioritize_interval=_seconds(s.get("reprioritize_interval", "0:0:0"), 0.0))


def _decay_minutes(value):
    from gridtools.errors import ConfigError
    from gridtools.formats.sge.sched import decay_list
    try:
        return tuple(sorted(decay_list(value).items()))
    except ConfigError:
        return ()


def share_tree(conf):
    """The share tree as ShareNodes (None without one)."""
    from gridtools.sched.policy.inputs import ShareNode
    root = conf.single.get("sharetree")

    def node(item):
        return ShareNode(str(item.get("name")), int(item.get("shares") or 0),
                         tuple(node(c) for c in item.get("childnodes") or ()),
                         project=int(item.get("type") or 0) == 1)
    return node(root) if root else None


def members(conf, usage_of=None, more_users=()):
    """Users, projects and departments (Members) with their shares, tickets and usage.

    ``usage_of(kind, name)`` gives (decayed Usage, long-term Usage, in-project list[,
    decayed count of finished jobs]) of a user ("user") or project ("project");
    without it, usage is zero. ``more_users``:
    users without a user object who have usage (created automatically under
    enforce_user auto).
    """
    from gridtools.sched.policy.inputs import AutoUser, Member, Members
    gconf = conf.objects["conf"].get("global") or {}

    def member(kind, name, obj):
        found = usage_of(kind, name) if usage_of else (None, None, ())
        usage, long_term, in_projects = found[:3]
        extra = {"usage": usage, "long_term": long_term} if usage is not None else {}
        if len(found) > 3:
            extra["finished_jobs"] = float(found[3] or 0.0)
        return Member(name, int(obj.get("fshare") or 0), int(obj.get("oticket") or 0),
                      in_projects=tuple(in_projects or ()), **extra)
    users = [member("user", n, o) for n, o in conf.objects["user"].items()]
    projects = [member("project", n, o) for n, o in conf.objects["project"].items()]
    departments = [Member(n, int(o.get("fshare") or 0), int(o.get("oticket") or 0))
                   for n, o in conf.objects["userset"].items() if "DEPT" in (o.get("type") or ())]
    auto = None
    if str(gconf.get("enforce_user", "auto")).lower() == "auto":
        auto = AutoUser(int(gconf.get("auto_user_fshare") or 0), int(gconf.get("auto_user_oticket") or 0))
        fields = {"fshare": auto.fshare, "oticket": auto.oticket}
        users += [member("user", n, fields) for n in more_users if n not in conf.objects["user"]]
    return Members.of(users, projects, departments, auto)


def policy_view(conf, usage_of=None, more_users=()):
    """The PolicyView of a configuration (and the usage the daemon keeps)."""
    from gridtools.sched.snapshot import PolicyView
    return PolicyView(policy_config(conf), members(conf, usage_of, more_users), share_tree(conf))
