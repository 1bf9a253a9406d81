"""The running state of a DAG: rescue DAGs and which nodes may run next.

A partial rescue DAG (``<dagfile>.rescueNNN``) holds a comment header and
one ``DONE name`` line per finished node; read together with the original
DAG file it lets a new run resume where the last one stopped (a DONE line
that names no node of the DAG is a warning HTCondor's DAGMan makes fatal at
DAGMAN_USE_STRICT 1, its default). ``ready_nodes`` is the pure choice a DAG runner makes after every event.
"""

import os
import re

from gridtools.formats.condor.dag import REGULAR, DagError, Effect, NodeKind, warn

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


def render_rescue(dag_file, dag, done, failed, created):
    """A partial rescue DAG: a comment header and a DONE line for every
    node that finished; run with the original file it resumes there.
    ``created`` is a time stamp text (UTC)."""
    failed, done = set(failed), set(done)
    failed = [n for n in dag.nodes if n in failed]         # (SERVICE nodes are never written)
    done = [n for n in dag.nodes if n in done or dag.nodes[n].done]
    lines = ["# Rescue DAG file, created after running",
             f"#   the {dag_file} DAG file",
             f"# Created {created} UTC",
             f"# Rescue DAG version: {RESCUE_VERSION} (partial)",
             "#",
             f"# Total number of Nodes: {len(dag.nodes)}",
             f"# Nodes premarked DONE: {len(done)}",
             f"# Nodes that failed: {len(failed)}",
             "#   " + ",".join(failed + ["<ENDLIST>"]),
             ""]
    lines += [f"DONE {name}" for name in done]
    return "".join(line + "\n" for line in lines)


def parse_rescue(text, source="rescue dag"):
    """(node name, line number) of each node a partial rescue DAG marks DONE."""
    done = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if words[0].upper() != "DONE" or len(words) != 2:
            raise DagError(f"ERROR: {source} (line {number}): a partial rescue DAG holds "
                           "only DONE lines")
        done.append((words[1], number))
    return done


def apply_rescue(dag, done, source="rescue dag"):
    """Mark the rescue DAG's nodes (``parse_rescue``) DONE in ``dag``; one the DAG does not
    have, or not of a kind that may be done, is a warning of strictness 1 in
    ``dag.notes`` (the rescue DAG is refused when that is fatal), as HTCondor's DAGMan."""
    for name, number in done:
        node = dag.nodes.get(name) or dag.services.get(name)
        if node is None:
            warn(dag, 1, f"Warning: {source} (line {number}): Unknown Node {name}", Effect.REFUSE)
        elif node.kind not in REGULAR:
            warn(dag, 1, f"{source} (line {number}): WARNING: {node.kind.value} node(s) can not be "
                         "referenced by the DONE command", Effect.REFUSE)
        else:
            node.done = True


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
