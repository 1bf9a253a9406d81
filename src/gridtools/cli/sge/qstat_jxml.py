"""qstat -j as XML (Grid Engine's detailed_job_info layout) and as JSON.

``qstat -j job_list -xml`` prints ``<detailed_job_info>`` with one
``<element>`` per job under ``<djob_info>`` (the JB_* fields in Grid
Engine's order) and the scheduler messages under ``<messages>``;
``qstat -j -xml`` prints the messages alone (``<message>``); identifiers
that match no job give ``<unknown_jobs>`` and exit status 1. The JSON form
carries the same content with the field names of the text output.
"""

import json

from gridtools.cli.sge import qstat_j, qstat_msgs, qstat_report, xmlout
from gridtools.model import perange

#: valtype numbers of complex types in Grid Engine's request lists
_VALTYPE = {"INT": 1, "STRING": 2, "TIME": 3, "MEMORY": 4, "BOOL": 5, "DOUBLE": 6,
            "RESTRING": 7, "HOST": 8, "CSTRING": 9}
_RUNNING_STATUS = 128


def _bool(value):
    return "true" if value else "false"


def _path_list(w, tag, items):
    if not items:
        return
    w.open(tag)
    for host, path in items:
        w.open("path_list")
        w.leaf("PN_path", path)
        w.leaf("PN_host", host or "")
        w.leaf("PN_file_host", "")
        w.leaf("PN_file_staging", "false")
        w.close()
    w.close()


def _requests(w, tag, mapping, snap):
    if not mapping:
        return
    complexes = snap.get("complexes") or {}
    w.open(tag)
    for name, value in mapping.items():
        w.open("qstat_l_requests")
        w.leaf("CE_name", name)
        w.leaf("CE_valtype", _VALTYPE.get((complexes.get(name) or [None, "STRING"])[1], 2))
        w.leaf("CE_stringval", value)
        w.close()
    w.close()


def _list(w, tag, sub, field, items):
    if not items:
        return
    w.open(tag)
    for item in items:
        w.open(sub)
        w.leaf(field, item)
        w.close()
    w.close()


def _env(w, spec):
    sge_o = spec.get("sge_o") or {}
    pairs = [(f"__SGE_PREFIX__O_{k}", sge_o[k]) for k in ("HOME", "LOGNAME", "PATH", "SHELL", "MAIL")
             if k in sge_o]
    env = dict(spec.get("submit_env") or {}) if spec.get("export_all") else {}
    env.update(spec.get("env") or {})
    if "TERM" not in env:
        pairs.append(("TERM", None))        # (as Grid Engine's qsub records it: no value)
    pairs += list(env.items())
    pairs += [(f"__SGE_PREFIX__O_{k}", sge_o[k]) for k in ("HOST", "WORKDIR") if k in sge_o]
    w.open("JB_env_list")
    for name, value in pairs:
        w.open("job_sublist")
        w.leaf("VA_variable", name)
        if value not in (None, ""):
            w.leaf("VA_value", value)
        w.close()
    w.close()


def _ranges(w, tag, sub, first, last, step):
    w.open(tag)
    w.open(sub)
    w.leaf("RN_min", first)
    w.leaf("RN_max", last)
    w.leaf("RN_step", step)
    w.close()
    w.close()


def _tasks(w, state):
    tasks = qstat_j._task_states(state)
    shown = [(n, t) for n, t in sorted(tasks.items()) if t.get("state") in ("running", "error")]
    if not shown:
        return
    w.open("JB_ja_tasks")
    for number, task in shown:
        w.open("ulong_sublist")
        w.leaf("JAT_status", _RUNNING_STATUS if task.get("state") == "running" else 0)
        w.leaf("JAT_task_number", number)
        if task.get("state") == "running":
            w.leaf("JAT_start_time", int(task.get("start_time") or 0))
            w.leaf("JAT_ntix", "0.500000")
        else:
            _list(w, "JAT_message_list", "mes_list", "QIM_message", [task.get("error_reason") or ""])
        w.close()
    w.close()


def _head(w, spec, snap):
    w.leaf("JB_job_number", spec["id"])
    w.leaf("JB_ar", spec.get("ar") or 0)
    if not spec.get("binary") and spec.get("script_name") is not None:
        w.leaf("JB_exec_file", f"job_scripts/{spec['id']}")
    w.leaf("JB_submission_time", int(spec.get("submit_time") or 0))
    for tag, key in (("JB_owner", "owner"), ("JB_uid", "uid"), ("JB_group", "group"), ("JB_gid", "gid")):
        if spec.get(key) is not None:
            w.leaf(tag, spec[key])
    w.leaf("JB_account", spec.get("account") or "sge")
    public = spec.get("public")         # another user's job: its private fields are left out
    w.leaf("JB_merge_stderr", _bool(spec.get("join")))
    if not public:
        w.open("JB_mail_list")
        for address in spec.get("mail_list") or ():
            user, _, host = address.partition("@")
            w.open("element")
            w.leaf("MR_user", user)
            w.leaf("MR_host", host)
            w.close()
        w.close()
    if spec.get("project"):
        w.leaf("JB_project", spec["project"])
    w.leaf("JB_notify", _bool(spec.get("notify")))
    w.leaf("JB_job_name", spec.get("name", ""))


def _body(w, spec, state, snap):
    res, queues = spec.get("resources") or {}, spec.get("queues") or {}
    _path_list(w, "JB_stdout_path_list", qstat_j.path_list(spec, "stdout"))
    w.leaf("JB_jobshare", spec.get("jobshare", 0))
    _requests(w, "JB_hard_resource_list", res.get("hard"), snap)
    _requests(w, "JB_soft_resource_list", res.get("soft"), snap)
    _list(w, "JB_hard_queue_list", "destin_ident_list", "QR_name", queues.get("hard"))
    _list(w, "JB_soft_queue_list", "destin_ident_list", "QR_name", queues.get("soft"))
    if spec.get("shell"):
        shells = spec["shell"]
        _path_list(w, "JB_shell_list", [[None, shells]] if isinstance(shells, str) else shells)
    if not spec.get("public"):
        _env(w, spec)
        _list(w, "JB_job_args", "element", "ST_name", [str(a) for a in spec.get("args") or ()])
        w.leaf("JB_script_file", spec.get("command") or spec.get("script_name") or "STDIN")
    _tasks(w, state)
    if spec.get("cwd"):
        w.leaf("JB_cwd", spec["cwd"])
    _path_list(w, "JB_stderr_path_list", qstat_j.path_list(spec, "stderr"))


def _dependencies(w, spec, snap):
    live = set(qstat_j.live_jobs(snap))
    preds = [p for p in spec.get("predecessors") or () if p in live]
    succ = [j for j in sorted(live) if spec["id"] in (snap["jobs"].get(j, {}).get("predecessors") or ())]
    _list(w, "JB_jid_predecessor_list", "ulong_sublist", "JRE_job_number", preds)
    _list(w, "JB_jid_successor_list", "ulong_sublist", "JRE_job_number", succ)


def _tail(w, spec, snap):
    w.leaf("JB_deadline", int(spec.get("deadline") or 0))
    w.leaf("JB_execution_time", int(spec.get("start_at") or 0))
    if spec.get("ckpt"):
        w.leaf("JB_checkpoint_name", spec["ckpt"])
    for tag in ("JB_checkpoint_attr", "JB_checkpoint_interval"):
        w.leaf(tag, 0)
    public = spec.get("public")
    w.leaf("JB_reserve", _bool(spec.get("reserve")))
    w.leaf("JB_mail_options", 0)
    _path_list(w, "JB_stdin_path_list", qstat_j.path_list(spec, "stdin"))
    w.leaf("JB_priority", 1024 + int(spec.get("priority") or 0))
    w.leaf("JB_restart", {None: 0, True: 1, False: 2}.get(spec.get("rerun"), 0))
    w.leaf("JB_verify", 0)
    _list(w, "JB_master_hard_queue_list", "destin_ident_list", "QR_name", spec.get("masterq"))
    if not public:
        w.leaf("JB_script_size", 0)
    if spec.get("pe"):
        w.leaf("JB_pe", spec["pe"][0])
        w.open("JB_pe_range")
        for low, high in perange.ranges(spec["pe"]):
            w.open("ranges")
            w.leaf("RN_min", low)
            w.leaf("RN_max", high or 9999999)
            w.leaf("RN_step", 1)
            w.close()
        w.close()
    _list(w, "JB_jid_request_list", "ulong_sublist", "JRE_job_name", spec.get("hold_jid"))
    w.leaf("JB_verify_suitable_queues", qstat_j.VERIFY.get(spec.get("verify"), 0))
    for tag in ("JB_soft_wallclock_gmt", "JB_hard_wallclock_gmt"):
        w.leaf(tag, 0)
    w.leaf("JB_override_tickets", spec.get("override_tickets") or 0)
    w.leaf("JB_version", spec.get("version") or 0)
    _ranges(w, "JB_ja_structure", "task_id_range", *(spec.get("tasks") or (1, 1, 1)))
    w.leaf("JB_type", 0)                 # (Grid Engine's bit field: gridtools sets none)
    _binding(w)
    w.leaf("JB_ja_task_concurrency", spec.get("tc") or 0)
    w.leaf("JB_nurg", f"{_nurg(spec['id'], snap):f}")


def _binding(w):
    w.open("JB_binding")
    w.open("element")
    for tag, value in (("BN_strategy", "no_job_binding"), ("BN_type", 0), ("BN_parameter_n", 0),
                       ("BN_parameter_socket_offset", 0), ("BN_parameter_core_offset", 0),
                       ("BN_parameter_striding_step_size", 0),
                       ("BN_parameter_explicit", "no_explicit_binding")):
        w.leaf(tag, value)
    w.close()
    w.close()


def _nurg(job_id, snap):
    scores = qstat_report.Scores(snap)
    rows = [r for r in snap["rows"] if r["id"] == job_id]
    return scores.of(rows[0])["nurg"] if rows else 0.0


def _messages(w, global_lines, per_job):
    w.open("element")
    if per_job:
        w.open("SME_message_list")
        for job_id, lines in sorted(per_job.items()):
            for line in lines:
                w.open("element")
                _list(w, "MES_job_number_list", "ulong_sublist", "ULNG_value", [job_id])
                w.leaf("MES_message_number", qstat_msgs.job_message(line)[0])
                w.leaf("MES_message", line)
                w.close()
        w.close()
    w.open("SME_global_message_list")
    for line in global_lines:
        w.open("element")
        w.leaf("MES_message_number", qstat_msgs.global_number(line))
        w.leaf("MES_message", line)
        w.close()
    w.close()
    w.close()


def details_xml(found, snap):
    w = xmlout.Writer("detailed_job_info", xmlout.DETAILED_XSD)
    w.open("djob_info")
    for job_id in found:
        spec, state = qstat_j.load_spec(job_id, snap)
        w.open("element")
        _head(w, spec, snap)
        _body(w, spec, state, snap)
        _dependencies(w, spec, snap)
        _tail(w, spec, snap)
        w.close()
    w.close()
    global_lines, per_job = qstat_msgs.split(snap)
    w.open("messages")
    _messages(w, global_lines, {j: per_job[j] for j in found if j in per_job})
    w.close()
    return w.text()


def messages_xml(snap):
    w = xmlout.Writer("message", xmlout.MESSAGE_XSD)
    global_lines, per_job = qstat_msgs.split(snap)
    _messages(w, global_lines, per_job)
    return w.text()


def unknown_xml(missing):
    w = xmlout.Writer("unknown_jobs", xmlout.DETAILED_XSD)
    for ident in missing:
        w.open("element")
        w.leaf("ST_name", ident)
        w.close()
    return w.text()


# ---------------------------------------------------------------- JSON

def _key(label):
    return label.replace(" (req)", "_req").replace(" ", "_").replace("-", "_")


def job_json(job_id, snap):
    spec, state = qstat_j.load_spec(job_id, snap)
    pairs = (qstat_j.identity_fields(spec) + qstat_j.request_fields(spec) + qstat_j.body_fields(spec)
             + qstat_j.dependency_fields(spec, snap))
    obj = {_key(label): value for label, value in pairs}
    for line in qstat_j.tail_fields(spec):
        label, _, value = line.partition(":")
        obj[_key(label)] = value.strip()
    own = qstat_j.task_request_groups(spec, job_id, snap)
    if own:                             # (procs of an HTCondor cluster that ask otherwise)
        obj["task_requests"] = [{"tasks": tasks, _key(label): value} for label, tasks, value in own]
    tasks = []
    for number, task in sorted(qstat_j._task_states(state).items()):
        if task.get("state") in ("running", "error"):
            tasks.append({"task": number, "state": task["state"],
                          "error_reason": task.get("error_reason") or None})
    obj["tasks"] = tasks
    global_lines, per_job = qstat_msgs.split(snap)
    obj["scheduling_info"] = global_lines + per_job.get(job_id, [])
    return obj


def show(snap, opts, out):
    if not opts.job_ids:
        global_lines, per_job = qstat_msgs.split(snap)
        if opts.json:
            groups = [{"number": n, "message": text, "jobs": ids}
                      for n, text, ids in qstat_msgs.grouped(per_job)]
            out.write(json.dumps({"messages": {"global": global_lines, "jobs": groups}}, indent=2) + "\n")
        else:
            out.write(messages_xml(snap))
        return 0
    found, missing = qstat_j.resolve(opts.job_ids, snap)
    if not found:
        out.write(json.dumps({"unknown_jobs": missing}, indent=2) + "\n" if opts.json else unknown_xml(missing))
        return 1
    if opts.json:
        out.write(json.dumps({"jobs": [job_json(j, snap) for j in found]}, indent=2) + "\n")
    else:
        out.write(details_xml(found, snap))
    return 0
