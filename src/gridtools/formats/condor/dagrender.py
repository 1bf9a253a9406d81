"""The text of a Dag: DAG file statements that ``dag.parse_dag`` reads back to
the same Dag (splices flattened, INCLUDEs in place, the submit descriptions
written in the DAG file written there again)."""

from gridtools.formats.condor.dag import NodeKind
from gridtools.formats.condor.dagdesc import render_body

_KEYWORDS = {NodeKind.JOB: "JOB", NodeKind.FINAL: "FINAL", NodeKind.SUBDAG: "SUBDAG EXTERNAL",
             NodeKind.SERVICE: "SERVICE", NodeKind.PROVISIONER: "PROVISIONER"}


def _node_lines(node):
    """A node's line, or the lines of a node with its own submit description."""
    options = ["DIR", node.directory] if node.directory else []
    options += ["NOOP"] if node.noop else []
    options += ["DONE"] if node.done else []
    if node.description is not None:
        return render_body(f"{_KEYWORDS[node.kind]} {node.name}", node.description, " ".join(options))
    return [" ".join([_KEYWORDS[node.kind], node.name, node.submit_file] + options)]


def _quote_var(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _node_options(node):
    lines = []
    if node.retry:
        unless = f" UNLESS-EXIT {node.retry_unless_exit}" if node.retry_unless_exit is not None else ""
        lines.append(f"RETRY {node.name} {node.retry}{unless}")
    for placed, found in (("PREPEND ", node.prepend_vars), ("APPEND ", node.append_vars), ("", node.vars)):
        if found:
            pairs = " ".join(f"{k}={_quote_var(v)}" for k, v in found.items())
            lines.append(f"VARS {node.name} {placed}{pairs}")
    for script in node.scripts.values():
        defer = f"DEFER {script.defer_status} {script.defer_time} " \
            if script.defer_status is not None else ""
        debug = f"DEBUG {script.debug_file} {script.debug_streams} " if script.debug_file else ""
        lines.append(f"SCRIPT {defer}{debug}{script.when.value} {node.name} {script.command}")
    if node.priority:
        lines.append(f"PRIORITY {node.name} {node.priority}")
    if node.abort_on is not None:
        ret = f" RETURN {node.abort_return}" if node.abort_return is not None else ""
        lines.append(f"ABORT-DAG-ON {node.name} {node.abort_on}{ret}")
    if node.category:
        lines.append(f"CATEGORY {node.name} {node.category}")
    if node.save_file:
        lines.append(f"SAVE_POINT_FILE {node.name} {node.save_file}")
    return lines


def render_dag(dag):
    """DAG file text that parses back to the same Dag (splices flattened)."""
    lines = []
    for name, text in dag.descriptions.items():
        lines += render_body(f"SUBMIT-DESCRIPTION {name}", text)
    nodes = list(dag.nodes.values()) + list(dag.services.values())
    for node in nodes:
        lines += _node_lines(node)
    for node in nodes:
        lines += _node_options(node)
    for parent in dag.nodes:
        kids = [c for c in dag.nodes if (parent, c) in dag.edges]
        if kids:
            lines.append(f"PARENT {parent} CHILD {' '.join(kids)}")
    lines += [f"MAXJOBS {cat} {limit}" for cat, limit in dag.maxjobs.items()]
    lines += [f"CONFIG {dag.config}"] if dag.config else []
    lines += [f"SET_JOB_ATTR {name} = {value}" for name, value in dag.job_attrs.items()]
    lines += [f"ENV GET {' '.join(dag.env_get)}"] if dag.env_get else []
    lines += [f"ENV SET {name}={value}" for name, value in dag.env_set.items()]
    lines += [f"JOBSTATE_LOG {dag.jobstate_log}"] if dag.jobstate_log else []
    status = dag.status_file
    if status is not None:
        lines.append(f"NODE_STATUS_FILE {status.path} {status.min_update}"
                     + (" ALWAYS-UPDATE" if status.always else ""))
    dot = dag.dot
    if dot is not None:
        lines.append(f"DOT {dot.path} {'UPDATE' if dot.update else 'DONT-UPDATE'} "
                     f"{'OVERWRITE' if dot.overwrite else 'DONT-OVERWRITE'}"
                     + (f" INCLUDE {dot.include}" if dot.include else ""))
    return "".join(line + "\n" for line in lines)
