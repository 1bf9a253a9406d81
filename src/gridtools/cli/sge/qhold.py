"""qhold and qrls: set or release holds on jobs and job tasks (Grid Engine dialect).

``-h u`` (user hold, the default), ``-h o`` (operator hold, operators and
managers only), ``-h s`` (system hold, managers only); letters combine.
"""

from gridtools.cli.sge import jobsel, qstatus
from gridtools.errors import UsageError

WHO = {"s": ("manager", jobsel.is_manager), "o": ("operator", jobsel.is_operator)}


def parse_args(argv):
    opts, users, words = jobsel.parse_job_args(argv, valued=("-h",))
    letters = opts.get("-h", "u")
    if not letters or any(c not in "uos" for c in letters):
        raise UsageError(f'invalid hold type "{letters}": use u, o and s')
    return letters, users, words


def _changes(row, letters, on):
    """True when the hold request changes (or concerns) the tasks of ``row``."""
    if row["state"] in qstatus.ACTIVE:
        return True
    return on or bool(set(row.get("hold", "")) & set(letters))


def _messages(snap, target, letters, on):
    """Lines 'modified hold of ...' for the tasks the request concerns."""
    jid = target["id"]
    rows = [r for r in jobsel.rows_of(snap, jid) if _changes(r, letters, on)]
    if not snap["jobs"][jid].get("array"):
        return [f"modified hold of job {jid}"] if rows else []
    numbers = []
    for row in rows:
        for n in jobsel.task_numbers(row) or []:
            if target["tasks"] is None or jobsel.in_ranges(n, target["tasks"]):
                numbers.append(n)
    return [f"modified hold of job-array task {jid}.{n}" for n in sorted(numbers)]


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
    import sys
    user = jobsel.me()
    for letter, (title, check) in WHO.items():
        if letter in letters and not check(user):
            what = "manager hold" if letter == "s" else "operator hold"
            print(f'denied: "{user}" must be {title} to {"set" if on else "release"} {what}')
            return 10
    snap = qstatus.load()
    targets, missing = jobsel.resolve(items, snap)
    if users is not None:
        targets.extend(jobsel.jobs_of_users(snap, users))
    operator = jobsel.is_operator(user)
    allowed, code = [], 0
    for target in targets:
        if snap["jobs"][target["id"]]["owner"] != user and not operator:
            print(f'denied: "{user}" must be at least owner of job {target["id"]} to change job attributes')
            code = 18
            continue
        target, problem = jobsel.narrow(snap, target)
        if problem:
            sys.stderr.write(problem + "\n")
            code = code or 1
            continue
        allowed.append(target)
        for line in _messages(snap, target, letters, on):
            print(line)
    for name in missing:
        print(f'denied: job "{name}" does not exist')
        code = code or 1
    if allowed:
        from gridtools.cli.ask import tell
        tell("hold", {"targets": allowed, "letters": letters, "on": on})
    return code
