"""Late materialization: a cluster condor_submit made a factory (a description that
gives ``max_materialize`` or ``max_idle``, ``-factory``: ``formats.condor.jobad``)
enters the queue a few procs at a time (the job description's ``materialize``:
JobMaterializeLimit, the first, bounded by its procs; JobMaterializeMaxIdle in its
ads: the second), as HTCondor's schedd materializes the procs of a job
factory. (A DAG node's cluster too, as HTCondor's DAGMan submits it: its
manager reads the cluster's ClusterRemove event as the end of the node's job.)

Its procs come into the queue in order: the next one whenever fewer than
max_materialize of those already in it are still there (idle, running or held)
and fewer than JobMaterializeMaxIdle of them are idle. A proc that is not in the
queue yet is nowhere: condor_q and qstat do not list it, the scheduler does not see
it (``model.job.Job.made``), and its submit event (000) is written to the user log
when it comes in. ``job.condor["materialized"]`` counts the procs made so far; it is
kept with the job's state, so a daemon that starts again goes on where it was. A
removal of the cluster removes the procs not yet made with it. A limit that is not
a number above 0 sets none; a cluster whose two limits are both none is made whole.

As HTCondor's schedd logs a job factory, the user log has a ClusterSubmit event
(035, proc -1) before the first procs' submit events, and a ClusterRemove event
(036) once the last proc left the queue: how many procs were made from how many
items (0 for a ``queue`` of a count), and Complete, or Incomplete when the cluster
was removed before all were made.

``taken_in`` is called when the job is taken in, ``advance`` when it may have room
for more procs; ``advance_all`` looks at the clusters that changed since it last
looked (``state.factories``: job id -> the job's version then), and at those that
left the queue.
"""

from gridtools.daemon import condorjob
from gridtools.formats.condor.userlog import EventType
from gridtools.model.job import TaskState

#: the attributes of the most procs in the queue (the job description's ``materialize``,
#: from max_materialize, which ``jobads`` puts in the queue's ads) and of the most of them
#: idle, in the order of ``limits``; condor_qedit of the cluster may change them
LIMIT_ATTRS = ("JobMaterializeLimit", "JobMaterializeMaxIdle")


def limits(job):
    """(most procs in the queue, most of them idle) of a cluster materialized late (None
    for a limit it does not set), or None for any other job. Read once per description."""
    held = job.spec_cache()
    if held.factory is None:
        found = ()
        if "materialize" in job.spec and condorjob.is_condor(job):
            ad = condorjob.proc_ad(job, job.numbers()[-1])      # (the last proc: edits of the cluster reach it)
            values = tuple(_limit(ad.eval(attr)) if attr in ad else None for attr in LIMIT_ATTRS)
            if values != (None, None):
                found = values
        held.factory = found
    return held.factory or None


def _limit(value):
    if type(value) is float and value == value and value not in (float("inf"), float("-inf")):
        value = int(value)
    return value if type(value) is int and value > 0 else None


def taken_in(state, job, now):
    """A new job: a cluster materialized late starts with no proc made, then as many as
    its limits let in (their events are written): at most the procs the intake counted
    against the cell's job limits. False for any other job."""
    if limits(job) is None:
        return False
    job.condor["materialized"] = 0
    state.factories[job.id] = None
    condorjob.hold_procs(job, now, ())      # (each proc held or idle as its own ad says)
    condorjob.cluster_event(state, job, EventType.CLUSTER_SUBMIT, condorjob.cluster_submit_info(job), now)
    from gridtools.daemon import intake
    counted = job.spec.get("materialize")       # (what the intake held to the limits, if not all)
    room = None if not counted or intake.job_limits(state, job.spec) is None else int(counted)
    advance(state, job, now, room)
    return True


def advance(state, job, now, room=None):
    """Bring the next procs of a cluster into the queue while its limits let them in,
    and no more than ``room`` (None: any number); their submit events (and, under a
    hold, their hold events) are written. (procs made, whether
    ``room`` held back some its limits let in). A proc comes in held or idle as its own
    ad says (``condorjob.hold_procs``), as HTCondor's schedd takes each proc's JobStatus
    from its ad when it materializes it."""
    found = limits(job)
    made = job.condor.get("materialized")
    if found is None or made is None or job.deleted:
        return 0, False
    numbers = job.numbers()
    total = len(numbers)
    most, most_idle = found
    in_queue = idle = 0
    held = condorjob.entering_held(job)
    for number in numbers[:made]:
        task = job.tasks.get(number)
        if task is None:
            in_queue += 1
            idle += not job.hold
        elif task.state is not TaskState.FINISHED:
            in_queue += 1
            idle += task.state is TaskState.PENDING and not (job.hold or task.hold)
    more = made
    while more < total and (most is None or in_queue < most) and (most_idle is None or idle < most_idle):
        if room is not None and more - made >= room:
            return _made(state, job, made, more, now), True
        more += 1
        in_queue += 1
        idle += not held(numbers[more - 1])
    return _made(state, job, made, more, now), False


def _made(state, job, made, more, now):
    """Procs ``made`` to ``more`` (of the job's numbers) came into the queue: their events;
    how many they are."""
    if more == made:
        return 0
    job.condor["materialized"] = more
    state.touch(job)
    new = list(job.numbers()[made:more])
    condorjob.submit_events(state, job, new, now)
    condorjob.hold_new_procs(job, new, now)
    due = condorjob.held_on_submit(job, new)
    if due:
        condorjob.held_events(state, job, due, now)
    condorjob.schedule_crons(state, job, now, numbers=new)
    condorjob.complete_noops(state, job, new, now)
    return len(new)


def advance_all(state, now):
    """``advance`` each cluster materialized late that changed since the last look, as far
    as MAX_JOBS_SUBMITTED and MAX_JOBS_PER_OWNER leave room (a cluster they held back is
    looked at again each time, until they let its procs in); one whose last proc left
    the queue has its ClusterRemove event and is looked at no more. True when procs
    came in."""
    from gridtools.daemon import intake
    factories = state.factories
    came, counted = False, False
    for job_id, seen in list(factories.items()):
        job = state.jobs.get(job_id)
        if job is None:
            del factories[job_id]
            continue
        if seen == job.version:
            continue
        if job.is_finished():
            removed(state, job, now)
            del factories[job_id]
            continue
        room = intake.queue_room(state, job.spec, fresh=not counted)
        counted = counted or room is not None
        new, held_back = advance(state, job, now, room)
        if new:
            came = True
            intake.counted_in(job.spec["owner"], new)
        factories[job_id] = None if held_back else job.version
    if came:
        state.need_schedule = True
    return came


def removed(state, job, now):
    """The ClusterRemove event of a cluster whose last proc left the queue."""
    made, total = job.condor.get("materialized", 0), len(job.numbers())
    items = int(job.spec.get("materialize_items") or 0)
    rows = items if made >= total else -(-made * items // total)      # (the items begun)
    info = {"NextProcId": made, "NextRow": rows, "Completion": 1 if made >= total else 0}
    condorjob.cluster_event(state, job, EventType.CLUSTER_REMOVE, info, now)


def note_loaded(state, job):
    """A job read back from the spool: look after it when it is a cluster materialized
    late that is still in the queue (its ClusterRemove event may be due)."""
    made = job.condor.get("materialized") if job.condor else None
    if made is not None and not job.is_finished():
        state.factories[job.id] = None
