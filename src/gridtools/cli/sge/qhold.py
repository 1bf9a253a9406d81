"""qhold and qrls: set or release holds on jobs and job tasks (Grid Engine dialect).

``-h u`` (user hold, the default), ``-h o`` (operator hold, operators and
managers only), ``-h s`` (system hold, managers only); letters combine.
The daemon applies the change and answers which tasks it concerned, which is
what is printed; when the command returns, qstat shows the change.

As Grid Engine's qhold and qrls, the command exits with the status of the first
answer that is not a success, in the order the answers are printed (0 when all
are): 3 for a job that does not exist, 18 for another user's job, 4 for a list
of several tasks of a job that is no array. Tasks a job does not have are passed
over without a word.

An array task named by number that already finished (while the job has others
left) is still one of the job's, as Grid Engine's master counts it: qhold answers
"modified hold of job-array task J.T" for it (exit status 0) though nothing
changes and the task stays finished, and qrls passes it over without a word (it
has no hold to release). A hold of the whole job concerns only its tasks left.
"""

from gridtools.cli import ask
from gridtools.cli.sge import jobsel
from gridtools.errors import UsageError

WHO = {"s": ("manager", jobsel.is_manager), "o": ("operator", jobsel.is_operator)}
#: the exit status of a job that does not exist, of a -u list that matches no job, or of
#: a job named with -u that is none of those users' (the qmaster's STATUS_EEXIST)
NO_SUCH_JOBS = 3
#: the exit status of a refusal to change another user's job (STATUS_ENOTOWNER)
NOT_OWNER = 18
#: the exit status of a task list of more than one task for a job that is no array
#: (STATUS_EUNKNOWN)
NOT_AN_ARRAY = 4


def parse_args(argv):
    opts, users, words = jobsel.parse_job_args(argv, valued=("-h",))
    letters = opts.get("-h", "u")
    if not letters or any(c not in "uos" for c in letters):
        raise UsageError(f'invalid hold type "{letters}": use u, o and s')
    return letters, users, words


class _Refusal(str):
    """A line the command prints on standard error: the refusal of a release of an
    HTCondor job's task that SYSTEM_MAX_RELEASES forbids, in condor_release's words."""


def _messages(done):
    """Lines 'modified hold of ...' for the tasks the daemon's change concerned, and among
    them, in task order, its refusals (``refused``: [task number, line])."""
    jid = done["id"]
    numbers = jobsel.task_numbers({"tasks": done.get("changed")}) or []
    if not done.get("array"):
        lines = [(1, f"modified hold of job {jid}")] if numbers else []
    else:
        lines = [(n, f"modified hold of job-array task {jid}.{n}") for n in numbers]
    lines.extend((n, _Refusal(line)) for n, line in done.get("refused") or ())
    return [line for _n, line in sorted(lines, key=lambda item: item[0])]


USAGE = """usage: {prog} [options] job_task_list
   [-h {{u|o|s}},...]                        hold type: u(ser), o(perator), s(ystem)
   [-help]                                  print this help
   [-u user_list]                           the jobs of these users
   job_task_list                            {verb} these jobs

job_task_list           job_tasks[,job_tasks,...]
job_tasks               [job_id['.'task_id_range]|job_name|pattern][' -t 'task_id_range]
task_id_range           task_id['-'task_id[':'step]]
"""


def main(argv, prog="qhold"):
    on = prog != "qrls"
    usage = USAGE.format(prog=prog, verb="hold" if on else "release")
    return jobsel.run_command(argv, usage, parse_args,
                              lambda items, users, letters: _hold(prog, items, users, letters, on),
                              prefix=f"{prog}: ")


def _hold(prog, items, users, letters, on):
    """Resolve the job words, have the daemon change the holds (of the ``-u`` users' jobs
    too, which it picks itself with the caller's rights) and print what it did."""
    import sys
    user = jobsel.me()
    for letter, (title, check) in WHO.items():
        if letter in letters and not check(user):
            what = "manager hold" if letter == "s" else "operator hold"
            print(f'denied: "{user}" must be {title} to {"set" if on else "release"} {what}')
            return 10
    kept, sent, order = _screen(user, items)
    answers = iter(_ask(sent, users, letters, on))
    said_of = {}
    for target in kept:
        done = {"id": target["id"], "denied": True} if target.get("denied") else next(answers)
        said_of[id(target)] = _said(user, done)
    # the answers in the order the job words were given, as Grid Engine's master
    # answers a request id by id: (line, exit status of the answer, 0 for a success)
    lines = []
    for target, said in order:
        lines.extend(said_of.get(id(target), []) if said is None else [said])
    chosen = 0
    for done in answers:                # the jobs of the -u users, by id
        lines.extend(_said(user, done))
        chosen += 1
    if users is not None and not kept and not chosen:
        lines.append((jobsel.no_jobs(users), NO_SUCH_JOBS))
    # (refusals on standard error, each where it comes among the answers)
    start = 0
    for at in range(1, len(lines) + 1):
        if at == len(lines) or isinstance(lines[at][0], _Refusal) != isinstance(lines[start][0], _Refusal):
            out = sys.stderr if isinstance(lines[start][0], _Refusal) else sys.stdout
            out.write("\n".join(text for text, _status in lines[start:at]) + "\n")
            out.flush()
            start = at
    return next((status for _text, status in lines if status), 0)


def _screen(user, items):
    """(targets to print, those to send, what to print in the order of the job words:
    (target, None) for a target's answer or (None, (line, exit status)) for a line of its
    own) of the job words; a target of another user's job is marked ``denied``.

    A target's task list is the qmaster's to filter: the tasks of it that the job does
    not have are passed over without a word, but a list of more than one task for a job
    that is no array is refused as a whole (one that does not name its task 1 is not
    sent at all). An array job's task list is sent as it is, even when it names no task
    the status shows: the daemon knows the job's whole range, finished tasks included
    (a hold set on one of those is answered as a change, as Grid Engine answers it)."""
    order = []
    targets = []
    if items:
        snap = jobsel.job_status([item[:2] for item in items], None)
        for item in items:
            line = jobsel.answered(item)
            if line is not None:        # names no job of the -u users
                order.append((None, (line, NO_SUCH_JOBS)))
                continue
            found, missing = jobsel.resolve([item], snap)
            targets.extend(found)
            order.extend((None, (f'denied: job "{name}" does not exist', NO_SUCH_JOBS)) for name in missing)
            order.extend((target, None) for target in found)
    operator = jobsel.is_operator(user) if targets else False
    sent, kept = [], []
    for at, (target, _said) in enumerate(order):
        if target is None:
            continue
        job = snap["jobs"].get(target["id"])
        if (job or {}).get("owner", user) != user and not operator:
            target["denied"] = True
        else:
            if job is not None and target["tasks"] is not None and not job.get("array") \
                    and _count(target["tasks"]) > 1:
                order[at] = (None, (f"{target['id']} is not a job array", NOT_AN_ARRAY))
                continue
            if not (job or {}).get("array"):
                target, problem = jobsel.narrow(snap, target)
                if problem:             # (not the job's one task)
                    order[at] = (None, None)
                    continue
            sent.append(target)
            order[at] = (target, None)
        kept.append(target)
    return kept, sent, [(target, said) for target, said in order if target is not None or said is not None]


def _count(ranges):
    """How many task numbers a task list names (counted no further than 2: enough to
    tell one from more)."""
    found = 0
    for first, last, step in ranges:
        found += len(range(first, last + 1, step)) if last >= first else 0
        if found > 1:
            return found
    return found


def _said(user, done):
    """The lines for what was done to one job, each with its exit status."""
    if done.get("denied"):
        return [(f'denied: "{user}" must be at least owner of job {done["id"]} to change job attributes',
                 NOT_OWNER)]
    if done.get("missing"):
        return [(f'denied: job "{done["id"]}" does not exist', NO_SUCH_JOBS)]
    return [(line, 1 if isinstance(line, _Refusal) else 0) for line in _messages(done)]


def _ask(targets, users, letters, on):
    if not targets and users is None:
        return []
    payload = {"targets": targets, "letters": letters, "on": on}
    if users is not None:
        payload["users"] = users
    return ask.outcomes("hold", payload)
