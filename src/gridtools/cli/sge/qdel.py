"""qdel: delete jobs and job tasks (Grid Engine dialect).

Checks and messages happen here against the status snapshot; the deletion
itself is a request the daemon applies (and authorises again). Returns
within milliseconds: a running task is ended by its shepherd right after.
"""

from gridtools.cli.sge import jobsel, qstatus

USAGE = """usage: qdel [options] job_task_list
   [-f]                                     force action
   [-help]                                  print this help
   [-u user_list]                           delete all jobs of users specified in list
   job_task_list                            delete all jobs given in list

job_task_list           job_tasks[,job_tasks,...]
job_tasks               [job_id['.'task_id_range]|job_name|pattern][' -t 'task_id_range]
task_id_range           task_id['-'task_id[':'step]]
user_list               user[,user,...]
"""


def parse_args(argv):
    opts, users, words = jobsel.parse_job_args(argv, flags=("-f",))
    return bool(opts.get("-f")), users, words


def describe(user, snap, target, force):
    """The messages for one target, Grid Engine's wording."""
    jid = target["id"]
    rows = jobsel.rows_of(snap, jid)
    is_array = snap["jobs"][jid].get("array")
    if force:
        return [f"{user} forced the deletion of job {jid}"]
    if not is_array:
        running = any(r["state"] in qstatus.ACTIVE for r in rows)
        return [f"{user} has registered the job {jid} for deletion" if running
                else f"{user} has deleted job {jid}"]
    lines, pending = [], []
    for row in sorted(rows, key=lambda r: (r.get("task") or 0)):
        numbers = jobsel.task_numbers(row) or []
        numbers = [n for n in numbers if target["tasks"] is None or jobsel.in_ranges(n, target["tasks"])]
        if row["state"] in qstatus.ACTIVE:
            lines.extend(f"{user} has registered the job-array task {jid}.{n} for deletion" for n in numbers)
        else:
            pending.extend(numbers)
    if pending:
        if target["tasks"] is None:
            lines.append(f"{user} has deleted job {jid}")
        elif len(pending) == 1:
            lines.append(f"{user} has deleted job-array task {jid}.{pending[0]}")
        else:
            lines.append(f"{user} has deleted job-array tasks {','.join(map(str, sorted(pending)))} of job {jid}")
    return lines


def main(argv, prog="qdel"):
    return jobsel.run_command(argv, USAGE, parse_args, _delete)


def _delete(items, users, force):
    import sys
    user = jobsel.me()
    snap = qstatus.load()
    targets, missing = jobsel.resolve(items, snap)
    if users is not None:
        targets.extend(jobsel.jobs_of_users(snap, users))
    operator = jobsel.is_operator(user)
    allowed, code = [], 0
    seen = set()
    for target in targets:
        key = (target["id"], str(target["tasks"]))
        if key in seen:
            continue
        seen.add(key)
        if snap["jobs"][target["id"]]["owner"] != user and not operator:
            print(f'{user} - you do not have the necessary privileges to delete the job "{target["id"]}"')
            code = 1
            continue
        target, problem = jobsel.narrow(snap, target)
        if problem:
            sys.stderr.write(problem + "\n")
            code = 1
            continue
        allowed.append(target)
        for line in describe(user, snap, target, force):
            print(line)
    for name in missing:
        print(f'denied: job "{name}" does not exist')
        code = 1
    if allowed:
        from gridtools.cli.ask import tell
        tell("delete", {"targets": allowed, "force": force})
    return code
