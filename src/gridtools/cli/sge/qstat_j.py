"""qstat -j: the long description of jobs, or the scheduler's messages.

``qstat -j job_list`` prints, for each pending or running job named by
number, name or pattern, its description from the spool in Grid Engine's
field layout (``label:`` padded to 28 columns), the usage of its running
tasks, the error reasons of tasks in error state and the scheduling info.
A finished or unknown job does not exist for -j (unless leave_in_queue keeps
it in the queue, as condor_q shows it): when nothing matches,
stderr gets ``Following jobs do not exist:`` and the identifiers, exit 1.
``qstat -j`` alone prints the global scheduling messages and, per message
kind, the jobs it applies to.
"""

import time

from gridtools import wildcards
from gridtools.cli.sge import qstat_msgs, qstat_text

WIDTH = 28
RULE = "=" * 62
#: qsub -w letters as Grid Engine numbers them (verify_suitable_queues)
VERIFY = {"w": 1, "e": 2, "v": 3, "p": 4}


def field(label, value):
    """``label:`` and ``value`` in Grid Engine's columns; a label too long for them keeps
    two blanks before its value, as Grid Engine prints ``ja_ad_predecessor_list (req):``.
    A value is one line: its control characters (a line break in an argument, a -v value
    or a context variable, which would make a line of its own for a script reading the
    output) are shown as escapes (``formats.safetext.escape``)."""
    head = label + ":"
    value = str(value)
    if not value.isprintable():
        from gridtools.formats.safetext import escape
        value = escape(value)
    return f"{head:<{WIDTH}}{value}" if len(head) < WIDTH else f"{head}  {value}"


def ctime(epoch):
    """A time as C's ctime() writes it (the day padded with a space: ``Wed Dec  2``)."""
    return time.asctime(time.localtime(epoch))


def error_text(spec, task):
    """The error reason of a task in error state, as Grid Engine's shepherd wrote it:
    ``MM/DD/YYYY HH:MM:SS [uid:pid]: error: reason``, the time when the task went
    into error state, the job owner's uid and the pid of the shepherd that found it
    (0 for a task put there before gridtools kept it)."""
    reason = task.get("error_reason") or task.get("failed_reason") or "unknown"
    when = task.get("end_time") or 0
    if not when:
        return reason
    stamp = time.strftime("%m/%d/%Y %H:%M:%S", time.localtime(when))
    return f"{stamp} [{spec.get('uid', '')}:{int(task.get('error_pid') or 0)}]: error: {reason}"


def live_jobs(snap):
    """Ids of jobs with a task pending, running or in error, or a completed task that
    stays in the queue (an HTCondor job's, by leave_in_queue: condor_q shows it, qstat
    -s z lists it), in ascending order."""
    live = {r["id"] for r in snap["rows"] if r["state"] != "z"}
    for r in snap["rows"]:
        if r["state"] == "z" and r["id"] not in live:
            info = snap["jobs"].get(r["id"]) or {}
            if ((info.get("condor") if isinstance(info, dict) else None) or {}).get("kept"):
                live.add(r["id"])
    return sorted(live)


def resolve(identifiers, snap):
    """Job ids matching -j identifiers (numbers, names, name patterns), and the unmatched ones."""
    live = live_jobs(snap)
    found, missing = [], []
    for ident in identifiers:
        head = ident.split(".")[0]
        if head.isdigit():
            hits = [int(head)] if int(head) in live else []
        else:
            hits = [j for j in live if wildcards.match(snap["jobs"][j].get("name", ""), ident)]
        if not hits:
            missing.append(ident)
        found += [h for h in hits if h not in found]
    return found, missing


def load_spec(job_id, snap):
    """The job description and task states from the spool (what the snapshot knows
    otherwise); its ``version`` counts the job's alterations and hold changes."""
    from gridtools.spool import jobs as jobstore
    try:
        spec = jobstore.read_spec(job_id)
        state = jobstore.read_state(job_id) or {}
    except Exception:  # noqa: BLE001 - a job file being rewritten or removed right now
        spec, state = None, {}
    if spec is None:
        spec = (snap.get("unprocessed") or {}).get(job_id)      # the caller's, not taken in yet
    if spec is None:
        spec = _spec_from_info(job_id, snap["jobs"].get(job_id, {}))
    mods = state.get("mods")
    if type(mods) is int and mods > 0:      # (hold changes count as modifications too)
        spec = dict(spec, version=int(spec.get("version") or 0) + mods)
    return spec, state


def _spec_from_info(job_id, info):
    """The description of another user's job as far as the status publishes it
    (``public``): the fields it does not carry are left out of -j, never shown empty."""
    res = {"hard": dict(info.get("hard") or {}), "soft": dict(info.get("soft") or {})}
    return {"id": job_id, "name": info.get("name", ""), "owner": info.get("owner", ""),
            "public": True, "uid": info.get("uid"), "gid": info.get("gid"), "binary": info.get("binary"),
            "jobshare": info.get("jobshare", 0), "binding": info.get("binding"),
            "deadline": info.get("deadline"), "start_at": info.get("start_at"), "ckpt": info.get("ckpt"),
            "hold_jid_ad": info.get("hold_jid_ad") or [], "ad_predecessors": info.get("ad_predecessors") or [],
            "masterq": info.get("masterq") or [], "tc": info.get("tc"),
            "group": info.get("group", ""), "submit_time": info.get("submit_time", 0.0),
            "priority": info.get("priority", 0), "resources": res, "pe": info.get("pe"),
            "hold_jid": info.get("hold_jid") or [], "predecessors": info.get("predecessors") or [],
            "tasks": info.get("tasks"), "project": info.get("project"), "account": info.get("account", "sge"),
            "ar": info.get("ar"), "queues": {"hard": info.get("hard_queues") or [],
                                               "soft": info.get("soft_queues") or []},
            "reserve": info.get("reserve", False), "join": info.get("join", False),
            "notify": info.get("notify", False), "rerun": info.get("rerun"),
            "mail_options": info.get("mail_options")}


# ---------------------------------------------------------------- job fields

def _paths(items):
    return ",".join(f"NONE:{host or 'NONE'}:{path}" for host, path in items)


def _shells(spec):
    """The -S list; a job spooled before -S kept host names holds one path."""
    shells = spec["shell"]
    return [[None, shells]] if isinstance(shells, str) else shells


def _pairs(mapping):
    return ",".join(f"{k}={v}" for k, v in mapping.items())


def _env(spec):
    """The job's variables, TERM first when it has none of its own (as Grid Engine's qsub
    records it, without a value: the job gets it empty)."""
    env = dict(spec.get("submit_env") or {}) if spec.get("export_all") else {}
    env.update(spec.get("env") or {})
    if "TERM" not in env:
        env = {"TERM": "", **env}
    return ",".join(f"{k}={v}" if v != "" else f"{k}=NONE" for k, v in env.items())


def identity_fields(spec):
    sge_o = spec.get("sge_o") or {}
    out = [("job_number", spec["id"])]
    if not spec.get("binary") and spec.get("script_name") is not None:
        out.append(("exec_file", f"job_scripts/{spec['id']}"))
    out.append(("submission_time", ctime(spec.get("submit_time", 0))))
    for label in ("owner", "uid", "group", "gid"):
        if spec.get(label) is not None:         # (a status of an earlier version: no uid)
            out.append((label, spec[label]))
    for label, key in (("sge_o_home", "HOME"), ("sge_o_log_name", "LOGNAME"), ("sge_o_path", "PATH"),
                       ("sge_o_shell", "SHELL"), ("sge_o_workdir", "WORKDIR"), ("sge_o_host", "HOST")):
        if key in sge_o:
            out.append((label, sge_o[key]))
    if spec.get("start_at"):
        out.append(("execution_time", ctime(spec["start_at"])))
    out.append(("account", spec.get("account") or "sge"))
    if spec.get("ckpt"):
        out.append(("checkpoint_object", spec["ckpt"]))
        letters = _ckpt_letters(spec)
        if letters:
            out.append(("checkpoint_attr", letters))
    interval = _ckpt_interval(spec.get("ckpt_when"))
    if interval:
        out.append(("checkpoint_interval", f"{interval} seconds"))
    return out


#: the order Grid Engine's qstat -j writes checkpoint occasions in
_CKPT_ORDER = "msxrn"


def _ckpt_letters(spec):
    """The job's checkpoint occasions: its ``-c`` letters, else its environment's ``when``
    (which Grid Engine copies into the job), in Grid Engine's order."""
    when = spec.get("ckpt_when") or ""
    if not when or _ckpt_interval(when):
        from gridtools import cell
        import re
        try:
            with open(cell.etc("ckpt", spec["ckpt"]), encoding="utf-8") as fh:
                found = re.search(r"(?m)^when[ \t]+(\S+)", fh.read(65536))
        except (OSError, ValueError):
            found = None
        when = found.group(1) if found else ""
    return "".join(c for c in _CKPT_ORDER if c in when)


def _ckpt_interval(when):
    """Seconds of a ``-c`` interval, else 0."""
    if not when or not (when[:1].isdigit() or when[:1] == ":"):
        return 0
    from gridtools.formats.values import parse_time
    try:
        return int(parse_time(when))
    except Exception:  # noqa: BLE001 - qsub checked it
        return 0


#: the output path lists of an interactive (qrsh, qlogin) job, as Grid Engine's qrsh
#: sets them (qsh.c set_job_info): its streams are the client's, never files
INTERACTIVE_PATHS = {"stdout": [[None, "/dev/null"]], "stderr": [[None, "/dev/null"]], "stdin": None}


def path_list(spec, key):
    """The ``stdout``, ``stderr`` or ``stdin`` path list qstat shows for a job: an
    interactive job's are INTERACTIVE_PATHS, whatever leads its streams to its client."""
    if spec.get("interactive"):
        return INTERACTIVE_PATHS[key]
    return spec.get(key)


def request_fields(spec):
    res, queues = spec.get("resources") or {}, spec.get("queues") or {}
    out = []
    if spec.get("cwd"):
        out.append(("cwd", spec["cwd"]))
    if path_list(spec, "stderr"):
        out.append(("stderr_path_list", _paths(path_list(spec, "stderr"))))
    if spec.get("reserve"):
        out.append(("reserve", "y"))
    if spec.get("join"):
        out.append(("merge", "y"))
    for label, value in (("hard resource_list", _pairs(res.get("hard") or {})),
                         ("soft resource_list", _pairs(res.get("soft") or {})),
                         ("hard_queue_list", ",".join(queues.get("hard") or [])),
                         ("soft_queue_list", ",".join(queues.get("soft") or [])),
                         ("master_hard_queue_list", ",".join(spec.get("masterq") or []))):
        if value:
            out.append((label, value))
    if spec.get("rerun") is not None:
        out.append(("restart", "y" if spec["rerun"] else "n"))
    if spec.get("mail_options"):
        out.append(("mail_options", spec["mail_options"]))
    if not spec.get("public"):          # (private: the owner's addresses)
        out.append(("mail_list", ",".join(spec.get("mail_list") or [])))
    out.append(("notify", "TRUE" if spec.get("notify") else "FALSE"))
    out.append(("job_name", spec.get("name", "")))
    return out


def body_fields(spec):
    out = []
    for label, key in (("stdout_path_list", "stdout"), ("stdin_path_list", "stdin")):
        if path_list(spec, key):
            out.append((label, _paths(path_list(spec, key))))
    if spec.get("priority"):
        out.append(("priority", spec["priority"]))
    out.append(("jobshare", spec.get("jobshare", 0)))
    if spec.get("shell"):
        out.append(("shell_list", ",".join(f"{host or 'NONE'}:{path}" for host, path in _shells(spec))))
    if not spec.get("public"):
        out.append(("env_list", _env(spec)))
    if spec.get("context"):
        out.append(("context", _pairs(spec["context"])))
    if spec.get("args"):
        out.append(("job_args", ",".join(str(a) for a in spec["args"])))
    if not spec.get("public"):
        out.append(("script_file", spec.get("command") or spec.get("script_name") or "STDIN"))
    if spec.get("deadline"):
        out.append(("deadline", ctime(spec["deadline"])))
    return out


def dependency_fields(spec, snap):
    live = set(live_jobs(snap))
    me = spec["id"]
    successors = [j for j in sorted(live)
                  if me in (snap["jobs"].get(j, {}).get("predecessors") or ())]
    out = []
    for label, items in (("jid_predecessor_list (req)", spec.get("hold_jid")),
                         ("jid_predecessor_list", [p for p in spec.get("predecessors") or () if p in live]),
                         ("jid_successor_list", successors),
                         ("ja_ad_predecessor_list (req)", spec.get("hold_jid_ad")),
                         ("ja_ad_predecessor_list",
                          [p for p in spec.get("ad_predecessors") or () if p in live])):
        if items:
            out.append((label, ",".join(str(i) for i in items)))
    return out


def tail_fields(spec):
    out = []
    if spec.get("verify") in VERIFY:
        out.append(("verify_suitable_queues", VERIFY[spec["verify"]]))
    for label, key in (("project", "project"), ("ar_id", "ar"), ("version", "version")):
        if spec.get(key):
            out.append((label, spec[key]))
    if spec.get("tasks"):
        first, last, step = spec["tasks"]
        out.append(("job-array tasks", f"{first}-{last}:{step}"))
    if spec.get("tc"):
        out.append(("task_concurrency", spec["tc"]))
    lines = [field(label, value) for label, value in out]
    if spec.get("pe"):
        lines.append(f"parallel environment:  {spec['pe'][0]} range: {qstat_text.pe_range(spec['pe'])}")
    lines.append(field("binding", spec.get("binding") or "NONE"))
    lines.append(field("job_type", "binary" if spec.get("binary") else "NONE"))
    return lines


# ---------------------------------------------------------------- tasks

def _task_states(state):
    return {int(k): v for k, v in (state.get("tasks") or {}).items()}


def task_lines(spec, state):
    """usage/binding lines of running tasks and error reasons of tasks in error state."""
    from gridtools.cli.sge import qstat_usage
    lines = []
    tasks = _task_states(state)
    for number in sorted(tasks):
        task = tasks[number]
        if task.get("state") == "running":
            lines.append(field(f"usage {number:>9}", qstat_usage.usage_text(spec["id"], number, task)))
            lines.append(field(f"binding {number:>7}", spec.get("binding") or "NONE"))
    for number in sorted(tasks):
        task = tasks[number]
        if task.get("state") == "error":
            lines.append(f"error reason {number:>10}:      {error_text(spec, task)}")
    return lines


def task_list(numbers):
    """Task numbers as a list of single numbers and ranges without a step (``2,4-6``):
    no colon, so that a line's label ends at its first one."""
    runs = []
    for number in sorted(numbers):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _task_field(label, tasks, value):
    return f"{label} {tasks}:".ljust(WIDTH - 1) + " " + value


def request_task_lines(spec, job_id, snap):
    """Lines of the tasks that ask for other resources than the job (the procs of an
    HTCondor cluster whose requests differ from proc 0's, which the job's lines show):
    ``hard resource_list TASKS:`` and ``parallel environment TASKS:``, each with what
    those tasks ask for instead (``NONE`` for nothing), for the tasks still in the
    system (their rows' ``req_hard`` and ``req_pe``)."""
    return [_task_field(label, tasks, value) for label, tasks, value in
            task_request_groups(spec, job_id, snap)]


def task_request_groups(spec, job_id, snap):
    """(label, tasks, value) of each line of ``request_task_lines``."""
    hard0 = (spec.get("resources") or {}).get("hard") or {}
    pe0 = list(spec["pe"]) if spec.get("pe") else None
    by_hard, by_pe = {}, {}
    for row in snap["rows"]:
        if row["id"] != job_id or row["state"] == "z" or ("req_hard" not in row and "req_pe" not in row):
            continue
        numbers = [row["task"]] if row.get("task") is not None else [
            n for first, last, step in row.get("tasks") or () for n in range(first, last + 1, step)]
        hard, pe = row.get("req_hard", hard0), row.get("req_pe", pe0)
        if hard != hard0:
            by_hard.setdefault(_pairs(hard) or "NONE", []).extend(numbers)
        if (list(pe) if pe else None) != pe0:
            text = f"{pe[0]} range: {qstat_text.pe_range(pe)}" if pe else "NONE"
            by_pe.setdefault(text, []).extend(numbers)
    found = []
    for label, groups in (("hard resource_list", by_hard), ("parallel environment", by_pe)):
        for value, numbers in sorted(groups.items(), key=lambda item: min(item[1])):
            found.append((label, task_list(numbers), value))
    return found


def scheduling_lines(job_id, snap):
    """The scheduling info of one job: the global messages, then the job's own."""
    global_lines, per_job = qstat_msgs.split(snap, only={job_id})
    return _indented("scheduling info", global_lines + per_job.get(job_id, []))


def _indented(label, lines):
    return [field(label, line) if i == 0 else " " * WIDTH + line for i, line in enumerate(lines)]


def verify_lines(spec):
    """``qsub -verify``: the job a submission would make, as Grid Engine's qsub shows it
    before the job is sent: no number yet, no script in the spool, no submission time,
    and no owner (the master sets them); the dependencies as requested."""
    unsent = ("job_number", "exec_file", "submission_time", "owner", "uid", "group", "gid")
    pairs = [("job_number", "unassigned"), ("owner", ""), ("uid", 0), ("group", ""), ("gid", 0)]
    pairs += [pair for pair in identity_fields(spec) if pair[0] not in unsent]
    pairs += request_fields(spec) + body_fields(spec)
    for label, key in (("jid_predecessor_list (req)", "hold_jid"), ("ja_ad_predecessor_list (req)", "hold_jid_ad")):
        if spec.get(key):
            pairs.append((label, ",".join(str(i) for i in spec[key])))
    return [field(label, value) for label, value in pairs] + tail_fields(spec)


def describe(job_id, snap):
    """All lines of one job's -j block."""
    spec, state = load_spec(job_id, snap)
    pairs = identity_fields(spec) + request_fields(spec) + body_fields(spec) + dependency_fields(spec, snap)
    lines = [RULE] + [field(label, value) for label, value in pairs]
    lines += tail_fields(spec)
    lines += request_task_lines(spec, job_id, snap)
    lines += task_lines(spec, state)
    lines += scheduling_lines(job_id, snap)
    return lines


# ---------------------------------------------------------------- global messages

def _id_lines(ids, per_line=8, width=70):
    """Job ids as ``qstat -j`` lists them under a message: tab separated, wrapped."""
    rows, text, count = [], "", 0
    for job_id in ids:
        if text and (count >= per_line or len(text) >= width):
            rows.append(text)
            text, count = "", 0
        text += ("\t" if not text else ",\t") + str(job_id)
        count += 1
    rows.append(text)
    return ",\n".join(rows)


def summary_lines(snap):
    """``qstat -j`` without a job list: global messages, then jobs per message kind."""
    global_lines, per_job = qstat_msgs.split(snap)
    lines = _indented("scheduling info", global_lines)
    for i, (_, generic, ids) in enumerate(qstat_msgs.grouped(per_job)):
        if i or global_lines:
            lines.append("")
        lines += [generic, _id_lines(ids)]
    return lines


def show(snap, opts, out):
    if opts.xml or opts.json:
        from gridtools.cli.sge import qstat_jxml
        return qstat_jxml.show(snap, opts, out)
    if not opts.job_ids:
        lines = summary_lines(snap)
        if lines:
            out.write("\n".join(lines) + "\n")
        return 0
    found, missing = resolve(opts.job_ids, snap)
    if not found:
        import sys
        sys.stderr.write("Following jobs do not exist: \n" + ", ".join(missing) + "\n")
        return 1
    lines = []
    for job_id in found:
        lines += describe(job_id, snap)
    out.write("\n".join(lines) + "\n")
    return 0
