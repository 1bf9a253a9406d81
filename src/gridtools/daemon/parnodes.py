"""HTCondor's parallel universe: one process per granted slot.

A ``universe = parallel`` job with ``machine_count = N`` holds N slots of the
parallel environment ``mpi`` (``formats.condor.spec``). When it starts, its
executable runs once per slot, as HTCondor's shadow starts it on every
claimed slot: node 0 is the job's own task (on the master, the first slot of
its ``PE_HOSTFILE``), nodes 1 .. N-1 are tasks inside it started on the
other slots in ``PE_HOSTFILE`` order (``jobs/<id>/<n>/pe.<k>``, k the node
number in the first run, counted on from an earlier run's folders in a later
one), looked after and accounted as the tasks of ``qrsh -inherit`` are (see
``daemon.petask``; on a host an execution daemon serves, that daemon starts
them). Each node's environment has ``_CONDOR_PROCNO`` (its number) and
``_CONDOR_NPROCS`` (N), and the placeholder condor_submit left for
``$(Node)`` (``#pArAlLeLnOdE#``) is replaced by the node number in its
command, arguments, environment, working directory and file names.

The job ends as HTCondor's parallel universe ends by default: when node 0
exits, the other nodes still running are ended, and once they are gone (at
most NODES_GRACE seconds later) the job ends with node 0's exit status, so
that its user log has every node's 015 before the job's 005, as HTCondor's
shadow writes them. With ``ParallelShutdownPolicy = "WAIT_FOR_ALL"`` in its ad
it ends once every node has exited of its own accord (``waits``).
"""

import os
import time

#: seconds a job whose node 0 exited waits for its other nodes to end when told to
NODES_GRACE = 30.0

from gridtools.formats.condor.jobad import NODE_PLACEHOLDER
from gridtools.formats.condor.jobattrs import PARALLEL


def is_parallel(job):
    """True for an HTCondor parallel universe job."""
    return bool(job.spec.get("condor_ad")) and job.spec.get("universe") == PARALLEL


def node_slots(granted):
    """(queue, host) of every node in PE_HOSTFILE order: one per granted slot."""
    return [(queue, host) for queue, host, slots in granted for _ in range(int(slots))]


def _put(value, node):
    return value.replace(NODE_PLACEHOLDER, node) if isinstance(value, str) else value


def for_node(plan, node, count):
    """Make ``plan`` (an HTCondor job's, ``condorjob.adjust_plan``) node ``node``'s of
    ``count``."""
    text = str(node)
    plan["exec"] = _put(plan["exec"], text)
    plan["argv"] = [_put(a, text) for a in plan["argv"]]
    for key in ("stdin", "stdout", "stderr", "cwd"):
        plan[key] = _put(plan.get(key), text)
    env = {k: _put(v, text) for k, v in plan["env"].items()}
    env.update(_CONDOR_PROCNO=text, _CONDOR_NPROCS=str(count))
    plan["env"] = env
    scratch = plan.get("scratch")
    if isinstance(scratch, dict):
        plan["scratch"] = dict(scratch, input=[_put(p, text) for p in scratch.get("input") or ()],
                               output=None if scratch.get("output") is None else
                               [_put(p, text) for p in scratch["output"]])
    return plan


def start_nodes(state, dispatcher, job, number, now):
    """Start nodes 1 .. N-1 of a parallel universe job whose task ``number`` (node 0)
    was just launched."""
    from gridtools.daemon import jobside, petask
    from gridtools.exec import tasklock
    from gridtools.formats import spoolyaml
    from gridtools.spool import jobs as jobstore
    from gridtools.spool.files import atomic_write, makedirs
    task = job.task(number)
    slots = node_slots(task.granted)
    folder = jobstore.task_dir(job.id, number)
    known = petask.tasks_of(state)
    sizes = petask.job_sizes(task.granted)
    base = max([n for n, _path in petask.folders(folder)] + [0])   # (an earlier run's stay)
    claimed = _claimed_slots(state, job, number, slots)
    for node, (queue, host) in enumerate(slots[1:], 1):
        tdir = os.path.join(folder, f"pe.{base + node}")
        try:
            makedirs(tdir, jobstore.DIR_MODE)      # (others pass through, list nothing)
            plan = dispatcher.build_plan(job, number, [[queue, host, 1]], task.pe)
            for_node(plan, node, len(slots))
            plan["env"].update(sizes)           # the job's, not those of the node's one slot
            plan.update(prolog=None, epilog=None, pe_start=None, pe_stop=None, result_dir=tdir,
                        pe_task=True)
            before = plan["env"].get("TMPDIR")
            petask.own_tmpdir(plan, job, number, tdir)
            if plan["env"].get("_CONDOR_SCRATCH_DIR") == before:
                plan["env"]["_CONDOR_SCRATCH_DIR"] = plan["env"]["TMPDIR"]
            jobside.add_files(plan, job, number, state.condor, claimed[node], first=False, node=node)
            info = {"host": host, "start": now, "queue": queue, "node": node}
            atomic_write(os.path.join(tdir, petask.INFO_FILE), spoolyaml.dump(info), fsync=False)
        except Exception as exc:  # noqa: BLE001 - one node that cannot start must not stop the rest
            state.log(f"E|job {job.id}.{number}: cannot start node {node} on {host}: {exc!r}")
            continue
        plan["launch"] = tasklock.launch_token(now)
        known[(job.id, number, base + node)] = dict(info, dir=tdir)
        dispatcher.execution.run_plan(plan, tdir, host)
    if len(slots) > 1:
        state.log(f"I|job {job.id}.{number}: nodes 1..{len(slots) - 1} of {len(slots)} started")


def _claimed_slots(state, job, number, slots):
    """The slot each node holds (None where it is not known), in the order of ``slots``
    (``node_slots``): the slots the task claimed, each node taking the first one of
    its host no earlier node took."""
    machines = state.condor.machines if state.condor is not None else None
    return node_slot_names(machines.tasks.get((job.id, number)) or () if machines is not None else (), slots)


def node_slot_names(names, slots):
    """The slot of each node, in the order of ``slots`` (``node_slots``), from the names of
    the slots the task claimed: each node takes the first one of its host no earlier node
    took (None where there is none)."""
    names, found = list(names), []
    for _queue, host in slots:
        name = next((n for n in names if n.rpartition("@")[2] == host), None)
        if name is not None:
            names.remove(name)
        found.append(name)
    return found


def _policy(job, number):
    from gridtools.daemon import condorjob
    value = condorjob.proc_ad(job, number).eval("ParallelShutdownPolicy")
    return value.strip().upper() if isinstance(value, str) else ""


#: what a result of node 0 says when it did not exit of its own accord
_STOPPED = ("signal", "failed", "deleted", "requeue", "never_started", "error_state")


def node_ended(state, job, number, node, result):
    """Node ``node`` of task ``number`` exited with ``result``: event 015 in its user log
    (a node that never started writes none)."""
    from gridtools.daemon import condorjob
    if job is not None and is_parallel(job) and not result.get("never_started") \
            and not result.get("error_state"):
        condorjob.node_ended(state, job, number, node, result)


def first_node_ended(state, job, task, result):
    """Node 0 (the task) exited with ``result``: event 015 for it, once per run (a
    WAIT_FOR_ALL job's node 0 is looked at again at every pass while the others run)."""
    if not is_parallel(job):
        return
    from gridtools.daemon import condorjob
    mine = condorjob.task_info(job, task.number)
    if mine.get("node0_ended") != task.start_time:
        mine["node0_ended"] = task.start_time
        job.changed()
        node_ended(state, job, task.number, 0, result)


def waits(state, job, task, result):
    """True while node 0 of a parallel job exited of its own accord and other nodes still
    run: those of a WAIT_FOR_ALL job run on; those of any other are told to stop, and the
    job waits (NODES_GRACE at most) until they are gone, so that their 015 come before
    its 005. A node 0 that was ended (removed, deleted, held, evicted, killed by a
    signal) or failed to start never waits: its job ends, and so do the other nodes
    (``concluding`` says how)."""
    if not is_parallel(job) or task.deleting or job.deleted or any(result.get(k) for k in _STOPPED):
        return False
    mine = ((job.condor or {}).get("tasks") or {}).get(str(task.number)) or {}
    if mine.get("vacating") or mine.get("removed") or mine.get("gone"):
        return False
    from gridtools.daemon import petask
    tasks = petask.tasks_of(state)
    running = [key for key in tasks if key[:2] == (job.id, task.number)]
    if not running:
        return False
    if _policy(job, task.number) == "WAIT_FOR_ALL":
        return True
    for key in running:
        petask.end_task(tasks[key])
    ended = result.get("end_time")
    return isinstance(ended, (int, float)) and time.time() - float(ended) < NODES_GRACE


def _waited(job, task, result):
    """True when ``result`` is that of node 0 of a parallel job that exited of its own
    accord (its job ends with the last node: it waited for the others)."""
    return is_parallel(job) and not any(result.get(k) for k in _STOPPED) and not result.get("requeue")


def concluding(job, task, result, now):
    """Node 0's ``result`` made the job's end (``waits`` said it waits no more). Node 0
    that exited of its own accord may have done so long before (a WAIT_FOR_ALL job's,
    or one whose other nodes took a while to stop): when the job was then
    held (condor_hold, PeriodicHold), the job goes back to wait, held, as any held job
    does (and runs every node again once released), rather than ending with node 0's
    exit; it ends now. Otherwise its end is the last node's (the event 005, CompletionDate
    and RemoteWallClockTime), as HTCondor's parallel shadow ends the job after its last
    node. Changes ``result``; node 0's own accounting record was made before."""
    mine = ((job.condor or {}).get("tasks") or {}).get(str(task.number)) or {}
    if mine.pop("node0_ended", None) is not None:
        job.changed()
    if not _waited(job, task, result):
        return
    if mine.get("vacating"):
        result.update(requeue=True, end_time=now)
        return
    if task.deleting or job.deleted or mine.get("removed") or mine.get("gone"):
        return
    result["end_time"] = max([float(result.get("end_time") or 0)] + _node_ends(job, task))


def _node_ends(job, task):
    """The end times of the nodes of the task's current run (their result files)."""
    from gridtools.daemon import petask
    from gridtools.formats import spoolyaml
    from gridtools.spool import jobs as jobstore
    from gridtools.spool.files import read_text
    ends = []
    for _number, tdir in petask.folders(jobstore.task_dir(job.id, task.number)):
        text = read_text(os.path.join(tdir, jobstore.RESULT_FILE))
        try:
            found = spoolyaml.load(text) if text else None
        except spoolyaml.SpoolFormatError:
            continue
        if isinstance(found, dict) and isinstance(found.get("end_time"), (int, float)) and \
                float(found.get("start_time") or 0) >= float(task.start_time or 0) - 1:
            ends.append(float(found["end_time"]))
    return ends
