"""qhost -xml (Grid Engine's layout) and qhost -json.

XML: ``<qhost>`` with one ``<host name='...'>`` per host (``global`` first)
holding ``<hostvalue>`` elements, then with -F ``<resourcevalue>``, with -q
``<queue>`` and with -j ``<job>`` elements, attributes in single quotes and
the one-blank indentation Grid Engine uses. JSON: ``{"hosts": [...]}``, each
host with its values, resources, queues and jobs (see qhost(1)).
"""

import json

from gridtools.cli.sge import qhost, qstat_queues, qstatus
from gridtools.cli.sge.xmlout import QHOST_XSD, escape, escape_attr

_ORDER = ("arch_string", "num_proc", "m_socket", "m_core", "m_thread", "load_avg", "mem_total",
          "mem_used", "swap_total", "swap_used")
_TOPOLOGY = ("m_socket", "m_core", "m_thread")


def _value(tag, pairs, text, indent="   "):
    attrs = "".join(f" {k}='{escape_attr(v)}'" for k, v in pairs)
    return f"{indent}<{tag}{attrs}>{escape(text)}</{tag}>"


def _queue_xml(q, snap):
    name = q["queue"]
    values = (("qtype_string", qstat_queues.qtype(q)), ("slots_used", q["used"]), ("slots", q["slots"]),
              ("slots_resv", q.get("resv", 0)), ("state_string", qstat_queues.states(q, snap)))
    lines = [f" <queue name='{escape_attr(name)}'>"]
    lines += [_value("queuevalue", (("qname", name), ("name", k)), v) for k, v in values]
    return lines + [" </queue>"]


def _job_xml(row, job, queue, master, _shown=True, with_queue=True):
    """One ``<job>`` element per job slot, every value given (also on SLAVE slots): the
    queue instance's name again as queue_name when the job is not under a ``<queue>``,
    then pe_master and, for an array task, taskid, in Grid Engine's order."""
    jid = row["id"]
    values = [("priority", f"'{row.get('prio', 0.0):f}'"), ("qinstance_name", queue),
              ("job_name", job.get("name", "")), ("job_owner", job.get("owner", "")),
              ("job_state", row["state"]), ("start_time", int(row["time"]))]
    if with_queue:
        values.append(("queue_name", queue))
    values.append(("pe_master", master))
    if job.get("array"):
        values.append(("taskid", qstatus.task_label(row)))
    lines = [f" <job name='{jid}'>"]
    lines += [_value("jobvalue", (("jobid", jid), ("name", k)), v) for k, v in values]
    return lines + [" </job>"]


def _host_xml(name, cols, snap, opts):
    lines = [f" <host name='{escape_attr(name)}'>"]
    # -ncb: no host topology values (m_socket, m_core, m_thread), as in the table
    lines += [_value("hostvalue", (("name", k),), cols[k]) for k in _ORDER
              if not (opts.ncb and k in _TOPOLOGY)]
    if opts.states:
        state = "-" if name == "global" else qhost.host_state(name, snap)
        lines.append(_value("hostvalue", (("name", "state"),), state))
    if opts.resources is not None:
        lines += [_value("resourcevalue", (("name", n), ("dominance", d)), v)
                  for d, n, v in qhost.resources(name, snap, opts.resources)]
    if name != "global" and (opts.queues or opts.jobs):
        # each queue instance, then the jobs in it, as Grid Engine's qhost walks them
        queues = {q["name"]: q for q in qhost.host_queues(name, snap)}
        per_queue = qhost.queue_jobs(name, snap, opts) if opts.jobs else [(n, []) for n in queues]
        for qname, items in per_queue:
            if opts.queues and qname in queues:
                lines += _queue_xml(queues[qname], snap)
            for item in items:
                lines += _job_xml(*item, with_queue=not opts.queues)
    return lines + [" </host>"]


def as_xml(snap, opts):
    lines = ["<?xml version='1.0'?>", f'<qhost xmlns:xsd="{QHOST_XSD}">']
    lines += _host_xml("global", qhost.GLOBAL_COLUMNS, snap, opts)
    for host in qhost.host_names(snap, opts):
        lines += _host_xml(host, qhost.host_columns(host, snap), snap, opts)
    lines.append("</qhost>")
    return "\n".join(lines) + "\n"


def _numbers(name, snap):
    """The host table values as numbers: counts, load average and memory in bytes."""
    from gridtools.cli.sge import loadvalues
    load = (snap.get("hosts") or {}).get(name) or {}
    obj = {"arch": load.get("arch")}
    for key in ("num_proc", "m_socket", "m_core", "m_thread"):
        obj[key] = int(float(load[key])) if key in load else None
    obj["load_avg"] = float(load["load_avg"]) if "load_avg" in load else None
    for key in ("mem_total", "mem_used", "swap_total", "swap_used"):
        value = loadvalues.to_number(load[key]) if key in load else None
        obj[key] = int(value) if value is not None else None
    return obj


def _host_json(name, snap, opts):
    obj = {"name": name}
    obj.update(_numbers(name, snap))
    if opts.states:
        obj["state"] = None if name == "global" else qhost.host_state(name, snap)
    if opts.resources is not None:
        obj["resources"] = [{"type": d, "name": n, "value": v}
                            for d, n, v in qhost.resources(name, snap, opts.resources)]
    if opts.queues and name != "global":
        obj["queues"] = [{"name": q["queue"], "qtype": qstat_queues.qtype(q), "slots_used": q["used"],
                          "slots": q["slots"], "slots_resv": q.get("resv", 0),
                          "states": qstat_queues.states(q, snap)} for q in qhost.host_queues(name, snap)]
    if opts.jobs and name != "global":
        obj["jobs"] = [{"job_number": row["id"], "priority": round(row.get("prio", 0.0), 6),
                        "queue": queue, "name": job.get("name", ""), "owner": job.get("owner", ""),
                        "state": row["state"], "start_time": int(row["time"]),
                        "tasks": qstatus.task_label(row) or None, "master": master}
                       for row, job, queue, master in qhost.host_jobs(name, snap, opts)]
    return obj


def as_json(snap, opts):
    hosts = [_host_json(h, snap, opts) for h in ["global"] + qhost.host_names(snap, opts)]
    return json.dumps({"hosts": hosts}, indent=2) + "\n"
