"""qdel: delete jobs and job tasks (Grid Engine dialect).

Job names and patterns are resolved here against the status snapshot; the
jobs of ``-u`` users are picked by the daemon. The deletion is a request the
daemon applies (and authorises again) and answers with what it did to each
job, which is what qdel prints. When qdel returns,
the deletion shows in qstat; a running task is ended by its shepherd.
"""

from gridtools.cli import ask
from gridtools.cli.sge import jobsel

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


def describe(user, done, target, force):
    """(lines, failed) for what the daemon did to one target, Grid Engine's wording."""
    jid = done["id"]
    if done.get("missing"):
        return [f'denied: job "{jid}" does not exist'], True
    if done.get("denied"):
        return [f'{user} - you do not have the necessary privileges to delete the job "{jid}"'], True
    if force:
        return [f"{user} forced the deletion of job {jid}"], False
    if not done.get("array"):          # (task ranges are never empty)
        if done.get("registered"):
            return [f"{user} has registered the job {jid} for deletion"], False
        return ([f"{user} has deleted job {jid}"] if done.get("deleted") else []), False
    registered = jobsel.task_numbers({"tasks": done.get("registered")}) or []
    deleted = jobsel.task_numbers({"tasks": done.get("deleted")}) or []
    lines = [f"{user} has registered the job-array task {jid}.{n} for deletion" for n in registered]
    if deleted:
        if target["tasks"] is None:
            lines.append(f"{user} has deleted job {jid}")
        elif len(deleted) == 1:
            lines.append(f"{user} has deleted job-array task {jid}.{deleted[0]}")
        else:
            lines.append(f"{user} has deleted job-array tasks {task_list(deleted)} of job {jid}")
    return lines, False


def task_list(numbers):
    """Task numbers as Grid Engine's qmaster words them in its answer, a task range list
    as it prints one: the runs of consecutive numbers, joined left to right where they
    continue one step (two lone numbers make a step, ``1,3`` and ``5`` make ``1-5:2``;
    a lone number after a range of its step extends it), each written ``n`` alone,
    ``first,last`` for two numbers and ``first-last:step`` for more, joined by commas
    (``1,3,5-9:1``, ``1-9:2``, ``1-3:1,5,7``)."""
    runs = []                                       # [first, last] of consecutive numbers
    for n in sorted(set(numbers)):
        if runs and runs[-1][1] + 1 == n:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    joined = []                                     # [first, last, step]
    for first, last in runs:
        head = joined[-1] if joined else None
        if head is not None and first == last:
            if head[2] > 1 and head[1] + head[2] == first:
                head[1] = first                     # (a lone number continuing a step)
                continue
            if head[0] == head[1]:
                head[1], head[2] = first, first - head[0]     # (two lone numbers: a step)
                continue
        joined.append([first, last, 1])
    return ",".join(str(first) if first == last else f"{first},{last}" if first + step == last
                    else f"{first}-{last}:{step}" for first, last, step in joined)


def main(argv, prog="qdel"):
    return jobsel.run_command(argv, USAGE, parse_args, _delete)


def _delete(items, users, force):
    """Resolve the job words, have the daemon delete them (and, with ``-u``, every job of
    those users: the daemon picks them itself, with the caller's rights) and print what
    it did, so that a message saying "deleted" is true and qstat shows it when qdel
    returns."""
    import sys
    user = jobsel.me()
    allowed, denied, order, code = _screen(user, items)
    sent = [t for t in allowed if (t["id"], str(t["tasks"])) not in denied]
    # a forced deletion is always asked of the daemon, which checks first whether the
    # caller may force one at all (as Grid Engine's qmaster does, before it looks at any
    # job): a refusal is then the one answer, whatever the jobs named
    answers = iter(_ask(sent, users, force))
    said_of = {}
    for target in allowed:
        key = (target["id"], str(target["tasks"]))
        if key in denied:
            said, failed = describe(user, {"id": target["id"], "denied": True}, target, force)
        else:
            said, failed = describe(user, next(answers), target, force)
        code = 1 if failed else code
        said_of[key] = said
    # the answers in the order the job words were given, as Grid Engine's master
    # answers a request id by id
    lines = []
    for key, text in order:
        lines.extend(said_of.get(key, []) if text is None else [text])
    chosen = 0
    for done in answers:                # the jobs of the -u users, by id
        said, failed = describe(user, done, {"id": done["id"], "tasks": None}, force)
        code = 1 if failed else code
        lines.extend(said)
        chosen += 1
    if users is not None and not allowed and not chosen:
        lines.append(jobsel.no_jobs(users))
        code = 1
    if lines:
        sys.stdout.write("\n".join(lines) + "\n")
    return code


def _screen(user, items):
    """(targets to ask for, keys of those denied here, what to print in the order of the
    job words: (key, None) for a target's answer or (None, line) for a line of its own,
    exit code so far) of the job words: each job named once, narrowed to its tasks."""
    order, code = [], 0
    targets = []
    if items:
        snap = jobsel.job_status([item[:2] for item in items], None)
        for item in items:
            line = jobsel.answered(item)
            if line is not None:        # names no job of the -u users
                order.append((None, line))
                code = 1
                continue
            found, missing = jobsel.resolve([item], snap)
            targets.extend(found)
            order.extend((None, f'denied: job "{name}" does not exist') for name in missing)
            order.extend(((t["id"], str(t["tasks"])), None) for t in found
                         if ((t["id"], str(t["tasks"])), None) not in order)
            code = 1 if missing else code
    operator = jobsel.is_operator(user) if targets else False
    allowed, denied, seen = [], set(), set()
    for target in targets:
        key = (target["id"], str(target["tasks"]))
        if key in seen:
            continue
        seen.add(key)
        if snap["jobs"].get(target["id"], {}).get("owner", user) != user and not operator:
            denied.add(key)
        else:
            target, problem = jobsel.narrow(snap, target)
            if problem:
                # (printed on standard output, as Grid Engine's answers)
                order[order.index((key, None))] = (None, problem)
                code = 1
                continue
            order[order.index((key, None))] = ((target["id"], str(target["tasks"])), None)
        allowed.append(target)
    return allowed, denied, order, code


def _ask(targets, users, force):
    if not targets and users is None and not force:
        return []
    payload = {"targets": targets, "force": force}
    if users is not None:
        payload["users"] = users
    return ask.outcomes("delete", payload)
