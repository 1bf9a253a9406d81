"""OtherJobRemoveRequirements: a removed job that takes other jobs with it.

As HTCondor's schedd, when a proc whose ad has ``OtherJobRemoveRequirements``
(a string holding an expression; a DAG manager job's is ``DAGManJobId =?=
cluster``) leaves the queue as removed, the live procs of its owner's
other HTCondor jobs that the expression matches are removed too. ``note``
(called with the removal's user log events) keeps what is to be done;
``carry_out`` does it at the end of the loop's pass, where it may signal
running tasks.
"""

from gridtools.daemon.condorjob import is_condor, proc_ad, task_info


def note(state, job, numbers):
    """Removed tasks whose ads name other jobs to remove with them
    (``OtherJobRemoveRequirements``, as a DAG manager's does): ``carry_out`` removes
    those at the end of the pass."""
    texts = job.spec["condor_ad"] if isinstance(job.spec["condor_ad"], list) else [job.spec["condor_ad"]]
    texts = texts + [str(job.condor.get("edits") or "")]
    if not any("otherjobremoverequirements" in (text or "").lower() for text in texts):
        return                              # (no ad to build for each task of most jobs)
    for number in numbers:
        text = proc_ad(job, number).eval("OtherJobRemoveRequirements")
        if isinstance(text, str) and text.strip():
            state.other_removals.append((job.id, number, job.spec.get("owner"), text.strip()))


def carry_out(state, dispatcher, now):
    """As HTCondor's schedd, when a job whose ad has ``OtherJobRemoveRequirements`` was
    removed, the live tasks of its owner's other HTCondor jobs that the expression (a
    string) matches are removed too, with HTCondor's RemoveReason: a DAG manager's
    (``DAGManJobId =?= cluster``) takes its node jobs with it also when it was held and
    could not remove them itself. The number of tasks removed."""
    from gridtools.classad import parse
    from gridtools.daemon import apply
    from gridtools.model.job import TaskState
    pending, state.other_removals = state.other_removals, []
    changed = 0
    for job_id, number, owner, text in pending:
        try:
            expr = parse(text)
        except Exception:  # noqa: BLE001 - any text that is no expression
            state.log(f"W|job {job_id}.{number - 1}: its OtherJobRemoveRequirements cannot be "
                      f"read: {text}")
            continue
        reason = (f"removed because <OtherJobRemoveRequirements = {text}> fired when job "
                  f"({job_id}.{number - 1}) was removed")
        for other in list(state.jobs.values()):
            if other.id == job_id or other.is_finished() or not is_condor(other) \
                    or other.spec.get("owner") != owner:
                continue
            for task_number in other.numbers():
                if other.state_of(task_number) is TaskState.FINISHED \
                        or expr.eval(proc_ad(other, task_number)) is not True:
                    continue
                task_info(other, task_number)["remove_reason"] = reason
                apply.delete_task(state, dispatcher, other, task_number, now, False)
                changed += 1
            if other.is_finished():
                state.note_finished(other.id)
    if changed:
        state.need_schedule = True
    return changed
