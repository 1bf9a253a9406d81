"""qhold and qrls: set or release holds on jobs and job tasks (Grid Engine dialect).

``-h u`` (user hold, the default), ``-h o`` (operator hold, operators and
managers only), ``-h s`` (system hold, managers only); letters combine.
The daemon applies the change and answers which tasks it concerned, which is
what is printed; when the command returns, qstat shows the change.
"""

from gridtools.cli import ask
from gridtools.cli.sge import jobsel
from gridtools.errors import UsageError

WHO = {"s": ("manager", jobsel.is_manager), "o": ("operator", jobsel.is_operator)}
#: the exit status of a job that does not exist, of a -u list that matches no job, or of
#: a job named with -u that is none of those users': Grid Engine's qhold and qrls exit
#: with the status code of the qmaster's first failed answer (STATUS_EEXIST), as qalter
#: does not
NO_SUCH_JOBS = 3


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
    kept, sent, order, code = _screen(user, items)
    answers = iter(_ask(sent, users, letters, on))
    said_of = {}
    for target in kept:
        done = {"id": target["id"], "denied": True} if target.get("denied") else next(answers)
        said_of[id(target)] = []
        code = _said(user, done, said_of[id(target)], code)
    # the answers in the order the job words were given, as Grid Engine's master
    # answers a request id by id
    lines = []
    for target, text in order:
        lines.extend(said_of.get(id(target), []) if text is None else [text])
    chosen = 0
    for done in answers:                # the jobs of the -u users, by id
        code = _said(user, done, lines, code)
        chosen += 1
    if users is not None and not kept and not chosen:
        lines.append(jobsel.no_jobs(users))
        code = code or NO_SUCH_JOBS
    # (refusals on standard error, each where it comes among the answers)
    start = 0
    for at in range(1, len(lines) + 1):
        if at == len(lines) or isinstance(lines[at], _Refusal) != isinstance(lines[start], _Refusal):
            out = sys.stderr if isinstance(lines[start], _Refusal) else sys.stdout
            out.write("\n".join(lines[start:at]) + "\n")
            out.flush()
            start = at
    return code


def _screen(user, items):
    """(targets to print, those to send, what to print in the order of the job words:
    (target, None) for a target's answer or (None, line) for a line of its own, exit
    code so far) of the job words; a target of another user's job is marked ``denied``."""
    order, code = [], 0
    targets = []
    if items:
        snap = jobsel.job_status([item[:2] for item in items], None)
        for item in items:
            line = jobsel.answered(item)
            if line is not None:        # names no job of the -u users
                order.append((None, line))
                code = code or NO_SUCH_JOBS
                continue
            found, missing = jobsel.resolve([item], snap)
            targets.extend(found)
            order.extend((None, f'denied: job "{name}" does not exist') for name in missing)
            code = code or (NO_SUCH_JOBS if missing else 0)
            order.extend((target, None) for target in found)
    operator = jobsel.is_operator(user) if targets else False
    sent, kept = [], []
    for at, (target, _text) in enumerate(order):
        if target is None:
            continue
        if snap["jobs"].get(target["id"], {}).get("owner", user) != user and not operator:
            target["denied"] = True
        else:
            target, problem = jobsel.narrow(snap, target)
            if problem:
                order[at] = (None, problem)     # (Grid Engine prints its answers on stdout)
                code = code or 1
                continue
            sent.append(target)
            order[at] = (target, None)
        kept.append(target)
    return kept, sent, order, code


def _said(user, done, lines, code):
    """Add the lines for what was done to one job; the exit code so far."""
    if done.get("denied"):
        lines.append(f'denied: "{user}" must be at least owner of job {done["id"]} to change job attributes')
        return 18
    if done.get("missing"):
        lines.append(f'denied: job "{done["id"]}" does not exist')
        return code or NO_SUCH_JOBS
    lines.extend(_messages(done))
    return code or (1 if done.get("refused") else 0)


def _ask(targets, users, letters, on):
    if not targets and users is None:
        return []
    payload = {"targets": targets, "letters": letters, "on": on}
    if users is not None:
        payload["users"] = users
    return ask.outcomes("hold", payload)
