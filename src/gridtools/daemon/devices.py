"""GPU device indices: which of a host's GPUs each running task holds.

A host offers ``gpu=N`` (its complex_values, set by ``gridtools init`` to the
GPUs it found); the scheduler counts the amounts. When a task that asked for
``gpu`` starts, it gets that many distinct indices of ``0..N-1`` on each host
it was granted, none held by another running task there; they are free again
when the task is no longer running. The assignment is written beside the
task (``jobs/<id>/<n>/devices``), so a restarted daemon knows what is held;
the job sees its master host's indices in ``CUDA_VISIBLE_DEVICES``
(comma-separated) and ``SGE_HGR_gpu`` (blank-separated), as Grid Engine
shows granted resource map ids.

An HTCondor job that holds static slots gets the devices its slots publish
(their AssignedGPUs: a host's devices go to its static slots in slot order),
as HTCondor's starter gives a job its slot's devices: its slots are known
only once they are claimed, after the first pick, so the devices of the
pass's starts are picked again then (``follow_slots``), the slots' devices
first and other free devices of the host only where those are held already.
"""

import os

from gridtools.formats import spoolyaml
from gridtools.model.resources import PER_JOB, per_job
from gridtools.spool import jobs as jobstore
from gridtools.spool.files import atomic_write, read_text

#: the consumable whose amounts are device counts
GPU = "gpu"
FILE = "devices"


def capacity(conf, host):
    """The GPUs host ``host`` offers (its ``gpu`` complex value; 0 when it has none)."""
    from gridtools.formats.sge.complex import whole_amount
    obj = conf.objects["exechost"].get(host) or {}
    return whole_amount((obj.get("complex_values") or {}).get(GPU, 0))


def countable_complexes(conf):
    """Name in lower case -> name of the cell's machine resources
    (``formats.sge.complex.machine_resources``)."""
    from gridtools.formats.sge.complex import machine_resources
    return machine_resources(conf.single.get("complex") or {})


def countable(conf, host):
    """((name, amount), ...) of the machine resources (``countable_complexes``) that
    ``host`` offers in its complex_values: what its slot ads publish."""
    offered = (conf.objects["exechost"].get(host) or {}).get("complex_values") or {}
    if not offered:
        return ()
    from gridtools.formats.sge.complex import whole_amount
    return tuple(sorted((name, whole_amount(offered[name]))
                        for name in countable_complexes(conf).values() if name in offered))


def _asked(req, table):
    """(amount per slot or per job, consumable kind) of a task's gpu request (its
    Request: an HTCondor proc may ask for other amounts than its cluster's proc 0), or
    None."""
    cx = table.get(GPU)
    value = next((a.value for a in req.hard if cx is not None and a.name == cx.name), None)
    if cx is None or not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    amount = per_job(int(value)) if isinstance(value, PER_JOB) else int(value)
    return (amount, cx) if amount > 0 else None


def _read(job_id, number):
    text = read_text(os.path.join(jobstore.task_dir(job_id, number), FILE))
    try:
        data = spoolyaml.load(text) if text else {}
    except spoolyaml.SpoolFormatError:
        data = {}
    return {str(h): [int(i) for i in ids] for h, ids in (data or {}).items()}


def of_task(state, job, task, host):
    """The indices a running task holds on ``host`` (() when it holds none, or its
    assignment is not written yet)."""
    cache = state.view_cache.setdefault("devices", {})
    key = (job.id, task.number, task.start_time)
    found = cache.get(key)
    if found is None:
        found = _read(job.id, task.number)
        if found:
            cache[key] = found
    return tuple(found.get(host, ()))


def held(state, skip=()):
    """host -> set of indices held by running tasks (``skip``: (job, task) pairs left out)."""
    cache = state.view_cache.setdefault("devices", {})
    found, live = {}, set()
    for job, task in state.running_tasks():
        key = (job.id, task.number, task.start_time)
        if (job.id, task.number) in skip:
            continue
        live.add(key)
        if key not in cache:
            cache[key] = _read(job.id, task.number)
        for host, ids in cache[key].items():
            found.setdefault(host, set()).update(ids)
    for key in [k for k in cache if k not in live and (k[0], k[1]) not in skip]:
        del cache[key]
    return found


def assign(state, job, number, granted, table, preferred=None, busy=None):
    """Pick the task's device indices on each granted host and write them beside it;
    returns host -> [indices] ({} when the job asked for no gpu). ``preferred``: host ->
    indices taken first when free (its slots' devices); ``busy``: host -> indices held
    by others (default: those of the other running tasks)."""
    from gridtools.daemon.view import task_request
    from gridtools.sched.resources import per_grant
    asked = _asked(task_request(job, number, state), table)
    if asked is None:
        return {}
    amount, cx = asked
    if busy is None:
        busy = held(state, skip={(job.id, number)})
    chosen = {}
    for i, (_queue, host, slots) in enumerate(granted):
        need = int(per_grant(cx, amount, int(slots), i == 0))
        count = capacity(state.config, host)
        order = dict.fromkeys([d for d in (preferred or {}).get(host, ()) if d < count] + list(range(count)))
        free = [d for d in order if d not in busy.get(host, set()) and d not in chosen.get(host, [])]
        chosen.setdefault(host, []).extend(free[:need])
    atomic_write(os.path.join(jobstore.task_dir(job.id, number), FILE), spoolyaml.dump(chosen),
                 fsync=False)
    cache = state.view_cache.get("devices") or {}
    for key in [k for k in cache if (k[0], k[1]) == (job.id, number)]:
        del cache[key]
    return chosen


def follow_slots(state, starts, table):
    """Pick again the devices of tasks that just started, now that their slots are
    known: ``starts``: (job, number, granted, host -> their slots' device indices)
    each; returns [host -> [indices]] in their order. The devices of the other running
    tasks stay theirs; none of these tasks keeps what the first pick gave it."""
    busy = held(state, skip={(job.id, number) for job, number, _granted, _pref in starts})
    found = []
    for job, number, granted, preferred in starts:
        chosen = assign(state, job, number, granted, table, preferred, busy)
        for host, ids in chosen.items():
            busy.setdefault(host, set()).update(ids)
        found.append(chosen)
    return found


#: the variables ``environment`` sets
VARIABLES = ("CUDA_VISIBLE_DEVICES", "SGE_HGR_gpu")


def environment(chosen, master):
    """The variables that tell a job its devices on its master host."""
    ids = chosen.get(master)
    if not ids:
        return {}
    return {"CUDA_VISIBLE_DEVICES": ",".join(map(str, ids)), "SGE_HGR_gpu": " ".join(map(str, ids))}
