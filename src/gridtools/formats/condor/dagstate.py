"""The running state of a DAG: rescue DAGs and which nodes may run next.

A partial rescue DAG (``<dagfile>.rescueNNN``) holds a comment header, a
``DONE name`` line per finished node and a ``RETRY`` line per node with
retries; read as DAG statements over the original DAG file it lets a new run
resume where the last one stopped (a DONE line that names no node of the DAG
is a warning HTCondor's DAGMan makes fatal at DAGMAN_USE_STRICT 1, its default). ``ready_nodes`` is the pure choice a DAG runner makes after every event.
"""

import os
import re

from gridtools.formats.condor.dag import NodeKind

# --------------------------------------------------------------- rescue DAGs

RESCUE_VERSION = "2.0.1"


def rescue_base(dag_file, multi=False):
    """What the rescue DAGs of a run are named after: the DAG file, or for several DAG
    files run as one, the first with ``_multi`` (``a.dag_multi.rescue001``), as
    HTCondor's DAGMan names them."""
    return dag_file + "_multi" if multi else dag_file


def rescue_name(dag_file, number):
    """The name of the NUMBERth rescue DAG of ``dag_file``."""
    return f"{dag_file}.rescue{number:03d}"


def latest_rescue(dag_file, names):
    """The highest-numbered rescue DAG of ``dag_file`` among ``names``
    (file names), and its number; (None, 0) when there is none."""
    pattern = re.compile(re.escape(dag_file) + r"\.rescue(\d{3})$")
    found = [(int(m.group(1)), name) for name in names for m in [pattern.match(name)] if m]
    if not found:
        return None, 0
    number, name = max(found)
    return name, number


def render_rescue(dag_file, dag, done, failed, created, retries=None, keep_retries=False):
    """A partial rescue DAG: a comment header, then for each node (in the DAG's order)
    a DONE line when it finished and a RETRY line when it has retries, as HTCondor's
    DAGMan writes them (the count reset to the node's full RETRY; with ``keep_retries``,
    DAGMAN_RESET_RETRIES_UPON_RESCUE = False, the retries it has left, after a comment
    saying how many were performed). ``retries``: node -> (retries performed, its last
    return value) of the nodes that ran; a failed node whose UNLESS-EXIT value stopped
    its retries gets a comment saying so. Run with the original file it resumes there.
    ``created`` is a time stamp text (UTC)."""
    retries = retries or {}
    failed, done = set(failed), set(done)
    failed_names = [n for n in dag.nodes if n in failed]   # (SERVICE nodes are never written)
    done_names = [n for n in dag.nodes if n in done or dag.nodes[n].done]
    lines = ["# Rescue DAG file, created after running",
             f"#   the {dag_file} DAG file",
             f"# Created {created} UTC",
             f"# Rescue DAG version: {RESCUE_VERSION} (partial)",
             "#",
             f"# Total number of Nodes: {len(dag.nodes)}",
             f"# Nodes premarked DONE: {len(done_names)}",
             f"# Nodes that failed: {len(failed_names)}",
             "#   " + ",".join(failed_names + ["<ENDLIST>"]),
             ""]
    for name, node in dag.nodes.items():
        if name in done_names and node.kind is not NodeKind.FINAL:
            lines.append(f"DONE {name}")
        if node.retry <= 0:
            continue
        performed, returned = retries.get(name, (0, None))
        performed = min(performed, node.retry)
        if name in failed and performed < node.retry and node.retry_unless_exit is not None \
                and returned == node.retry_unless_exit:
            lines.append(f"# {performed} of {node.retry} retries performed; remaining attempts "
                         f"aborted after node returned {returned}")
        elif keep_retries:
            lines.append(f"# {performed} of {node.retry} retries already performed; "
                         f"{node.retry - performed} remaining")
        count = node.retry - performed if keep_retries else node.retry
        unless = "" if node.retry_unless_exit is None else f" UNLESS-EXIT {node.retry_unless_exit}"
        lines.append(f"RETRY {name} {count}{unless}")
    return "".join(line + "\n" for line in lines)


def apply_rescue(dag, text, source="rescue dag", read=None):
    """Read a partial rescue DAG (or a save point file) over ``dag``, the DAG read from
    its original files: its lines are ordinary DAG statements applied on top of those,
    as HTCondor's DAGMan reads them. A DONE line marks its node done (one the DAG does
    not have, or not of a kind that may be done, is a warning of strictness 1 in
    ``dag.notes``: the rescue DAG is refused when that is fatal); a RETRY line sets the
    node's retries; a JOB line naming a node the DAG has is an error. ``read(path)``
    returns the text of a file it includes."""
    from gridtools.formats.condor.dag import parse_dag
    return parse_dag(text, source=source, read=read, into=dag)


# ------------------------------------------------------------ save point files

#: the folder beside the DAG file that holds the save files named without a folder
SAVE_FOLDER = "save_files"


def save_path(dag_file, name):
    """Where SAVE_POINT_FILE ``name`` of ``dag_file`` is written: a name without a
    folder in SAVE_FOLDER beside the DAG file, any other relative to the DAG's folder
    (DAGMan's working directory), as HTCondor's DAGMan places them."""
    if os.path.isabs(name):
        return name
    folder = os.path.dirname(os.path.abspath(dag_file))
    if os.sep not in name:
        return os.path.join(folder, SAVE_FOLDER, name)
    return os.path.normpath(os.path.join(folder, name))


def load_save_path(dag_file, name, cwd):
    """The save file ``condor_submit_dag -load_save name`` reads: a name with a folder
    relative to ``cwd`` (where condor_submit_dag runs), a bare name in SAVE_FOLDER
    beside the DAG file."""
    if os.sep not in name:
        return os.path.join(os.path.dirname(os.path.abspath(dag_file)), SAVE_FOLDER, name)
    return os.path.normpath(os.path.join(cwd, name))


# -------------------------------------------------------------- what may run

def ready_nodes(dag, done=(), failed=(), running=(), by_category=True, provisioned=True):
    """Names of the nodes that may start now, best first (higher PRIORITY,
    then file order): every parent done, not itself done, failed or
    running, and (``by_category``) its category under MAXJOBS. The FINAL node
    is ready once every other node is done, failed or can no longer run. A
    PROVISIONER node comes first: until it is ``provisioned`` (or done) it is the
    only node that may start. SERVICE nodes (``Dag.services``) are never here."""
    done = set(done) | {n for n, node in dag.nodes.items() if node.done}
    failed, running = set(failed), set(running)
    provisioner = next((n for n, node in dag.nodes.items() if node.kind is NodeKind.PROVISIONER), None)
    if provisioner is not None and not provisioned and provisioner not in done:
        return [] if provisioner in failed | running else [provisioner]
    busy = {}
    for name in running:
        category = dag.nodes[name].category
        busy[category] = busy.get(category, 0) + 1
    candidates = []
    for order, (name, node) in enumerate(dag.nodes.items()):
        if name in done | failed | running or node.kind in (NodeKind.FINAL, NodeKind.PROVISIONER):
            continue
        if dag.parents(name) <= done:
            candidates.append((-node.priority, order, name))
    names = []
    for _, _, name in sorted(candidates):
        category = dag.nodes[name].category
        limit = dag.maxjobs.get(category) if category and by_category else None
        if limit is not None and busy.get(category, 0) >= limit:
            continue
        busy[category] = busy.get(category, 0) + 1
        names.append(name)
    final = next((n for n, node in dag.nodes.items() if node.kind is NodeKind.FINAL), None)
    if final and final not in done | failed | running and not names and not running \
            and not (set(dag.nodes) - done - failed - unreachable(dag, failed) - {final}):
        names.append(final)
    return names


def unreachable(dag, failed):
    """Nodes that can never run because an ancestor failed."""
    blocked, frontier = set(), set(failed)
    while frontier:
        name = frontier.pop()
        for child in dag.children(name):
            if child not in blocked:
                blocked.add(child)
                frontier.add(child)
    return blocked


def should_retry(node, attempts, exit_code):
    """Whether a failed node runs again after ``attempts`` runs so far."""
    if node.retry_unless_exit is not None and exit_code == node.retry_unless_exit:
        return False
    return attempts <= node.retry


def abort_status(node, exit_code):
    """The DAG's exit status when this node's exit aborts it, else None."""
    if node.abort_on is None or exit_code != node.abort_on:
        return None
    return exit_code if node.abort_return is None else node.abort_return


# ------------------------------------------------------------ script macros

def exit_code_macros(codes):
    """The POST script macros a node's jobs' ends give: ``codes`` is each proc's exit
    status in proc order, None for a proc that left the queue without one (an abort
    event). $EXIT_CODES: the distinct statuses, ascending; $EXIT_CODE_COUNTS: each with
    how many procs had it (``0:2,1:1``); $EXIT_CODE_LIST: every proc's, an aborted one
    leaving its place empty; $JOB_ABORT_COUNT: the aborted procs."""
    counts = {}
    for code in codes:
        if code is not None:
            counts[code] = counts.get(code, 0) + 1
    return {"$EXIT_CODES": ",".join(str(c) for c in sorted(counts)),
            "$EXIT_CODE_COUNTS": ",".join(f"{c}:{counts[c]}" for c in sorted(counts)),
            "$EXIT_CODE_LIST": ",".join("" if c is None else str(c) for c in codes),
            "$JOB_ABORT_COUNT": str(sum(1 for c in codes if c is None))}
