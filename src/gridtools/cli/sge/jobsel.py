"""Naming jobs on the command line: ids, task ranges, names, patterns, users.

``job_task_list`` as qdel, qhold, qrls and qalter take it: ``7``, ``7.3``,
``7.1-5:2``, ``7 -t 1-5``, a job name or a wildcard pattern, several of
them comma- or blank-separated. ``resolve`` turns those into targets
``{"id": N, "tasks": [[first, last, step], ...] or None}`` against the
status snapshot; unknown ids are reported back.
"""

import posix

from gridtools import cell, ospaths
from gridtools.cli import status
from gridtools.errors import UsageError
from gridtools.formats import spoolyaml
from gridtools.spool import jobs as jobstore


def me():
    import pwd
    try:
        return pwd.getpwuid(posix.getuid()).pw_name
    except KeyError:
        return str(posix.getuid())


def read_names(kind):
    try:
        with open(cell.etc(kind), encoding="utf-8") as fh:
            return {line.strip() for line in fh if line.strip() and not line.startswith("#")}
    except FileNotFoundError:
        return set()


def is_manager(user):
    return user == "root" or user in read_names("managers")


def is_operator(user):
    return is_manager(user) or user in read_names("operators")


def parse_range(text):
    """A task id range ``n[-m[:s]]`` as [first, last, step] (bad text: UsageError)."""
    from gridtools.cli.sge.options import parse_task_range
    from gridtools.errors import InputError
    try:
        return parse_task_range(text)
    except InputError as exc:
        raise UsageError(str(exc)) from None


def parse_job_args(argv, flags=(), valued=()):
    """({option: True or its value}, users of -u or None, job words) of a qdel-style command line."""
    opts, users, words = {}, None, []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in flags:
            opts[word] = True
        elif word in valued or word == "-u":
            if i + 1 >= len(argv):
                raise UsageError(f'option "{word}" requires an argument')
            if word == "-u":
                users = [u for u in argv[i + 1].split(",") if u]
                if not users:
                    raise UsageError("-u option must have a list usernames")
            else:
                opts[word] = argv[i + 1]
            i += 1
        elif word == "-t":
            words.extend(argv[i:i + 2])
            i += 1
        elif word.startswith("-"):
            raise UsageError(f'invalid option argument "{word}"')
        else:
            words.append(word)
        i += 1
    return opts, users, words


def split_items(words):
    """(items, task range for -t) from argument words: ids may be comma-separated."""
    items = []
    i = 0
    follows_job = False
    while i < len(words):
        word = words[i]
        if word == "-t":
            if i + 1 >= len(words) or not items:
                raise UsageError('option "-t" requires a job and a task range')
            if not follows_job:
                # as Grid Engine's commands: a -t belongs to the job word before it, and
                # one that follows another -t has none
                raise lonely_t(words[i + 1])
            items[-1] = (items[-1][0], [parse_range(words[i + 1])])
            follows_job = False
            i += 2
            continue
        for part in word.split(","):
            if part:
                items.append(_item(part))
        follows_job = True
        i += 1
    return items


def lonely_t(text):
    """Grid Engine's refusal of a -t without a job word before it: one line on standard
    error, without the usage text (``bare``)."""
    exc = UsageError(f"found lonely '-t {text}' option (The -t option needs a leading job name).")
    exc.bare = True
    return exc


def _item(text):
    head, dot, rest = text.partition(".")
    if head.isdigit() and dot and rest:
        return (head, [parse_range(rest)])
    return (text, None)


def live_in_spool(jid, snap=None):
    """True when the job exists in the spool and has a task that did not finish, or
    that finished and stays in the queue (an HTCondor job's, by leave_in_queue).

    The spool is the record; the status snapshot may be a moment behind it. Another
    user's job, whose description is private, is live while the status ``snap`` shows a
    task of it that did not finish, or when the status does not show it (yet): the
    daemon answers for it then.
    """
    try:
        spec = jobstore.read_spec(jid)
        if spec is None:
            # not taken in yet, or taken in since: the daemon writes the description
            # before it removes the request
            if _submit_pending(jid):
                return True
            spec = jobstore.read_spec(jid)
            if spec is None:
                return False
        state = jobstore.read_state(jid) or {}
    except (spoolyaml.SpoolFormatError, PermissionError):
        return snap is None or jid not in snap["jobs"] or _has_live_rows(snap, jid)
    rng = spec.get("tasks")
    total = len(range(rng[0], rng[1] + 1, rng[2])) if rng else 1
    tasks = state.get("tasks") or {}
    done = sum(1 for t in tasks.values() if t.get("state") == "finished")
    # (an HTCondor job's completed tasks that leave_in_queue keeps are in the queue still)
    return done < total or bool((state.get("condor") or {}).get("kept"))


def _submit_pending(jid):
    """True when a submit request of the caller's for ``jid`` waits in the request folder."""
    from gridtools.spool import inbox
    return any(req.body["job"]["id"] == jid for req in inbox.pending_submits())


def in_flight(jid):
    """True while job ``jid`` was submitted but not yet taken in by the daemon (its id
    is claimed): any user's request that names it reaches the daemon after the submit."""
    from gridtools.spool import ids
    return ospaths.lexists(ospaths.join(ids.claims_dir("job"), str(jid)))


def job_status(items, users):
    """The status the job words ``items`` and ``-u`` ``users`` are resolved against:
    the part of the published listing that names those jobs (``cli.status.from_listing``;
    every job for names, patterns and -u), or the whole status when the listing is not
    all of it."""
    listing = status.load_listing()
    if listing is None:
        return status.load()
    numbers = None
    if users is None and all(name.isdigit() for name, _tasks in items):
        numbers = {int(name) for name, _tasks in items}
    return status.from_listing(listing, numbers)


def resolve(items, snap):
    """(targets, missing names) for items: ids are checked against the spool, names
    and patterns against the snapshot's jobs. An id the snapshot does not show yet
    (submitted a moment ago, by anyone) is a target too: the daemon answers for it."""
    jobs = snap["jobs"]
    targets, missing = [], []
    for name, tasks in items:
        if name.isdigit():
            jid = int(name)
            if live_in_spool(jid, snap) if jid in jobs else (in_flight(jid) or live_in_spool(jid)):
                targets.append({"id": jid, "tasks": tasks})
            else:
                missing.append(name)
            continue
        import fnmatch
        found = [jid for jid, info in sorted(jobs.items())
                 if fnmatch.fnmatchcase(info["name"], name) and _has_live_rows(snap, jid)
                 and live_in_spool(jid, snap)]
        if not found:
            missing.append(name)
        targets.extend({"id": jid, "tasks": tasks} for jid in found)
    return targets, missing


def _has_live_rows(snap, jid):
    return any(r["id"] == jid and r["state"] != "z" for r in snap["rows"])


def rows_of(snap, jid):
    return [r for r in snap["rows"] if r["id"] == jid and r["state"] != "z"]


def task_numbers(row):
    """Task numbers covered by a row (None for a non-array row)."""
    if row.get("task") is not None:
        return [row["task"]]
    if not row.get("tasks"):
        return None
    out = []
    for first, last, step in row["tasks"]:
        out.extend(range(first, last + 1, step))
    return out


def in_ranges(number, ranges):
    return any(first <= number <= last and (number - first) % step == 0 for first, last, step in ranges)


def narrow(snap, target):
    """``(target, None)`` with the tasks a target names that exist, or ``(None, line)``
    when it names none (Grid Engine's "comprises no tasks"). A job that is not an array
    has the one task 1: naming it means the whole job."""
    ranges = target["tasks"]
    if ranges is None or target["id"] not in snap["jobs"]:
        return target, None
    jid = target["id"]
    if snap["jobs"][jid].get("array"):
        live = [n for row in rows_of(snap, jid) for n in (task_numbers(row) or ())]
    else:
        live = [1]
    if any(in_ranges(n, ranges) for n in live):
        return ({"id": jid, "tasks": None} if live == [1] and not snap["jobs"][jid].get("array")
                else target), None
    first, last, step = ranges[0]
    if first == last:
        return None, f'job "{jid}" task "{first}" does not exist'
    return None, f'job "{jid}" task id range "{first}-{last}:{step}" comprises no tasks'


def jobs_of_users(snap, users):
    live = {r["id"] for r in snap["rows"] if r["state"] != "z"}
    return [{"id": jid, "tasks": None} for jid, info in sorted(snap["jobs"].items())
            if jid in live and ("*" in users or info["owner"] in users)]


def of_users(items, users):
    """The job words ``items`` narrowed to the jobs of ``users``, in their order: with a
    job list, -u is a filter, as Grid Engine's qmaster applies it (``qdel '*' -u bob``
    deletes bob's jobs, not everybody's; ``*`` names every user). Each word is matched on
    its own, as the qmaster answers each job id or name of the list in turn; one that
    names no job of those users stays in its place as an answered item ``(name, tasks,
    line)`` (``answered``), the line ``not_of_users`` words."""
    snap = job_status(items, users)
    wanted = set(users)
    kept = []
    for name, tasks in items:
        targets, _missing = resolve([(name, tasks)], snap)
        if "*" not in wanted:
            targets = [t for t in targets if (snap["jobs"].get(t["id"]) or {}).get("owner") in wanted]
        if not targets:
            kept.append((name, tasks, not_of_users(name, users)))
        elif "*" in wanted:
            kept.append((name, tasks))
        else:
            kept.extend((str(t["id"]), t["tasks"]) for t in targets)
    return kept


def answered(item):
    """The line an item of ``of_users`` is answered with in its place (one that names no
    job of the -u users), or None for a job word to act on."""
    return item[2] if len(item) > 2 else None


def users_shown(users):
    """The users of a -u list as Grid Engine's qmaster names them in its answers: as
    given, at most 20 of them (then ``...``), joined by commas."""
    return ",".join(users[:20]) + (",..." if len(users) > 20 else "")


#: Grid Engine's answer when a -u list of all users (``*``) finds no job
NO_JOBS = "There are no jobs registered"


def no_jobs(users):
    """Grid Engine's answer to a -u list that matches no job in the system (qdel, qhold,
    qrls and qalter print it on standard output)."""
    if "*" in users:
        return NO_JOBS
    return f"There is no job registered for the following users: {users_shown(users)}"


def not_of_users(name, users):
    """Grid Engine's answer for a job id or name of a -u command that names no job of
    those users (for all users, ``*``: no job at all)."""
    if "*" in users:
        return NO_JOBS
    return f"The job {name} of user(s) {users_shown(users)} does not exist"


def run_command(argv, usage, parse, act, prefix=""):
    """The frame of qdel, qhold and qrls: -help, argument errors with the usage text,
    "no job argument", then ``act(items, users, option)`` with errors as one line.

    ``parse(argv)`` returns (option, users, job words). With -u and a job list, the
    list is narrowed to the users' jobs (``of_users``) and ``act`` gets it without the
    users: each job word that names no job of theirs is an answered item, which ``act``
    prints in its place among the answers for the others, as Grid Engine's qmaster
    answers the words in turn.
    """
    import sys
    from gridtools.errors import GridError
    if "-help" in argv:
        sys.stdout.write("SGE 8.1.9\n" + usage)
        return 0
    try:
        option, users, words = parse(argv)
        items = split_items(words)
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n" if getattr(exc, "bare", False) else f"{prefix}{exc}\n{usage}")
        return 1
    if not items and users is None:
        sys.stderr.write("error: no job argument given\n" + usage)
        return 1
    try:
        if items and users is not None:
            items, users = of_users(items, users), None
        return act(items, users, option)
    except GridError as exc:
        (sys.stdout if getattr(exc, "answer", False) else sys.stderr).write(f"{exc}\n")
        return exc.exit_code
