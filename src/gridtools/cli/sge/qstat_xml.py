"""qstat listings as XML (Grid Engine's layout) and as JSON.

XML: ``<job_info>`` holds ``<queue_info>`` (running jobs, or with -f one
``<Queue-List>`` per queue instance with its jobs) and ``<job_info>``
(pending, then finished jobs); both are always present. Element names and
order follow Grid Engine 8.1.9, including the optional ones of -ext, -urg,
-pri, -r, -t and -F. ``qstat -g c -xml`` lists ``<cluster_queue_summary>``
elements.

JSON carries the same information with plain names, see qstat(1):
``{"queues": [...], "jobs": [...]}`` and ``{"cluster_queues": [...]}``.
"""

import time

from gridtools.cli.sge import qstat_queues, qstat_text, xmlout


def iso(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(epoch))


def _d5(value):
    return f"{value:.5f}"


def _d8(value):
    return f"{value:.3g}" if value > 99999999 else f"{value:.0f}"


def job_elements(entry, snap, opts, live):
    """(tag, text, attributes) of one job_list element, in Grid Engine's order."""
    s, job, lay_t = entry.scores, entry.job, "t" in opts.group
    out = [("JB_job_number", entry.id, ()), ("JAT_prio", _d5(s["prio"]), ())]
    if opts.ext:
        out.append(("JAT_ntix", _d5(s["ntckts"]), ()))
    if opts.urg:
        out.append(("JB_nurg", _d5(s["nurg"]), ()))
        out += [(f"JB_{k}", _d8(s[k]), ()) for k in ("urg", "rrcontr", "wtcontr", "dlcontr")]
    if opts.pri:
        out += [("JB_nppri", _d5(s["npprior"]), ()), ("JB_priority", s["ppri"], ())]
    out += [("JB_name", job.get("name", ""), ()), ("JB_owner", job.get("owner", ""), ())]
    if opts.ext:
        out += [("JB_project", job.get("project") or "", ()), ("JB_department", job.get("department") or "", ())]
    out.append(("state", entry.state, ()))
    if (not opts.ext) or opts.tasks or opts.urg or opts.pri:
        tag = "JAT_start_time" if entry.running else "JB_submission_time"
        out.append((tag, iso(entry.row["time"]), ()))
    if opts.urg and job.get("deadline"):
        out.append(("JB_deadline", iso(job["deadline"]), ()))
    if opts.ext and entry.running and entry.master != "SLAVE":
        from gridtools.cli.sge import qstat_usage
        usage = qstat_usage.ext_usage(entry.id, entry.row.get("task") or 1)
        if usage is not None:               # (none until the task's first usage report)
            out += [(f"{name}_usage", _d5(value), ()) for name, value in zip(("cpu", "mem", "io"), usage)]
    if opts.ext and not entry.zombie:
        total, otckt, ftckt, stckt = entry.scores.get("tickets", (0.0, 0.0, 0.0, 0.0))
        out += [("tickets", int(total), ()),
                ("JB_override_tickets", int(job.get("override_tickets") or 0), ())]
        out += [("JB_jobshare", int(job.get("jobshare") or 0), ()), ("otickets", int(otckt), ()),
                ("ftickets", int(ftckt), ()), ("stickets", int(stckt), ())]
        out.append(("JAT_share", _d5(entry.scores.get("share", 0.0)), ()))
    if not opts.full:
        out.append(("queue_name", entry.queue, ()))
    if lay_t:
        out.append(("master", entry.master or "", ()))
    out.append(("slots", entry.slots, ()))
    if entry.array and entry.label:
        out.append(("tasks", entry.label, ()))
    if opts.resources and entry.print_id:
        out += _request_elements(entry, snap, live)
    return out


def _request_elements(entry, snap, live):
    job, row = entry.job, entry.row
    out = [("full_job_name", job.get("name", ""), ())]
    pe = qstat_text.requested_pe(row, job)
    if pe:
        out.append(("requested_pe", qstat_text.pe_range(pe), (("name", pe[0]),)))
        if entry.running:
            granted = sum(g[2] for g in row.get("granted") or [])
            out.append(("granted_pe", granted, (("name", qstat_text.granted_pe(row, pe)),)))
    for name, value in qstat_text.requested_hard(row, job).items():
        contrib = f"{qstat_text.contribution(name, value, job, snap, row):f}"
        out.append(("hard_request", value, (("name", name), ("resource_contribution", contrib))))
    out += [("soft_request", v, (("name", n),)) for n, v in (job.get("soft") or {}).items()]
    for tag, key in (("hard_req_queue", "hard_queues"), ("soft_req_queue", "soft_queues"),
                     ("master_hard_req_queue", "masterq"), ("predecessor_jobs_req", "hold_jid")):
        out += [(tag, q, ()) for q in job.get(key) or ()]
    out += [("predecessor_jobs", p, ()) for p in job.get("predecessors") or () if p in live]
    out += [("ad_predecessor_jobs_req", p, ()) for p in job.get("hold_jid_ad") or ()]
    out += [("ad_predecessor_jobs", p, ()) for p in job.get("ad_predecessors") or () if p in live]
    out.append(("binding", job.get("binding") or "NONE", ()))
    return out


def _write_job(w, entry, state, snap, opts, live):
    w.open("job_list", (("state", state),))
    for tag, text, pairs in job_elements(entry, snap, opts, live):
        w.leaf(tag, text, pairs)
    w.close()


def _write_queue(w, qrow, entries, snap, opts, live):
    w.open("Queue-List")
    w.leaf("name", qrow["name"])
    w.leaf("qtype", qstat_queues.qtype(qrow))
    for tag, key in (("slots_used", "used"), ("slots_resv", "resv"), ("slots_total", "slots")):
        w.leaf(tag, qrow.get(key, 0))
    load = qstat_queues.load_value(qrow, snap)
    if load is not None:
        w.leaf("load_avg", _d5(load))
    if qrow.get("arch"):
        w.leaf("arch", qrow["arch"])
    states = qstat_queues.states(qrow, snap)
    if states:
        w.leaf("state", states)
    if "a" in opts.explain and "a" in states:
        for line in qstat_queues.alarm_reasons(qrow, snap, "load"):
            w.leaf("load-alarm-reason", line)
    if "A" in opts.explain and "A" in states:
        for line in qstat_queues.alarm_reasons(qrow, snap, "suspend"):
            w.leaf("suspend-alarm-reason", line)
    for letter in "cE":                 # (the queue's messages, as Grid Engine's <message>)
        if letter in opts.explain and letter in states:
            for line in (qrow.get("messages") or {}).get(letter, []):
                w.leaf("message", line)
    if opts.full_resources is not None:
        for dom, name, value in qstat_queues.resources(qrow, snap, opts.full_resources):
            w.leaf("resource", value, (("name", name), ("type", dom)))
    for entry in entries:
        _write_job(w, entry, "running", snap, opts, live)
    w.close()


def job_info_xml(report, snap, opts, live):
    w = xmlout.Writer("job_info", xmlout.QSTAT_XSD)
    w.open("queue_info")
    if report.queues is not None:
        for qrow, entries in report.queues:
            _write_queue(w, qrow, entries, snap, opts, live)
    for entry in report.running:
        _write_job(w, entry, "running", snap, opts, live)
    w.close()
    w.open("job_info")
    for entry in report.pending:
        _write_job(w, entry, "pending", snap, opts, live)
    for entry in report.finished:
        _write_job(w, entry, "zombie", snap, opts, live)
    w.close()
    return w.text()


def cluster_xml(summary, opts):
    w = xmlout.Writer("job_info", xmlout.QSTAT_XSD)
    names = {"s": "suspend_manual", "A": "suspend_threshold", "S": "suspend_on_subordinate",
             "C": "suspend_calendar", "u": "unknown", "a": "load_alarm", "d": "disabled_manual",
             "D": "disabled_calendar", "c": "ambiguous", "o": "orphaned", "E": "error"}
    for info in summary:
        w.open("cluster_queue_summary")
        w.leaf("name", info["name"])
        if info["load"] is not None:
            w.leaf("load", _d5(info["load"]))
        for key in ("used", "resv", "available", "total", "temp_disabled", "manual_intervention"):
            w.leaf(key, info[key])
        if opts.ext:
            for letter in qstat_queues.EXT_STATES:
                w.leaf(names[letter], info["by_state"][letter])
        w.close()
    return w.text()


# ---------------------------------------------------------------- JSON

def _json_requests(entry, snap, live):
    job = entry.job
    req = {"full_name": job.get("name", ""), "hard": dict(job.get("hard") or {}),
           "soft": dict(job.get("soft") or {}), "hard_queues": list(job.get("hard_queues") or []),
           "soft_queues": list(job.get("soft_queues") or []), "master_queues": list(job.get("masterq") or []),
           "predecessors_requested": [str(p) for p in job.get("hold_jid") or ()],
           "predecessors": [p for p in job.get("predecessors") or () if p in live],
           "binding": job.get("binding") or "NONE", "pe": None, "granted_pe": None}
    pe = qstat_text.requested_pe(entry.row, job)
    if pe:
        req["pe"] = {"name": pe[0], "range": qstat_text.pe_range(pe)}
        if entry.running:
            req["granted_pe"] = {"name": qstat_text.granted_pe(entry.row, pe),
                                 "slots": sum(g[2] for g in entry.row.get("granted") or [])}
    return req


def job_json(entry, section, snap, opts, live):
    s, job, row = entry.scores, entry.job, entry.row
    obj = {"job_number": entry.id, "priority": round(s["prio"], 5), "name": job.get("name", ""),
           "owner": job.get("owner", ""), "state": entry.state, "section": section,
           "submit_time": int(job.get("submit_time") or row["time"]),
           "start_time": int(row["time"]) if entry.running else None,
           "queue": entry.queue or None, "slots": entry.slots,
           "tasks": entry.label if entry.array and entry.label else None}
    if "t" in opts.group:
        obj["master"] = entry.master
    if opts.pri or opts.urg or opts.ext:
        obj.update({k: round(s[k], 5) for k in ("nurg", "npprior", "ntckts")})
        obj.update({k: round(s[k], 3) for k in ("urg", "rrcontr", "wtcontr", "dlcontr")})
        obj.update(ppri=s["ppri"], deadline=int(job["deadline"]) if job.get("deadline") else None)
    if opts.ext:
        total, otckt, ftckt, stckt = s.get("tickets", (0.0, 0.0, 0.0, 0.0))
        obj.update(project=job.get("project") or None, department=job.get("department") or None,
                   tickets=round(total), override_tickets=int(job.get("override_tickets") or 0),
                   otickets=round(otckt), ftickets=round(ftckt), stickets=round(stckt),
                   share=round(s.get("share", 0.0), 5))
    if opts.resources and entry.print_id:
        obj["requests"] = _json_requests(entry, snap, live)
    return obj


def _queue_json(qrow, snap, opts):
    states = qstat_queues.states(qrow, snap)
    obj = {"name": qrow["name"], "queue": qrow["queue"], "host": qrow["host"],
           "qtype": qstat_queues.qtype(qrow), "slots_used": qrow["used"],
           "slots_resv": qrow.get("resv", 0), "slots_total": qrow["slots"],
           "load_avg": qstat_queues.load_value(qrow, snap), "arch": qrow.get("arch") or None,
           "states": states}
    if opts.explain:
        obj["explain"] = qstat_queues.explain_lines(qrow, snap, opts.explain)
    if opts.full_resources is not None:
        obj["resources"] = [{"type": d, "name": n, "value": v}
                            for d, n, v in qstat_queues.resources(qrow, snap, opts.full_resources)]
    return obj


def job_info_json(report, snap, opts, live):
    doc = {}
    jobs = []
    if report.queues is not None:
        doc["queues"] = [_queue_json(qrow, snap, opts) for qrow, _ in report.queues]
        for _, entries in report.queues:
            jobs += [job_json(e, "running", snap, opts, live) for e in entries]
    jobs += [job_json(e, "running", snap, opts, live) for e in report.running]
    jobs += [job_json(e, "pending", snap, opts, live) for e in report.pending]
    jobs += [job_json(e, "finished", snap, opts, live) for e in report.finished]
    doc["jobs"] = jobs
    import json
    return json.dumps(doc, indent=2) + "\n"


def cluster_json(summary, opts):
    rows = []
    for info in summary:
        row = {k: info[k] for k in ("name", "load", "used", "resv", "available", "total",
                                    "temp_disabled", "manual_intervention")}
        if opts.ext:
            row["states"] = dict(info["by_state"])
        rows.append(row)
    import json
    return json.dumps({"cluster_queues": rows}, indent=2) + "\n"
