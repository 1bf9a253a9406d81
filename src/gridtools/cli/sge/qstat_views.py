"""qstat views beyond the plain table: queues (-f, -F, -explain), -g c/d/t,
-r, -ext, -pri, -urg, and the -xml and -json documents of all of them.

``show``, ``as_xml`` and ``as_json`` build one report (``qstat_report``) and
render it with ``qstat_text`` or ``qstat_xml``.
"""

from gridtools.cli.sge import qstat_queues, qstat_report, qstat_select, qstat_text, qstat_xml


def live_ids(snap):
    """Ids of jobs that are still pending or running (for predecessor lists)."""
    return {r["id"] for r in snap["rows"] if r["state"] != "z"}


def _queue_names(snap):
    return [q["name"] for q in snap.get("queues") or ()]


def _queue_block(qrow, entries, snap, opts, lay, live):
    lines = [lay.full_rule(),
             qstat_text.queue_line(qrow, lay, qstat_queues.qtype(qrow),
                                   qstat_queues.load_value(qrow, snap), qstat_queues.states(qrow, snap))]
    if opts.explain:
        lines += ["\t" + line for line in qstat_queues.explain_lines(qrow, snap, opts.explain)]
    if opts.full_resources is not None:
        lines += [f"\t{dom}:{name}={value}"
                  for dom, name, value in qstat_queues.resources(qrow, snap, opts.full_resources)]
    lines += _job_lines(entries, snap, opts, lay, live)
    return lines


def _job_lines(entries, snap, opts, lay, live):
    lines = []
    for entry in entries:
        lines.append(qstat_text.job_line(entry, lay))
        if opts.resources and entry.print_id:
            lines += qstat_text.resource_lines(entry, snap, live)
    return lines


def full_listing(report, snap, opts, lay, live):
    lines = []
    for i, (qrow, entries) in enumerate(report.queues):
        if i == 0:
            lines.append(qstat_text.queue_header(lay))
        lines += _queue_block(qrow, entries, snap, opts, lay, live)
    if report.pending:
        lines += qstat_text.banner(lay, qstat_text.PENDING_BANNER)
        lines += _job_lines(report.pending, snap, opts, lay, live)
    if report.finished:
        lines += qstat_text.banner(lay, qstat_text.FINISHED_BANNER)
        lines += _job_lines(report.finished, snap, opts, lay, live)
    return lines


def job_listing(report, snap, opts, lay, live):
    entries = report.jobs()
    if not entries:
        return []
    return [lay.header(), lay.rule()] + _job_lines(entries, snap, opts, lay, live)


def _write(out, lines):
    if lines:
        out.write("\n".join(lines) + "\n")


def show(snap, opts, out):
    if "c" in opts.group:
        return cluster(snap, opts, out)
    report = qstat_report.build(snap, opts)
    lay = qstat_text.Layout(opts, _queue_names(snap))
    live = live_ids(snap)
    if report.queues is not None:
        _write(out, full_listing(report, snap, opts, lay, live))
    else:
        _write(out, job_listing(report, snap, opts, lay, live))
    return 0


def cluster(snap, opts, out, fmt="text"):
    summary = qstat_queues.cluster_summary(qstat_select.selected_queues(snap, opts), snap)
    if fmt == "xml":
        out.write(qstat_xml.cluster_xml(summary, opts))
        return 0
    if fmt == "json":
        out.write(qstat_xml.cluster_json(summary, opts))
        return 0
    qlen = max([30] + [len(n) for n in _queue_names(snap)])
    header, rule = qstat_text.cluster_header(qlen, opts.ext)
    _write(out, [header, rule] + [qstat_text.cluster_line(i, qlen, opts.ext) for i in summary])
    return 0


def as_xml(snap, opts, out):
    if "c" in opts.group:
        return cluster(snap, opts, out, "xml")
    report = qstat_report.build(snap, opts)
    out.write(qstat_xml.job_info_xml(report, snap, opts, live_ids(snap)))
    return 0


def as_json(snap, opts, out):
    if "c" in opts.group:
        return cluster(snap, opts, out, "json")
    report = qstat_report.build(snap, opts)
    out.write(qstat_xml.job_info_json(report, snap, opts, live_ids(snap)))
    return 0
