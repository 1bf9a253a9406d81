"""The daemon's admission of a submitted job: Grid Engine's rules re-checked at intake.

qsub checks the same rules (``formats.sge.admission``) before it queues a
job; the daemon checks them again against its own configuration, since a
request file is untrusted. A job the rules refuse is not taken in: nothing
is queued, its id is free again, and the answer to its request is the
refusal in qsub's words (qsub and condor_submit wait for it while the
daemon marks that it checks rules, ``spool.daemonconf.mark_checks``). Under ``enforce_user auto`` a
user's first job creates their user object from the ``auto_user_*``
defaults (managers excepted), and each later job moves its ``delete_time``
on. A job's department is fixed here, from the DEPT usersets of the moment.
Jobs into an advance reservation are checked by ``arreq``.
"""

from gridtools.daemon import arreq, auth, confstore
from gridtools.formats.sge import admission
from gridtools.model import shared
from gridtools.sched import inputs
from gridtools.spool import jobs as jobstore


#: the department of a job whose owner no DEPT userset lists; a description names its
#: department only when it is another one
DEFAULT_DEPARTMENT = "defaultdepartment"

#: seconds a user's delete_time may lag behind before a new job moves it on (each move
#: rewrites the user object and reloads the configuration)
REFRESH = 3600


def _global(state):
    return state.config.objects["conf"].get("global") or {}


def view(state):
    """The admission rules' view of the daemon's configuration and jobs."""
    conf = state.config

    def member(name, user, group):
        return name in inputs.userlists_of(conf, user, group)

    def jobs_of(user):
        return sum(1 for i in state.live_ids() if state.jobs[i].spec["owner"] == user)

    return admission.CellView(conf=_global(state), user=conf.objects["user"].get,
                              project=conf.objects["project"].get, member=member, jobs_of=jobs_of,
                              jobs_total=lambda: len(state.live_ids()))


def refusal(state, spec):
    """Grid Engine's admission rules for a new job not yet taken in (``spec``, which
    they may give its owner's default project): the refusal's words, None when they
    let it in. The job is refused before it is stored, as Grid Engine refuses it at
    submit, so that a command waiting for the answer says the refusal."""
    return admission.check(spec, view(state))


def cell_names(state):
    """The names of the cell's queues, PEs, checkpointing environments and complexes, as
    ``formats.jobcheck.names_refusal`` looks them up, from the daemon's loaded
    configuration (kept until it changes: a submit costs lookups only)."""
    cached = state.view_cache.get("names")
    if cached is not None and cached[0] == state.config_generation:
        return cached[1]
    from gridtools.daemon import view
    from gridtools.formats import jobcheck
    objects = state.config.objects
    parts = view.config_parts(state)
    groups, table, queues = parts["groups"], parts["complexes"], objects["queue"]

    def queue_hosts(name):
        hosts = set()
        for entry in (queues.get(name) or {}).get("hostlist") or ():
            if entry.startswith("@"):
                hosts |= groups.get(entry, set())
            elif entry.upper() != "NONE":
                hosts.add(entry)
        return hosts

    def complex_name(name):
        cx = table.get(str(name))
        return cx.name if cx is not None else None

    names = jobcheck.CellNames(tuple(queues), queue_hosts, tuple(objects["pe"]),
                               frozenset(objects["ckpt"]), complex_name)
    state.view_cache["names"] = (state.config_generation, names)
    return names


def names_refusal(state, req, new_job=False):
    """Grid Engine's refusal of a job whose requests name queues, PEs, checkpointing
    environments or resources the cell does not have (``formats.jobcheck.names_refusal``:
    what qsub's ``check_request`` refuses before it sends a job), checked again here
    against the daemon's own configuration, since a request file is its client's word;
    None when there is none."""
    from gridtools.formats import jobcheck
    return jobcheck.names_refusal(req, cell_names(state), new_job)


def _fraction(text):
    """True when ``text`` is a number that is not whole."""
    try:
        value = float(str(text).strip())
    except ValueError:
        return False
    return value == value and abs(value) != float("inf") and value != int(value)


def request_refusal(state, resources, own=(), whole=True):
    """The rules qsub and qalter apply to a job's resource requests (``resources``: its
    hard and soft ones) before they send them, applied again here, since a request file
    is its client's word: no complex whose ``requestable`` is NO (``own``: the names the
    daemon itself derives an HTCondor job's requests of), no negative amount of a
    consumable (it would add to what a host offers everyone else), and with ``whole``
    no part of one of an INT consumable (an HTCondor job's is rounded up, see
    ``sched.inputs.parse_value``). The refusal in qsub's words, or None."""
    from gridtools.daemon import view
    from gridtools.model.resources import Consumable, CxType, Requestable
    table = view.config_parts(state)["complexes"]
    for kind in ("hard", "soft"):
        for name, text in ((resources or {}).get(kind) or {}).items():
            cx = table.get(str(name))
            if cx is None:
                continue
            if cx.requestable is Requestable.NO and cx.name not in own:
                return f'resource "{cx.name}" configured as non requestable'
            if cx.consumable is not Consumable.NO:
                amount = inputs.value_or_none(cx, text)
                if isinstance(amount, (int, float)) and not isinstance(amount, bool) and amount < 0:
                    return f'attribute "{cx.name}" is consumable but has a negative value'
                if whole and cx.type is CxType.INT and _fraction(text):
                    from gridtools.formats.values import not_a_value
                    return not_a_value(cx.name, "INT")
    return None


def accept(state, dispatcher, job, now):
    """What the cell does with a job just taken in (its admission already checked,
    ``refusal``): its department, its owner's user object, its advance reservation."""
    spec = dict(job.spec)
    department = inputs.department_of(state.config, spec["owner"], spec.get("group", ""))
    if department != DEFAULT_DEPARTMENT:
        spec["department"] = department
    if spec != job.spec:
        jobstore.write_spec(spec)
        job.spec = shared.description(spec)
        job.cache.clear()
    _auto_user(state, spec["owner"], now)
    arreq.accept_job(state, dispatcher, job, now)


def _auto_user(state, user, now):
    gconf = _global(state)
    if str(gconf.get("enforce_user", "auto")).lower() != "auto" or auth.is_manager(state, user):
        return
    obj = state.config.objects["user"].get(user)
    fresh = admission.auto_user(user, gconf, now)
    if obj is None:
        confstore.write(state, "user", user, fresh)
    elif obj.get("delete_time") and fresh["delete_time"] > int(obj["delete_time"]) + REFRESH:
        confstore.write(state, "user", user, dict(obj, delete_time=fresh["delete_time"]))
