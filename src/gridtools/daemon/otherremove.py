"""OtherJobRemoveRequirements: a removed job that takes other jobs with it.

As HTCondor's schedd, when a proc whose ad has ``OtherJobRemoveRequirements``
(a string holding an expression; a DAG manager job's is ``DAGManJobId =?=
cluster``) leaves the queue as removed, the live procs of its owner's
other HTCondor jobs that the expression matches are removed too. ``note``
(called with the removal's user log events) keeps what is to be done;
``carry_out`` does it at the end of the loop's pass, where it may signal
running tasks.

The work costs the daemon no more than the owner's live procs once per
distinct expression: the removed procs that carry the same text (the procs
of one cluster do) are one piece of work, its expression parsed once; a job
whose procs share every attribute the expression reads (``SHARED``: it has
one ad text and those attributes hold constants) is matched by one ad for all
its procs. A pass evaluates at most ``EVALS_PER_PASS`` ads; what is left is
carried to the next pass (which comes at once), over the jobs the owner had
when the work began.
"""

from gridtools.daemon.condorjob import is_condor, proc_ad, task_info

#: the most ads one pass evaluates an OtherJobRemoveRequirements expression against
EVALS_PER_PASS = 2000
#: attributes every proc of a job with one ad text has alike when they hold constants
#: (the daemon's own state attributes, ProcId and GlobalJobId differ by proc)
SHARED = frozenset({"clusterid", "owner", "user", "dagmanjobid", "dagnodename",
                    "dagparentnodenames", "dagmannodeslog", "jobbatchname", "jobuniverse", "cmd",
                    "iwd", "accountinggroup", "acctgroup", "acctgroupuser"})
#: the ads evaluated so far (a count the daemon's tests read)
EVALUATIONS = [0]
#: the most characters of an expression that cannot be read that the messages file gets
LOGGED_TEXT = 200


def note(state, job, numbers):
    """Removed tasks whose ads name other jobs to remove with them
    (``OtherJobRemoveRequirements``, as a DAG manager's does): ``carry_out`` removes
    those at the end of the pass."""
    texts = job.spec["condor_ad"] if isinstance(job.spec["condor_ad"], list) else [job.spec["condor_ad"]]
    texts = texts + [str(job.condor.get("edits") or "")]
    if not any("otherjobremoverequirements" in (text or "").lower() for text in texts):
        return                              # (no ad to build for each task of most jobs)
    from gridtools.daemon.condorjob import attr_value
    for number in numbers:
        text = attr_value(job, proc_ad(job, number), "OtherJobRemoveRequirements")
        if isinstance(text, str) and text.strip():
            state.other_removals.append((job.id, number, job.spec.get("owner"), text.strip()))


def _matches(state, piece, ad):
    """Whether ``piece``'s expression is true of ``ad``. An evaluation that goes over its
    budget (classad(5), COST) gives the whole piece up: the expression is that costly for
    each of the owner's procs, and evaluating it for thousands of them would hold the
    daemon up for every user; the messages file says so."""
    from gridtools.classad.budget import over_budget
    before = over_budget()
    found = piece.expr.eval(ad) is True
    if over_budget() != before:
        piece.costly = True
        state.log(f"W|OtherJobRemoveRequirements of {piece.owner}'s removed jobs went over its budget of "
                  "evaluation: no other job is removed by it")
    return found


class _Work:
    """The removals one expression asks for: the removed procs that carry it (in the
    order they were removed: the first that is not of a job names the reason of that
    job's removal), the owner's jobs to look at and how far that got."""

    def __init__(self, owner, text, expr):
        self.owner, self.text, self.expr = owner, text, expr
        self.removers = []                  # (job id, task number)
        self.shared = _reads_only_shared(expr)
        self.jobs = None                    # the owner's live HTCondor jobs, when begun
        self.at = 0                         # the index in ``jobs`` of the job looked at
        self.task_at = 0                    # the index of its task looked at
        self.costly = False                 # an evaluation went over its budget: given up

    def reason(self, other_id):
        """HTCondor's RemoveReason for a proc of job ``other_id`` (None: only procs of that
        job carry the expression, and a job does not remove itself)."""
        for job_id, number in self.removers:
            if job_id != other_id:
                return (f"removed because <OtherJobRemoveRequirements = {self.text}> fired when "
                        f"job ({job_id}.{number - 1}) was removed")
        return None


def _reads_only_shared(expr):
    """Whether the expression reads nothing but SHARED attributes (of its own ad or of
    none: it is evaluated without a target) and calls no function."""
    from gridtools.classad.compound import Cond, Elvis, Unary
    from gridtools.classad.nodes import Attr, Binary, Literal, Paren, Scoped
    todo = [expr]
    while todo:
        node = todo.pop()
        kind = node.__class__
        if kind is Attr:
            if node.key not in SHARED:
                return False
        elif kind is Scoped:
            if node.scope.lower() not in ("my", "target") or node.key not in SHARED:
                return False
        elif kind not in (Literal, Binary, Paren, Unary, Cond, Elvis):
            return False
        todo.extend(node.children())
    return True


def _one_ad_for_all(job, ad):
    """Whether every proc of ``job`` has what ``ad`` (one proc's) holds of SHARED: one ad
    text for all and each SHARED attribute a constant (or absent)."""
    from gridtools.classad.nodes import Literal
    if isinstance(job.spec.get("condor_ad"), list):
        return False
    for name in SHARED:
        expr = ad.lookup(name)
        if expr is not None and expr.__class__ is not Literal:
            return False                    # it may read what differs by proc (ProcId)
    return True


def _plan(state, pending):
    """The work of the removals noted (job id, task, owner, text): one piece per owner
    and expression text, its expression parsed once."""
    from gridtools.classad import parse
    work, by_text = [], {}
    for job_id, number, owner, text in pending:
        key = (owner, text)
        piece = by_text.get(key)
        if key not in by_text:
            try:
                piece = _Work(owner, text, parse(text))
            except Exception:  # noqa: BLE001 - any text that is no expression
                shown = text if len(text) <= LOGGED_TEXT else text[:LOGGED_TEXT] + "..."
                state.log(f"W|job {job_id}.{number - 1}: its OtherJobRemoveRequirements cannot be "
                          f"read: {shown}")
                piece = None
            else:
                work.append(piece)
            by_text[key] = piece
        if piece is not None:
            piece.removers.append((job_id, number))
    return work


def carry_out(state, dispatcher, now):
    """As HTCondor's schedd, when a job whose ad has ``OtherJobRemoveRequirements`` was
    removed, the live tasks of its owner's other HTCondor jobs that the expression (a
    string) matches are removed too, with HTCondor's RemoveReason: a DAG manager's
    (``DAGManJobId =?= cluster``) takes its node jobs with it also when it was held and
    could not remove them itself. The number of tasks removed in this pass (see the
    module docstring for what one pass does)."""
    pending, state.other_removals = state.other_removals, []
    work = [item for item in pending if isinstance(item, _Work)]        # carried over
    work += _plan(state, [item for item in pending if not isinstance(item, _Work)])
    budget = [EVALS_PER_PASS]
    changed = 0
    while work and budget[0] > 0:
        changed += _do(state, dispatcher, work[0], budget, now)
        if work[0].jobs is not None and work[0].at >= len(work[0].jobs):
            work.pop(0)
    state.other_removals = work + state.other_removals     # (removals noted meanwhile after)
    if changed:
        state.need_schedule = True
    return changed


def _do(state, dispatcher, piece, budget, now):
    """Go on with one piece of work until it is done or the pass's budget is spent."""
    from gridtools.daemon import apply
    from gridtools.model.job import TaskState
    if piece.jobs is None:
        piece.jobs = [job.id for job in state.jobs.values()
                      if is_condor(job) and not job.is_finished() and job.spec.get("owner") == piece.owner]
    changed = 0
    while piece.at < len(piece.jobs) and budget[0] > 0:
        other = state.jobs.get(piece.jobs[piece.at])
        reason = piece.reason(other.id) if other is not None and not other.is_finished() else None
        numbers = [] if reason is None else list(other.made())
        chosen = []
        if numbers and piece.shared and piece.task_at == 0:
            live = [n for n in numbers if other.state_of(n) is not TaskState.FINISHED]
            ad = proc_ad(other, live[0]) if live else None
            if ad is None or _one_ad_for_all(other, ad):
                if ad is not None:
                    budget[0] -= 1
                    EVALUATIONS[0] += 1
                    if _matches(state, piece, ad):
                        chosen = live
                numbers = []                # every proc is answered
        while piece.task_at < len(numbers) and budget[0] > 0:
            number = numbers[piece.task_at]
            piece.task_at += 1
            if other.state_of(number) is TaskState.FINISHED:
                continue
            budget[0] -= 1
            EVALUATIONS[0] += 1
            if _matches(state, piece, proc_ad(other, number)):
                chosen.append(number)
            if piece.costly:
                break
        for number in chosen:
            task_info(other, number)["remove_reason"] = reason
            apply.delete_task(state, dispatcher, other, number, now, False)
            changed += 1
        if chosen and other.is_finished():
            state.note_finished(other.id)
        if piece.costly:
            piece.at = len(piece.jobs)      # (given up: see _matches)
            break
        if piece.task_at < len(numbers):
            break                           # the budget is spent in this job's tasks
        piece.at += 1
        piece.task_at = 0
    return changed
