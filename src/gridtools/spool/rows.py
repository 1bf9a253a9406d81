"""The job rows and job facts of the published status: the read model queries share.

The daemon publishes them after each pass (``daemon.publish``); a query
without a published status builds the same from the job store
(``cli/sge/qstatus``). Rows are grouped as qstat shows them: each running
task on its own row, waiting tasks of one job grouped by their state,
finished tasks of a job grouped for ``qstat -s z`` (``ended``: when the
first of them ended); a row's ``state`` is the letters qstat shows.
"""

from gridtools.model import perange
from gridtools.model.job import TaskState
from gridtools.model.predecessors import ad_waits
from gridtools.model.taskset import RangeBuilder, TaskRanges


def ranges(numbers):
    """Task numbers as compact ranges [[first, last, step], ...]."""
    builder = RangeBuilder()
    for n in numbers:
        builder.add(n)
    return builder.out


def running_state(task, held=""):
    """qstat state letters of a running task, in Grid Engine's order (d S T h R r s):
    a hold is shown with the other letters (hr, hs, Sh, Th), never instead of them;
    each cause of a suspension has its letter (S by its queue: suspended, subordinated,
    calendar, or P, the machine's policy, HTCondor's SUSPEND; T by a suspend threshold;
    s by qmod -sj), so a job suspended by its user in a suspended queue is Ss. A
    suspended task shows no r."""
    suspended = task.suspended or ""
    lead = ("d" if task.deleting else "") + ("S" if "S" in suspended or "P" in suspended else "") + \
        ("T" if "T" in suspended else "") + ("h" if held else "")
    if "s" in suspended:
        return lead + "s"
    if suspended:
        return lead
    return lead + ("Rr" if task.restarted and not task.deleting else "r")


def pending_state(job, number, task, live, ad_done=None):
    """qstat state letters of a task that has not run (or waits to run again). Holds,
    predecessors still in the system (-hold_jid) and array predecessors whose tasks it
    waits for have not finished (-hold_jid_ad, see ``ad_waiting``) show ``h``."""
    if task is not None and task.state is TaskState.ERROR:
        return "Eqw"
    held = bool(job.holds_of(number)) or any(p in live for p in job.spec.get("predecessors") or ()) \
        or ad_waiting(number, ad_done)
    restarted = task is not None and task.restarted
    if held:
        return "hRq" if restarted else "hqw"
    return "Rq" if restarted else "qw"


def finished_tasks(job):
    """The task numbers of a job that have finished."""
    return frozenset(n for n, t in job.tasks.items() if t.state is TaskState.FINISHED)


def ad_done_of(job, live, lookup):
    """{array predecessor id: the numbers of the job's tasks that wait for it no more} of
    the job's -hold_jid_ad predecessors still in the system (``lookup``: job id -> Job or
    None); {} for none. They are the predecessor's finished tasks when the two arrays have
    one step, else the job's tasks whose blocks of its tasks have all finished
    (``model.predecessors.ad_block``)."""
    found = {}
    own = job.spec.get("tasks")
    for pred in job.spec.get("ad_predecessors") or ():
        other = lookup(pred) if pred in live else None
        if other is not None:
            done, theirs = finished_tasks(other), other.spec.get("tasks")
            if own and theirs and own[2] != theirs[2]:
                done = frozenset(n for n in range(own[0], own[1] + 1, own[2])
                                 if not ad_waits(n, own, theirs, done))
            found[pred] = done
    return found


def ad_waiting(number, ad_done):
    """True when task ``number`` waits for an array predecessor (``ad_done`` from
    ``ad_done_of``): it is not among the tasks one of them lets go."""
    return bool(ad_done) and any(number not in done for done in ad_done.values())


def _split_waiting(rest, ad_done):
    """(runs that wait for an array predecessor, runs that do not) of the TaskRanges ``rest``."""
    if not ad_done:
        return (), rest.runs
    free = set.intersection(*({n for n in done if n in rest} for done in ad_done.values()))
    if not free:
        return rest.runs, ()
    waiting = [run for first, last, step in rest.runs
               for run in TaskRanges.of_range(first, last, step, free).runs]
    return waiting, ranges(sorted(free))


def job_rows(job, prio, live, ad_done=None, task_asks=None):
    """The qstat rows of one job: a row per running task, one per group of waiting or
    finished tasks with the same state (tasks without a record form one group at once,
    or two when some wait for an array predecessor: ``ad_done`` from ``ad_done_of``).
    A row of tasks that wait for an array predecessor is marked ``ad``.

    ``task_asks``: task number -> (parallel environment request as the description
    holds one or None, hard requests) of the tasks that ask for other resources than
    the job's (the procs of an HTCondor cluster whose requests differ): their waiting
    tasks form groups of their own, one per request, with their own slots, as Grid
    Engine splits an array's tasks that show otherwise; their rows (running ones too)
    carry it as ``req_pe`` and ``req_hard``."""
    rows = []
    groups = {}
    for number, task in sorted(job.tasks.items()):
        if task.state is TaskState.RUNNING:
            rows.append({"id": job.id, "task": number if job.is_array else None,
                         "state": running_state(task, job.holds_of(number)),
                         "hold": job.holds_of(number), "time": task.start_time,
                         "queue": f"{task.queue}@{task.host}", "slots": task.slots,
                         "granted": task.granted, "pe": task.pe, "prio": prio})
            if task_asks and number in task_asks:
                rows[-1]["req_pe"], rows[-1]["req_hard"] = task_asks[number]
            continue
        if task.state is TaskState.FINISHED:
            key = ("z", "", False)
        else:
            waits = task.state is not TaskState.ERROR and ad_waiting(number, ad_done)
            key = (pending_state(job, number, task, live, ad_done), job.holds_of(number), waits)
        groups.setdefault(key, []).append((number, number, 1))
    rest = job.untouched()
    if rest and job.deleted:
        groups.setdefault(("z", "", False), []).extend(rest.runs)
    elif rest:
        for waits, runs in zip((True, False), _split_waiting(rest, ad_done)):
            if runs:
                key = (pending_state(job, runs[0][0], None, live, ad_done), job.hold, waits)
                groups.setdefault(key, []).extend(tuple(run) for run in runs)
    slots = perange.low(job.spec["pe"]) if job.spec.get("pe") else 1
    asks = {}
    if task_asks:
        groups = _split_by_asks(groups, task_asks, asks)
    for (key, hold, waits, *own), runs in sorted(groups.items(), key=lambda item: min(item[1])[0]):
        row = {"id": job.id, "tasks": _compact(runs) if job.is_array else None,
               "state": key, "hold": hold, "time": float(job.spec["submit_time"]), "queue": "",
               "slots": slots, "prio": 0.0 if key.startswith("h") else prio}
        if own:
            own_asks(row, asks[own[0]])
        if waits:
            row["ad"] = True
        if key == "z":
            row["ended"] = _first_end(job)
        rows.append(row)
    return rows


def _first_end(job):
    """When the first of a job's tasks ended (those a qdel of the whole job ended unstarted
    at its deletion): when it joined the finished jobs qstat -s z lists, in that order."""
    ends = [t.end_time for t in job.tasks.values() if t.state is TaskState.FINISHED]
    if job.deleted and job.untouched():
        ends.append(job.deleted_at)
    return min(ends) if ends else 0.0


def own_asks(row, asks):
    """Give the row of tasks that ask for other resources than their job what they ask
    for (``asks``: see ``job_rows``): its slots, ``req_pe`` and ``req_hard``."""
    pe, hard = asks
    row["slots"], row["req_pe"], row["req_hard"] = (perange.low(pe) if pe else 1), pe, hard


def asks_key(asks):
    """A hashable key of what a task asks for (``asks``: see ``job_rows``)."""
    pe, hard = asks
    return repr((pe, sorted(hard.items())))


def _split_by_asks(groups, task_asks, found):
    """``groups`` (key -> task runs) with the waiting tasks of ``task_asks`` moved to
    groups of their own, one per request (key + (``asks_key`` of the request,);
    ``found`` gets each such key's request)."""
    split = {}
    for key, runs in groups.items():
        if key[0] == "z":
            split.setdefault(key, []).extend(runs)
            continue
        for first, last, step in runs:
            for number in range(first, last + 1, step):
                own = key
                if number in task_asks:
                    asks = task_asks[number]
                    frozen = asks_key(asks)
                    found.setdefault(frozen, asks)
                    own = key + (frozen,)
                split.setdefault(own, []).append((number, number, 1))
    return split


def split_row(row, task_asks):
    """The waiting row ``row`` of an array job's tasks (``tasks`` its runs) as rows of
    the tasks that ask alike (``task_asks``: see ``job_rows``), in the order of their
    first tasks: what ``job_rows`` makes of a job's waiting tasks."""
    groups, found = {}, {}
    for first, last, step in row["tasks"] or ():
        for number in range(first, last + 1, step):
            asks = task_asks.get(number)
            frozen = asks_key(asks) if asks is not None else None
            if asks is not None:
                found.setdefault(frozen, asks)
            groups.setdefault(frozen, []).append((number, number, 1))
    out = []
    for frozen, runs in sorted(groups.items(), key=lambda item: item[1][0][0]):
        own = dict(row, tasks=_compact(runs))
        if frozen is not None:
            own_asks(own, found[frozen])
        out.append(own)
    return out


def _compact(runs):
    builder = RangeBuilder()
    for first, last, step in sorted(runs):
        builder.add_run(first, last, step)
    return builder.out


def _description_facts(spec):
    """The part of ``condor_info`` its description alone decides (made once for it: the
    per-proc facts of a large cluster take a parse of every proc's ad), and the private
    part (``private_facts``). ``cmd`` is what condor_q's CMD column shows first: the
    command's base name, ``condor_dagman`` for a DAG's manager, whose executable
    is the condor_dagman launcher (its full path is private, as its arguments are)."""
    from gridtools import ospaths
    command = spec.get("command") or spec.get("script_name") or ""
    args = [str(a) for a in spec.get("args") or ()]
    info = {"cmd": ospaths.basename(command) or command,
            "batch": spec.get("batch_name") if spec.get("condor_ad") else spec.get("name"),
            "prio": int(spec.get("job_prio") or 0), "universe": int(spec.get("universe") or 5),
            "ads": bool(spec.get("condor_ad"))}
    private = {"args": args} if args else {}
    texts = spec.get("condor_ad")
    if isinstance(texts, list) and any(_names_proc_fact(text) for text in texts[1:]):
        prios, own_args = _proc_facts(texts, info, args)
        if prios:
            info["procs"] = prios
        if own_args:
            private["procs"] = own_args
    first = (texts[0] if isinstance(texts, list) else texts) if texts else ""
    image = _image_size(first)
    if image:
        info["image"] = image       # (condor_q's SIZE of a proc before its starter says more)
    if info["universe"] == _SCHEDULER and first:
        dag = _dag_counts(first)
        if dag is None and info["cmd"] == "condor_dagman":
            dag = [0, 0, 0]     # a DAG's manager that has not counted its nodes yet
        if dag is not None:
            info["dag"] = dag
    if "DAGManJobId" in first:
        manager = _dag_manager(first)
        if manager:
            info["dagman"] = manager
    return info, private or None


def _image_size(text):
    """The ImageSize a submitted ad's text gives on a line of its own (KiB: the
    executable's size, as condor_submit sets it); 0 when none, or not a plain number."""
    at = 0 if text.startswith("ImageSize = ") else text.find("\nImageSize = ") + 1
    if at <= 0 and not text.startswith("ImageSize = "):
        return 0
    value = text[at + len("ImageSize = "):].partition("\n")[0].strip()
    return int(value) if value.isdigit() else 0


#: the first arguments of the DAGMan jobs condor_submit_dag submitted before they ran the
#: condor_dagman launcher (``python3 -m gridtools.cli.entry gridtools dagman ARGS``): the
#: history file keeps their ads, and condor_history's CMD reads ``condor_dagman ARGS`` for
#: them (``cli.condor.history``)
DAGMAN_ARGS = ("-m", "gridtools.cli.entry", "gridtools", "dagman")


def private_facts(job):
    """What condor_q shows of a job to its owner (and root) only, or None: the arguments
    of its CMD column (``args``; ``procs``: task number as text -> those of the procs
    whose own differ from proc 0's). The daemon publishes them in a file only the
    owner reads (``spool.status.publish_private``), never in the status."""
    held = job.spec_cache()
    if held.condor_facts is None:
        condor_info(job)
    return held.private_facts


def _dag_manager(text):
    """The cluster of the DAG manager that submitted a node job (its DAGManJobId), or 0."""
    from gridtools.jobads import parsed_ad
    found = parsed_ad(text).eval("DAGManJobId")
    return found if type(found) is int else 0


#: JobUniverse of the jobs that run beside the schedd (a DAG's manager among them)
_SCHEDULER = 7


def _dag_counts(text):
    """[total, done, failed] nodes of a DAG manager's ad text (the DAG_Nodes* attributes
    it keeps up to date), or None for a job that is not one."""
    if "DAG_NodesTotal" not in text:
        return None
    from gridtools.jobads import parsed_ad
    ad = parsed_ad(text)
    found = [ad.eval(name) for name in ("DAG_NodesTotal", "DAG_NodesDone", "DAG_NodesFailed")]
    return [n if type(n) is int else 0 for n in found]


#: the attributes of a proc condor_q shows in its own row (in lower case)
_PROC_FACTS = ("args", "arguments", "jobprio")


def _names_proc_fact(text):
    lowered = text.lower() if text else ""
    return any(name in lowered for name in _PROC_FACTS)


def _proc_facts(texts, info, args):
    """({task number as text: {"prio": N}}, {task number as text: [arguments]}) of the
    later procs of a cluster whose JobPrio, or arguments, differ from proc 0's (``info``,
    ``args``)."""
    from gridtools.formats.condor.spec import arguments
    from gridtools.jobads import proc_ad
    prios, own_args = {}, {}
    for number, text in enumerate(texts[1:], 2):
        if not _names_proc_fact(text):
            continue
        ad = proc_ad(tuple(texts), number)
        prio = ad.eval("JobPrio")
        mine = [str(a) for a in arguments(ad)]
        if mine != args:
            own_args[str(number)] = mine
        if type(prio) is int and prio != info["prio"]:
            prios[str(number)] = {"prio": prio}
    return prios, own_args


def job_info(job, decisions_urg):
    spec = job.spec
    res = spec.get("resources") or {}
    return {
        "name": spec["name"], "owner": spec["owner"], "group": spec.get("group", ""),
        "project": spec.get("project") or "", "department": spec.get("department") or "defaultdepartment",
        "submit_time": float(spec["submit_time"]), "priority": int(spec.get("priority", 0)),
        "hard": dict(res.get("hard") or {}), "soft": dict(res.get("soft") or {}),
        "hard_queues": list((spec.get("queues") or {}).get("hard") or []),
        "soft_queues": list((spec.get("queues") or {}).get("soft") or []),
        "pe": list(spec["pe"]) if spec.get("pe") else None,
        "hold_jid": list(spec.get("hold_jid") or []), "predecessors": list(spec.get("predecessors") or []),
        "urgency": list(decisions_urg or (0.0, 0.0, 0.0, 0.0)), "deadline": spec.get("deadline"),
        "array": bool(spec.get("tasks")), "tasks": spec.get("tasks"),
        "account": spec.get("account") or "sge", "ar": spec.get("ar"),
        "start_at": spec.get("start_at"), "hold_jid_ad": list(spec.get("hold_jid_ad") or []),
        "ad_predecessors": list(spec.get("ad_predecessors") or []), "ckpt": spec.get("ckpt"),
        "binding": spec.get("binding"), "masterq": list(spec.get("masterq") or []),
        "tc": spec.get("tc"), "override_tickets": int(spec.get("override_tickets") or 0),
        "jobshare": int(spec.get("jobshare") or 0), "condor": condor_info(job),
        # not secrets (ls -l shows a uid, qstat -j of the owner the job's type and host):
        # what other users' views show of the job in place of the private description
        "uid": spec.get("uid"), "gid": spec.get("gid"), "binary": bool(spec.get("binary")),
        "submit_host": spec.get("submit_host") or "", "uid_domain": spec.get("uid_domain") or "",
        **_choices(spec),
        # the hard requests the job holds once, not per slot (an HTCondor job of several CPUs)
        **({"per_job": list(spec["per_job_requests"])} if spec.get("per_job_requests") else {}),
    }


#: the job's yes/no choices qstat -j shows of every job (-R, -j, -notify, -r), by field
_CHOICES = ("reserve", "join", "notify")


def _choices(spec):
    """The choices of ``spec`` that are not the default (published only then: absent,
    a choice is the default), with its mail options (the letters; the addresses are
    private)."""
    found = {key: True for key in _CHOICES if spec.get(key)}
    if spec.get("rerun") is not None:
        found["rerun"] = bool(spec["rerun"])
    if spec.get("mail_options"):
        found["mail_options"] = spec["mail_options"]
    return found


def condor_info(job):
    """What condor_q shows of a job besides its rows: its command's base name, batch
    name, JobPrio and universe (proc 0's; ``procs`` the JobPrio of the procs whose own
    differs; its arguments are private: ``private_facts``), and the HTCondor bookkeeping of its tasks (hold reasons,
    removals, the seconds of their earlier runs, finished tasks kept in the queue; see
    daemon.condorjob)."""
    held = job.spec_cache()
    if held.condor_facts is None:           # (one mapping for alike jobs: a daemon holds 10,000)
        from gridtools.model import shared
        public, held.private_facts = _description_facts(job.spec)
        held.condor_facts = shared.alike(public)
    info = dict(held.condor_facts)
    book = job.condor
    if book:
        info["kept"] = list(book.get("kept") or ())
        info["hold"] = book.get("hold")
        if "materialized" in book:          # (a cluster materialized late: daemon.factory)
            info["materialized"] = book["materialized"]
        info["tasks"] = tasks = {str(k): {f: v for f, v in t.items() if f in _PUBLIC_BOOK}
                                 for k, t in (book.get("tasks") or {}).items()}
        kept = frozenset(info["kept"])
        for number, task in job.tasks.items():
            run = _public_run(task, number in kept)
            if run:
                tasks.setdefault(str(number), {})["run"] = run
        if book.get("edits"):               # (condor_qedit of a job submitted otherwise)
            left_out = _not_public()[0]
            info["edits"] = {name: text for name, text in book["edits"].items() if name.lower() not in left_out}
    return info


#: the HTCondor bookkeeping of a task every user sees (``jobads._overlay_condor`` and
#: ``jobads._run_times`` make its ad's run counters, hosts and times of them)
_PUBLIC_BOOK = frozenset(("disk", "hold", "removed", "gone", "wall", "slot", "slots", "last", "completions",
                          "suspensions", "suspension_time", "suspended_at", "slot_time", "holds",
                          "holds_by", "vacated", "vacates", "vacates_by", "executing",
                          "input_copied", "output_copied", "transfer_in", "transfer_out", "in_starts",
                          "out_starts", "failed_starts", "never_executed", "execute_due", "provisioned",
                          "activation", "size", "release_reason", "last_hold", "last_release_reason",
                          "checkpoints", "last_checkpoint", "last_exit"))


def _public_run(task, kept):
    """What the rows do not say of a task record and its ad's counters need (``jobads``
    ``_started``, ``_ended``, ``_run_times``): its runs that went back to the queue and when
    the last began, and of a finished task kept in the queue its exit and times ({} when
    nothing)."""
    run = {"restarted": task.restarted, "start": task.start_time} if task.restarted else {}
    if kept and task.state is TaskState.FINISHED:
        run.update(exit=task.exit_status, signal=task.signal, start=task.start_time, end=task.end_time,
                   slots=task.slots)
    return run


def public_ad(job):
    """The ad a job was submitted with (``spec["condor_ad"]``) as every user may see it,
    or None for a job submitted otherwise: its text, or one text for each proc as the
    description holds them, without the private attributes (``jobads.PRIVATE_ATTRS``:
    command, arguments, environment, files); those it sets in every ad
    (``jobads.SET_ATTRS``) are ``undefined`` in its first text (where they stand in the
    owner's ad) and left out of the others: another user's view takes them from the
    status. What the state of its tasks lays over it (``jobads.STATE_ATTRS``) stays: as
    over the owner's ad, another user's view lays over it the same from the published
    state (``condor_info``). Each other line is the job's own, as its owner's ad shows it. Made once for
    a description; alike jobs share one text (their ads differ in what is left out)."""
    held = job.spec_cache()
    if held.public_ad is None:
        texts = job.spec.get("condor_ad")
        if not texts:
            held.public_ad = ""
        elif isinstance(texts, list):
            held.public_ad = [public_text(text, n == 0) for n, text in enumerate(texts)]
        else:
            held.public_ad = public_text(texts)
    return held.public_ad or None


#: the attributes ``public_ad`` leaves out, and those it makes undefined, in lower case
_NOT_PUBLIC = []


def _not_public():
    """(the names ``public_ad`` leaves out, those it makes undefined), in lower case."""
    if not _NOT_PUBLIC:
        from gridtools.jobads import PRIVATE_ATTRS, SET_ATTRS
        _NOT_PUBLIC.extend((frozenset(n.lower() for n in PRIVATE_ATTRS),
                            frozenset(n.lower() for n in SET_ATTRS)))
    return _NOT_PUBLIC


def public_text(text, first=True):
    """A stored ad's text as ``public_ad`` publishes it (``first``: the text of the first
    proc, or of all); the long form is one attribute a line (see ``classad.parse_ad``)."""
    import sys
    left_out, undefined = _not_public()
    if not text:
        return ""
    if text.lstrip().startswith("["):       # the bracketed form: in the long form
        from gridtools.classad import parse_ad
        text = str(parse_ad(text))
    kept = []
    for line in text.splitlines(True):
        name = line.partition("=")[0].strip()
        lowered = name.lower()
        if lowered in undefined:
            if first:
                kept.append(f"{name} = undefined\n")
        elif lowered not in left_out:
            kept.append(line)
    return sys.intern("".join(kept))
