"""qalter: change jobs that are pending or running (Grid Engine dialect).

The options are qsub's (the shared table in ``options``) less those that
only make sense at submission, plus qalter's own: ``-h`` with hold letters
(``u o s`` set, ``U O S`` remove, ``n`` removes all), ``-u`` (jobs of users),
``-ot`` (override tickets) and ``-t`` after a job id (the tasks a hold
change concerns). An option replaces what the job had: ``-l`` and ``-q``
the hard or soft list they are given for, ``-hold_jid`` the dependency
list, ``-v``/``-V`` the environment, words after ``--`` the arguments;
``-ac``, ``-dc`` and ``-sc`` edit the context.

``-w v`` and ``-w p`` only report whether the job, with the other changes
of the command line, could run in an empty cell or in the cell as it is now
(see ``qalter_verify``). ``-w e`` refuses and ``-w w`` warns before the
change. The change itself is one ``alter`` request that the daemon checks,
applies and answers (see daemon.alterreq); qalter prints the answer.
"""

import os
import sys

from gridtools.cli.sge import options
from gridtools.errors import GridError, UsageError

USAGE = """usage: qalter [options] job_task_list [-- [command_args]]
       qalter [options] -u user_list [-- [command_args]]
   [-a date_time]  [-A account_string]  [-ac context_list]  [-ar ar_id]
   [-binding [env|pe|set] strategy]  [-c ckpt_selector]  [-ckpt ckpt-name]
   [-cwd]  [-dc simple_context_list]  [-dl date_time]  [-e path_list]
   [-h hold_list]  [-hard]  [-hold_jid job_identifier_list]
   [-hold_jid_ad job_identifier_list]  [-i file_list]  [-j y|n]  [-js job_share]
   [-l resource_list]  [-m mail_options]  [-masterq wc_queue_list]  [-M mail_list]
   [-N name]  [-notify]  [-o path_list]  [-ot override_tickets]  [-p priority]
   [-P project_name]  [-pe pe-name slot_range]  [-q wc_queue_list]  [-R y|n]
   [-r y|n]  [-sc context_list]  [-soft]  [-S path_list]  [-tc max_running_tasks]
   [-u user_list]  [-v variable_list]  [-V]  [-w e|w|n|v|p]  [-wd working_directory]
   [-@ file]
job_task_list           job_tasks[,job_tasks,...]
job_tasks               [job_id['.'task_id_range]|job_name|pattern][' -t 'task_id_range]
"""

#: submit options that have no meaning for a job already in the system
NOT_FOR_QALTER = frozenset({"-clear", "-jsv", "-shell", "-he"})
#: option -> job description fields it replaces
FIELDS_OF = {
    "-a": ("start_at",), "-A": ("account",), "-ar": ("ar",), "-binding": ("binding",),
    "-c": ("ckpt_when",), "-ckpt": ("ckpt",), "-cwd": ("cwd",), "-wd": ("cwd",),
    "-dl": ("deadline",), "-e": ("stderr",), "-hold_jid": ("hold_jid",),
    "-hold_jid_ad": ("hold_jid_ad",), "-i": ("stdin",), "-j": ("join",), "-js": ("jobshare",),
    "-m": ("mail_options",), "-M": ("mail_list",), "-masterq": ("masterq",), "-N": ("name",),
    "-notify": ("notify",), "-o": ("stdout",), "-ot": ("override_tickets",), "-P": ("project",),
    "-p": ("priority",), "-pe": ("pe",), "-R": ("reserve",), "-r": ("rerun",), "-S": ("shell",),
    "-tc": ("tc",), "-v": ("env", "export_all"), "-V": ("env", "export_all"),
}
#: options whose list goes to the hard or the soft part of a field
PART_OF = {"-l": "resources", "-q": "queues"}
CONTEXT_OPS = {"-ac": "add", "-dc": "del", "-sc": "set"}


class Parsed:
    """A qalter command line taken apart."""

    def __init__(self, cwd=None):
        self.req = options.fresh_request()
        self.ctx = options.Context("qalter", cwd)
        self.fields = []            # job description fields set, in order
        self.parts = []             # (field, "hard"/"soft") replaced
        self.context_ops = []
        self.hold_add = ""
        self.hold_remove = ""
        self.job_words = []
        self.args = None
        self.verify = None

    @property
    def users(self):
        return self.ctx.client.get("users")

    def has_change(self):
        return bool(self.fields or self.parts or self.context_ops or self.hold_add
                    or self.hold_remove or self.args is not None)


def parse_args(argv, cwd=None):
    """Split qalter's words into options (applied to a fresh request), job items and arguments."""
    p = Parsed(cwd)
    words = list(argv)
    i, included = 0, 0
    while i < len(words):
        word = words[i]
        if word == "--":
            p.args = words[i + 1:]
            break
        if word == "-@":
            included += 1
            if included > options.MAX_OPTION_FILES:
                raise UsageError(f"-@ option: more than {options.MAX_OPTION_FILES} option files read")
            words[i:i + 2] = _option_file(words, i)
            continue
        if word == "-t":
            p.job_words.extend(words[i:i + 2])
            i += 2
            continue
        if not word.startswith("-") or word == "-":
            p.job_words.append(word)
            i += 1
            continue
        i += 1 + _option(p, word, words, i + 1)
    return p


def _option_file(words, i):
    if i + 1 >= len(words):
        raise UsageError("-@ option must have file argument")
    from gridtools.cli.sge.tokens import read_option_file
    return read_option_file(words[i + 1], missing_ok=False)


def _option(p, word, words, at):
    """Apply one option, ``words[at:]`` following it (not copied: a long option file
    is read in linear time); returns how many argument words it took."""
    if word == "-h":
        _need(word, words, at, 1)
        _hold_letters(p, words[at])
        return 1
    if word in CONTEXT_OPS:
        _need(word, words, at, 1)
        _context(p, CONTEXT_OPS[word], words[at])
        return 1
    entry = options.OPTIONS.get(word)
    if entry is None or entry[2] not in ("all", "alter") or word in NOT_FOR_QALTER:
        raise UsageError(f'invalid option argument "{word}"')
    count = options.arity(word, words, at)
    _need(word, words, at, count)
    if word in PART_OF:
        p.parts.append((PART_OF[word], "soft" if p.ctx.soft else "hard"))
    options.parse([word] + words[at:at + count], p.req, p.ctx, allowed=("all", "alter"), stop_at_arg=False)
    if word == "-w":
        p.verify = p.req["verify"]
    p.fields.extend(f for f in FIELDS_OF.get(word, ()) if f not in p.fields)
    return count


def _need(word, words, at, count):
    if len(words) - at < count:
        raise UsageError(f"{word} option must have argument")


def _hold_letters(p, letters):
    if not letters or any(c not in "uosnUOS" for c in letters):
        raise UsageError(f'Unknown hold list "{letters}" specified to -h option')
    for c in letters:
        if c == "n":
            p.hold_remove += "uos"
        elif c.islower():
            p.hold_add += c
        else:
            p.hold_remove += c.lower()
    p.hold_add = "".join(sorted(set(p.hold_add)))
    p.hold_remove = "".join(sorted(set(p.hold_remove) - set(p.hold_add)))


def _context(p, mode, text):
    from gridtools.cli.sge.optvalues import parse_context
    items = parse_context(text, {"set": "-sc", "add": "-ac", "del": "-dc"}[mode])
    if mode == "set":
        p.context_ops.append(["set"])
    for name, value in items:
        p.context_ops.append(["del", name] if mode == "del" else ["add", name, value])


# ---------------------------------------------------------------- the change set

def changes_of(p):
    """The change set the command line asks for (see model.alteration), checked like qsub's."""
    req = p.req
    changes = {}
    for field in p.fields:
        changes[field] = req[field]
    for field, part in p.parts:
        changes.setdefault(field, {})[part] = req[field][part]
    for field in ("hold_jid", "hold_jid_ad"):
        if field in changes:
            changes[field] = [i for i in changes[field] if i.upper() != "NONE"]
    if "cwd" in changes:
        from gridtools import cell
        from gridtools.cli.sge import submit
        changes["aliases"] = submit.path_aliases(changes["cwd"], cell.hostname())
    if changes.get("export_all"):
        from gridtools.cli.sge.submit import exported
        changes["submit_env"] = exported(os.environ)
    if p.args is not None:
        changes["args"] = list(p.args)
    _check_names(changes)
    return changes



def _check_names(changes):
    """Queues, PE, checkpointing environment, project and resource values must exist and parse."""
    from gridtools.cli.sge import submit
    try:
        submit.check_path_lists(changes)
    except submit.Rejected as exc:
        raise GridError(str(exc)) from None
    probe = options.fresh_request()
    for field in ("masterq", "pe", "ckpt", "project"):
        if changes.get(field):
            probe[field] = changes[field]
    for field in ("queues", "resources"):
        probe[field].update(changes.get(field) or {})
    try:
        submit.check_request(probe)
    except submit.Rejected as exc:
        # (in the words Grid Engine's qmaster answers qalter with, as the daemon's own
        # check of a change words them)
        from gridtools.formats.jobcheck import alter_words
        raise GridError(alter_words(str(exc))) from None
    if "resources" in changes:
        changes["resources"] = {part: probe["resources"][part] for part in changes["resources"]}


# ---------------------------------------------------------------- main

def main(argv, prog="qalter"):
    if "-help" in argv or "--help" in argv:
        sys.stdout.write("SGE 8.1.9\n" + USAGE)
        return 0
    try:
        p = parse_args(argv)
    except UsageError as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return exc.exit_code
    except GridError as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return exc.exit_code
    try:
        return _alter(p)
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code


def _alter(p):
    from gridtools.cli.sge import jobsel, qstatus
    items = jobsel.split_items(p.job_words)
    if p.users is not None:
        # as Grid Engine's qalter: -u stands for every job of the users, in place of
        # the job list given with it (whose words are checked, then dropped)
        items = []
    if not items and p.users is None:
        sys.stderr.write("error: no job argument given\n" + USAGE)
        return 1
    if not p.has_change() and p.verify in (None, "n"):
        raise GridError("error: no option given to change the job")
    changes = changes_of(p)
    snap = qstatus.load()
    targets, missing = _resolve(items, snap, p.verify in (None, "n"))
    if p.users is not None:
        targets = jobsel.jobs_of_users(snap, p.users)
        if not targets:
            print(jobsel.no_jobs(p.users))
            return 1
    if p.verify not in (None, "n"):        # verifying needs what the status shows of a job
        missing += [str(t["id"]) for t in targets if t["id"] not in snap["jobs"]]
        targets = [t for t in targets if t["id"] in snap["jobs"]]
    if p.verify in ("v", "p"):
        from gridtools.cli.sge import qalter_verify
        code = qalter_verify.report(targets, snap, changes, p.context_ops, p.verify)
    else:
        code = 0
        if p.verify in ("e", "w"):
            from gridtools.cli.sge import qalter_verify
            targets, code = qalter_verify.gate(targets, snap, changes, p.context_ops, p.verify)
        if targets and p.has_change():
            code = max(code, _send(targets, p, changes))
    for name in missing:
        print(f'denied: job "{name}" does not exist')
        code = 1
    return code


def _resolve(items, snap, in_order):
    """(targets, missing names) of the job list; ``in_order``: job ids are all targets,
    in the order given, so that the daemon answers for each in its place (an unknown one
    with "denied: job ... does not exist", as Grid Engine's qmaster answers the jobs of
    one qalter in order); only names that match no job are left for qalter to answer."""
    from gridtools.cli.sge import jobsel
    if not in_order:
        return jobsel.resolve(items, snap)
    targets, missing = [], []
    for name, tasks in items:
        if name.isdigit():
            targets.append({"id": int(name), "tasks": tasks})
            continue
        found, unknown = jobsel.resolve([(name, tasks)], snap)
        targets.extend(found)
        missing.extend(unknown)
    return targets, missing


def _send(targets, p, changes):
    """One alter request for all targets; prints the daemon's answer and returns its exit code."""
    from gridtools.cli.ask import ask
    payload = {"targets": targets, "changes": changes, "context_ops": p.context_ops,
               "hold_add": p.hold_add, "hold_remove": p.hold_remove}
    return ask("alter", payload)
